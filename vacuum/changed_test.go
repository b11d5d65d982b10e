package vacuum

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// generations is an in-memory store with GCS's generations: every write of a key gives it a
// new generation, listings report it as Object.Version, and DeleteIfUnchanged deletes a key
// only while it is at the generation given (storage.ErrChanged otherwise).
type generations struct {
	*mem.Store
	mu   sync.Mutex
	gen  map[string]int64
	next int64
	// listed, when set, replaces the version the listing reports for a key.
	listed map[string]string
	// calls records the API each delete went through.
	calls []string
}

var _ storage.ConditionalDeleter = (*generations)(nil)

func withGenerations(s *mem.Store) *generations {
	g := &generations{Store: s, gen: map[string]int64{}, next: 1000}
	for _, k := range s.Keys() {
		g.bump(k)
	}
	return g
}

func (g *generations) bump(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.next++
	g.gen[key] = g.next
}

// rewrite writes key again (same modification time, so that only the generation tells).
func (g *generations) rewrite(t *testing.T, key string, data []byte) {
	t.Helper()
	o, err := g.Store.Stat(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	g.Store.PutAt(key, data, o.ModTime)
	g.bump(key)
}

func (g *generations) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	return g.Store.Walk(ctx, prefix, func(o storage.Object) error {
		if !o.IsDir {
			g.mu.Lock()
			o.Version = strconv.FormatInt(g.gen[o.Key], 10)
			if v, ok := g.listed[o.Key]; ok {
				o.Version = v
			}
			g.mu.Unlock()
		}
		return fn(o)
	})
}

func (g *generations) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	g.mu.Lock()
	g.calls = append(g.calls, fmt.Sprintf("Delete%q", keys))
	g.mu.Unlock()
	return g.Store.Delete(ctx, keys)
}

func (g *generations) DeleteIfUnchanged(ctx context.Context, keys, versions []string) ([]storage.DeleteResult, error) {
	g.mu.Lock()
	g.calls = append(g.calls, fmt.Sprintf("DeleteIfUnchanged%q%q", keys, versions))
	g.mu.Unlock()
	res := make([]storage.DeleteResult, len(keys))
	for i, k := range keys {
		res[i].Key = k
		if versions[i] == "" {
			r, err := g.Store.Delete(ctx, []string{k})
			if err != nil {
				return nil, err
			}
			res[i] = r[0]
			continue
		}
		want, err := strconv.ParseInt(versions[i], 10, 64)
		if err != nil || want <= 0 {
			res[i].Err = fmt.Errorf("%q is not a generation; not deleted", versions[i])
			continue
		}
		g.mu.Lock()
		have, ok := g.gen[k]
		g.mu.Unlock()
		if _, err := g.Store.Stat(ctx, k); errors.Is(err, storage.ErrNotExist) || !ok {
			res[i].Gone = true
			continue
		}
		if have != want {
			res[i].Err = fmt.Errorf("%w: %s", storage.ErrChanged, k)
			continue
		}
		r, err := g.Store.Delete(ctx, []string{k})
		if err != nil {
			return nil, err
		}
		res[i] = r[0]
	}
	return res, nil
}

// TestExecuteKeepsAFileWrittenAgain: a candidate written again between planning and deleting
// (another generation) is kept with its checksum companion and its directory, reported as
// dropped (changed since listing), and neither deleted nor failed; the others go.
func TestExecuteKeepsAFileWrittenAgain(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.file("d/a.parquet", 30*day)
	tb.file("d/.a.parquet.crc", 30*day)
	tb.file("d/b.parquet", 30*day)
	tb.file("c.parquet", 30*day)
	tb.dir("d", 30*day)
	g := withGenerations(tb.store)
	plan, err := planOn(g, retain0)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Files.Len() != 3 || len(plan.Dirs) != 1 {
		t.Fatalf("planned %v %v, want 3 files and d", plan.Files, plan.Dirs)
	}
	for _, f := range plan.Files.MustCollect() {
		if f.Version == "" {
			t.Fatalf("planned %s without the version listed", f.Path)
		}
	}
	g.rewrite(t, "d/a.parquet", []byte("written again"))
	res, err := executeRun(context.Background(), g, plan, ExecOptions{BatchSize: 2, Concurrency: 1})
	if err != nil {
		t.Fatalf("a file written again must not fail the run: %v", err)
	}
	want := []Dropped{{Path: "d/a.parquet", Reason: DropChanged, Version: -1}}
	if diff := cmp.Diff(want, res.Dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if res.NumDeletedFiles != 2 || len(res.Failed) != 0 || res.NumDeletedDirectories != 0 || res.Status != StatusCompleted {
		t.Errorf("got deleted %d, failed %v, dirs %d, %s; want 2, none, 0, COMPLETED", res.NumDeletedFiles, res.Failed, res.NumDeletedDirectories, res.Status)
	}
	if res.SizeOfDeletedData != int64(len("data of d/b.parquet")+len("data of c.parquet")) {
		t.Errorf("got size deleted %d, want the two files deleted", res.SizeOfDeletedData)
	}
	for _, f := range res.Plan.Files.MustCollect() {
		if f.Path == "d/a.parquet" {
			t.Errorf("the result's plan still lists the kept file")
		}
	}
	wantKeys := []string{"_delta_log/00000000000000000000.json", "_delta_log/_last_vacuum_info", "d/", "d/.a.parquet.crc", "d/a.parquet"}
	if diff := cmp.Diff(wantKeys, keys(tb)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
	got, err := storage.ReadAll(context.Background(), tb.store, "d/a.parquet")
	if err != nil || string(got) != "written again" {
		t.Errorf("d/a.parquet reads %q, %v; want the new content", got, err)
	}
}

// TestExecuteWithoutConditionDeletesAFileWrittenAgain shows what the condition prevents: the
// same run through plain deletes removes the new content.
func TestExecuteWithoutConditionDeletesAFileWrittenAgain(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.file("a.parquet", 30*day)
	g := withGenerations(tb.store)
	plan, err := planOn(g, retain0)
	if err != nil {
		t.Fatal(err)
	}
	g.rewrite(t, "a.parquet", []byte("written again"))
	if _, err := Execute(context.Background(), plainDeletes{g}, plan, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.store.Stat(context.Background(), "a.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("got %v; without the condition the rewritten file is deleted (the test shows nothing otherwise)", err)
	}
}

// plainDeletes hides DeleteIfUnchanged.
type plainDeletes struct{ storage.Store }

// TestExecuteHostileVersions: what the executor sends for versions a listing should never
// give. An empty version (no version known: an inventory, LITE) is a plain delete; any other
// version is passed to the store as listed, never dropped, never rewritten into a
// precondition that could match everything ("0" means "absent" to GCS): the store refuses
// it, and the file is kept and reported failed.
func TestExecuteHostileVersions(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		wantCall      string
		deleted       bool
	}{
		{name: "empty", version: "", wantCall: `Delete["a.parquet"]`, deleted: true},
		{name: "zero", version: "0", wantCall: `DeleteIfUnchanged["a.parquet"]["0"]`},
		{name: "non-numeric", version: "etag-\"x\"", wantCall: `DeleteIfUnchanged["a.parquet"]["etag-\"x\""]`},
		{name: "negative", version: "-1", wantCall: `DeleteIfUnchanged["a.parquet"]["-1"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTable(t, tableSpec{})
			tb.file("a.parquet", 30*day)
			g := withGenerations(tb.store)
			g.listed = map[string]string{"a.parquet": tc.version}
			plan, err := planOn(g, retain0)
			if err != nil {
				t.Fatal(err)
			}
			g.calls = nil
			res, err := Execute(context.Background(), g, plan, ExecOptions{})
			if diff := cmp.Diff([]string{tc.wantCall}, g.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			_, statErr := tb.store.Stat(context.Background(), "a.parquet")
			if tc.deleted {
				if err != nil || !errors.Is(statErr, storage.ErrNotExist) || res.NumDeletedFiles != 1 {
					t.Errorf("got %v, stat %v, deleted %d; want deleted", err, statErr, res.NumDeletedFiles)
				}
				return
			}
			if !errors.Is(err, ErrPartialFailure) || statErr != nil || len(res.Failed) != 1 || len(res.Dropped) != 0 || res.NumDeletedFiles != 0 {
				t.Errorf("got %v, stat %v, failed %v, dropped %v, deleted %d; want kept and failed", err, statErr, res.Failed, res.Dropped, res.NumDeletedFiles)
			}
		})
	}
}

func planOn(s storage.Store, opts Options) (*Plan, error) {
	opts.Now = now
	p, err := NewPlanner(context.Background(), s, opts)
	if err != nil {
		return nil, err
	}
	return p.Plan(context.Background())
}

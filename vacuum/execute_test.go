package vacuum

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

func exec(t *testing.T, tb *table, plan *Plan) (*Result, error) {
	t.Helper()
	return executeRun(context.Background(), tb.store, plan, ExecOptions{BatchSize: 2, Concurrency: 3})
}

// executeRun executes plan as a real run does it (package run): the deletes, then the
// coverage of the log in _last_vacuum_info.
func executeRun(ctx context.Context, store storage.Store, plan *Plan, opts ExecOptions) (*Result, error) {
	res, err := Execute(ctx, store, plan, opts)
	if err != nil {
		return res, err
	}
	return res, RecordCoverage(ctx, store, res)
}

func keys(tb *table) []string {
	k := tb.store.Keys()
	sort.Strings(k)
	return k
}

func TestExecuteDeletesExactlyThePlan(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("live.parquet"))
	for _, k := range []string{"live.parquet", "a.parquet", "b.parquet", "c.parquet", "d/e.parquet", "d/f/g.parquet"} {
		tb.file(k, 30*day)
	}
	tb.file(".a.parquet.crc", 30*day)
	tb.file(".live.parquet.crc", 30*day)
	plan := tb.plan(retain0)
	res, err := exec(t, tb, plan)
	if err != nil {
		t.Fatal(err)
	}
	if res.NumDeletedFiles != 5 || res.NumDeletedDirectories != 0 || res.Status != StatusCompleted {
		t.Errorf("got %d files, %d dirs, %s; want 5, 0 (implicit directories have no marker), COMPLETED", res.NumDeletedFiles, res.NumDeletedDirectories, res.Status)
	}
	want := []string{".live.parquet.crc", "_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json", "_delta_log/_last_vacuum_info", "live.parquet"}
	if diff := cmp.Diff(want, keys(tb)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
}

func TestExecuteFileAlreadyGone(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.file("a.parquet", 30*day)
	tb.file("b.parquet", 30*day)
	plan := tb.plan(retain0)
	tb.store.Delete(context.Background(), []string{"a.parquet"})
	res, err := exec(t, tb, plan)
	if err != nil {
		t.Fatalf("a file already gone must not be an error: %v", err)
	}
	if res.NumDeletedFiles != 1 || res.NumAlreadyGone != 1 {
		t.Errorf("got deleted %d, gone %d; want 1, 1", res.NumDeletedFiles, res.NumAlreadyGone)
	}
}

// TestExecuteRecheck: a commit made between planning and deleting that references a
// candidate (a RESTORE re-adding an old file) keeps it [beyond].
func TestExecuteRecheck(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("a.parquet"))
	tb.commit(remove("a.parquet", 30*day))
	tb.file("a.parquet", 30*day)
	tb.file("p=1/b.parquet", 30*day)
	tb.file("c.parquet", 30*day)
	plan := tb.plan(retain0)
	if plan.Files.Len() != 3 {
		t.Fatalf("planned %v, want 3 files", plan.Files)
	}
	tb.commit(add("a.parquet"), add("p%3D1/b.parquet")) // RESTORE, the second spelled differently
	res, err := exec(t, tb, plan)
	if err != nil {
		t.Fatal(err)
	}
	want := []Dropped{{"a.parquet", DropReferenced, 3}, {"p=1/b.parquet", DropReferenced, 3}}
	sort.Slice(res.Dropped, func(i, j int) bool { return res.Dropped[i].Path < res.Dropped[j].Path })
	if diff := cmp.Diff(want, res.Dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if _, err := tb.store.Stat(context.Background(), "a.parquet"); err != nil {
		t.Errorf("re-added file was deleted: %v", err)
	}
	if _, err := tb.store.Stat(context.Background(), "c.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("c.parquet should be deleted: %v", err)
	}
}

func TestExecuteRecheckRefusesGapsAndNewFeatures(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.file("a.parquet", 30*day)
	plan := tb.plan(retain0)
	tb.commit(map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": []string{}, "writerFeatures": []string{"futureFeature"}}})
	if _, err := exec(t, tb, plan); err == nil {
		t.Error("a protocol change to an unsupported feature after planning must stop the run")
	}
	if _, err := tb.store.Stat(context.Background(), "a.parquet"); err != nil {
		t.Errorf("nothing may be deleted: %v", err)
	}
}

// failing fails deletes of chosen keys.
type failing struct {
	storage.Store
	fail map[string]bool
}

func (f *failing) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	var pass []string
	for _, k := range keys {
		if !f.fail[k] {
			pass = append(pass, k)
		}
	}
	got, err := f.Store.Delete(ctx, pass)
	byKey := map[string]storage.DeleteResult{}
	for _, r := range got {
		byKey[r.Key] = r
	}
	out := make([]storage.DeleteResult, len(keys))
	for i, k := range keys {
		if f.fail[k] {
			out[i] = storage.DeleteResult{Key: k, Err: errors.New("injected failure")}
			continue
		}
		out[i] = byKey[k]
	}
	return out, err
}

func TestExecutePartialFailure(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.file("d/a.parquet", 30*day)
	tb.file("d/.a.parquet.crc", 30*day)
	tb.file("d/b.parquet", 30*day)
	tb.dir("d", 30*day)
	plan := tb.plan(retain0)
	if diff := cmp.Diff([]string{"d"}, dirs(plan)); diff != "" {
		t.Fatalf("planned dirs (-want +got):\n%s", diff)
	}
	fs := &failing{Store: tb.store, fail: map[string]bool{"d/a.parquet": true}}
	res, err := Execute(context.Background(), fs, plan, ExecOptions{})
	if !errors.Is(err, ErrPartialFailure) {
		t.Fatalf("got %v, want ErrPartialFailure", err)
	}
	if res.Status != StatusFailed || res.NumDeletedFiles != 1 || len(res.Failed) != 1 || res.Failed[0].Path != "d/a.parquet" {
		t.Errorf("got status %s, deleted %d, failed %v", res.Status, res.NumDeletedFiles, res.Failed)
	}
	// The failed file keeps its checksum, and its directory is not attempted.
	want := []string{"_delta_log/00000000000000000000.json", "d/", "d/.a.parquet.crc", "d/a.parquet"}
	if diff := cmp.Diff(want, keys(tb)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
}

func TestExecuteDirectoryRefilled(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.dir("d", 30*day)
	tb.file("d/a.parquet", 30*day)
	plan := tb.plan(retain0)
	tb.file("d/new.parquet", 0) // a writer is busy here since the listing
	res, err := exec(t, tb, plan)
	if err != nil {
		t.Fatalf("a directory that is no longer empty is kept, not an error: %v", err)
	}
	if res.NumDeletedDirectories != 0 {
		t.Errorf("deleted %d directories, want 0", res.NumDeletedDirectories)
	}
	if _, err := tb.store.Stat(context.Background(), "d/new.parquet"); err != nil {
		t.Error(err)
	}
}

func TestExecuteCancelled(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.file("a.parquet", 30*day)
	plan := tb.plan(retain0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Execute(ctx, tb.store, plan, ExecOptions{}); err == nil {
		t.Error("got no error from a cancelled run")
	}
}

// batchingStore is a store that deletes in requests of size keys and records the size of each
// Delete call.
type batchingStore struct {
	storage.Store
	size  int
	mu    sync.Mutex
	calls []int
}

func (s *batchingStore) DeleteBatchSize() int { return s.size }

func (s *batchingStore) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	s.mu.Lock()
	s.calls = append(s.calls, len(keys))
	s.mu.Unlock()
	return s.Store.Delete(ctx, keys)
}

func TestExecuteBatchesAlignWithTheStore(t *testing.T) {
	for _, tc := range []struct {
		size int
		want []int // sizes of the Delete calls, sorted
	}{
		{256, []int{52, 1024, 1024}}, // Azure: 1000 rounded up to 4 × 256
		{1000, []int{100, 1000, 1000}},
		{1, []int{100, 1000, 1000}}, // deleting singly: the default
		{5000, []int{2100}},
	} {
		tb := newTable(t, tableSpec{})
		for i := range 2100 {
			tb.file(fmt.Sprintf("f%04d.parquet", i), 30*day)
		}
		plan := tb.plan(retain0)
		st := &batchingStore{Store: tb.store, size: tc.size}
		res, err := Execute(context.Background(), st, plan, ExecOptions{})
		if err != nil || res.NumDeletedFiles != 2100 {
			t.Fatalf("store batch %d: deleted %d, %v", tc.size, res.NumDeletedFiles, err)
		}
		slices.Sort(st.calls)
		if diff := cmp.Diff(tc.want, st.calls); diff != "" {
			t.Errorf("store batch %d: Delete calls (-want +got):\n%s", tc.size, diff)
		}
	}
}

// TestExecuteInterruptCountsEveryFile (issue 36, item 5): Ctrl-C 1.3 s into a run of 120 005
// files said "Stopped before 3718 files" when 115 723 were left: NotReached held the batches in
// flight only. Every planned file the run did not delete is in it now, the error says so in
// words ("context canceled" is Go's), and the progress ends "stopped", not "done".
func TestExecuteInterruptCountsEveryFile(t *testing.T) {
	for _, at := range []int{0, 100, 250} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			tb := newTable(t, tableSpec{})
			for i := range 1000 {
				tb.file(fmt.Sprintf("f-%04d.parquet", i), 30*day)
			}
			plan := tb.plan(retain0)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if at == 0 {
				cancel() // before the first delete
			}
			counters := NewCounters()
			res, err := Execute(ctx, &storagetest.CancelAfter{Store: tb.store, N: at, Cancel: cancel}, plan, ExecOptions{BatchSize: 50, Concurrency: 2, Counters: counters})
			var se *StoppedError
			if !errors.As(err, &se) || !errors.Is(err, context.Canceled) || res.Status != StatusFailed {
				t.Fatalf("got %v (%T), status %s; want a StoppedError of an interrupt", err, err, res.Status)
			}
			left := len(tb.store.Keys()) - 1 // the commit
			if got := len(res.NotReached); int64(got) != plan.NumFilesToDelete-res.NumDeletedFiles || got != left || len(res.Failed) != 0 {
				t.Errorf("deleted %d, not reached %d, failed %d, left on disk %d: of %d planned", res.NumDeletedFiles, got, len(res.Failed), left, plan.NumFilesToDelete)
			}
			if se.NotReached != int64(len(res.NotReached)) || se.Deleted != res.NumDeletedFiles {
				t.Errorf("the error counts %d deleted, %d not reached; the result %d, %d", se.Deleted, se.NotReached, res.NumDeletedFiles, len(res.NotReached))
			}
			if msg := err.Error(); strings.Contains(msg, "context canceled") || !strings.Contains(msg, "was interrupted after deleting") ||
				!strings.Contains(msg, fmt.Sprintf("%d files not deleted", len(res.NotReached))) {
				t.Errorf("message %q", msg)
			}
			if p := counters.Phase(); p != "stopped" {
				t.Errorf("progress ends %q, want stopped", p)
			}
		})
	}
}

// TestExecuteInterruptAfterTheLastDelete (issue 36, item 5): an interrupt that lands once every
// planned file is deleted has nothing left to stop: the run completes (it printed "Deleted
// 120005 files", then failed with "context canceled" and recorded VACUUM END FAILED).
func TestExecuteInterruptAfterTheLastDelete(t *testing.T) {
	tb := newTable(t, tableSpec{})
	for i := range 300 {
		tb.file(fmt.Sprintf("f-%04d.parquet", i), 30*day)
	}
	plan := tb.plan(retain0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	counters := NewCounters()
	res, err := Execute(ctx, &storagetest.CancelAfter{Store: tb.store, N: 300, Cancel: cancel}, plan, ExecOptions{BatchSize: 50, Concurrency: 2, Counters: counters})
	if err != nil || res.Status != StatusCompleted || res.NumDeletedFiles != 300 || len(res.NotReached) != 0 {
		t.Fatalf("got %v, status %s, deleted %d, not reached %d; want a completed run", err, res.Status, res.NumDeletedFiles, len(res.NotReached))
	}
	if ctx.Err() == nil {
		t.Fatal("the interrupt did not land: the test proves nothing")
	}
	if p := counters.Phase(); p != "done" {
		t.Errorf("progress ends %q", p)
	}
}

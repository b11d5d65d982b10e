package vacuum

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// onLocalDisk copies the table to a new local directory, with its modification times.
func onLocalDisk(t *testing.T, tb *table) (*local.Store, string) {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	for _, k := range tb.store.Keys() {
		full := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(k, "/")))
		o, err := tb.store.Stat(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(k, "/") {
			err = os.MkdirAll(full, 0o755)
		} else {
			var b []byte
			if b, err = storage.ReadAll(ctx, tb.store, k); err == nil {
				if err = os.MkdirAll(filepath.Dir(full), 0o755); err == nil {
					err = os.WriteFile(full, b, 0o644)
				}
			}
		}
		if err == nil {
			err = os.Chtimes(full, o.ModTime, o.ModTime)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return s, root
}

// A planned file whose folder was replaced by a file since the listing is a failure, not a
// file already gone: the run does not end COMPLETED on it.
func TestExecuteFolderReplacedByAFile(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.file("a.parquet", 30*day)
	tb.file("p=1/b.parquet", 30*day)
	tb.file("p=1/.b.parquet.crc", 30*day)
	s, root := onLocalDisk(t, tb)
	p, err := NewPlanner(context.Background(), s, Options{RetainHours: hours(0), DisableRetentionCheck: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if plan.Files.Len() != 2 {
		t.Fatalf("planned %v, want a.parquet and p=1/b.parquet", plan.Files.MustCollect())
	}
	if err := os.RemoveAll(filepath.Join(root, "p=1")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "p=1"), []byte("a file where the folder was"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Execute(context.Background(), s, plan, ExecOptions{})
	if !errors.Is(err, ErrPartialFailure) {
		t.Fatalf("got %v, want ErrPartialFailure", err)
	}
	if res.Status != StatusFailed || res.NumDeletedFiles != 1 || res.NumAlreadyGone != 0 || len(res.Failed) != 1 || res.Failed[0].Path != "p=1/b.parquet" {
		t.Errorf("got status %s, deleted %d, gone %d, failed %v; want FAILED, 1, 0, p=1/b.parquet", res.Status, res.NumDeletedFiles, res.NumAlreadyGone, res.Failed)
	}
	if b, err := os.ReadFile(filepath.Join(root, "p=1")); err != nil || string(b) != "a file where the folder was" {
		t.Errorf("the file p=1: %q, %v", b, err)
	}
}

// goneLiar reports chosen keys already gone, and deletes nothing for them.
type goneLiar struct {
	storage.Store
	liar map[string]bool
}

func (g *goneLiar) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	var pass []string
	for _, k := range keys {
		if !g.liar[k] {
			pass = append(pass, k)
		}
	}
	got, err := g.Store.Delete(ctx, pass)
	byKey := map[string]storage.DeleteResult{}
	for _, r := range got {
		byKey[r.Key] = r
	}
	out := make([]storage.DeleteResult, len(keys))
	for i, k := range keys {
		if g.liar[k] {
			out[i] = storage.DeleteResult{Key: k, Gone: true}
			continue
		}
		out[i] = byKey[k]
	}
	return out, err
}

// A file the store reports gone is counted gone only when it is not at its path: one that is
// there fails, keeps its checksum companion, and the run does not end COMPLETED.
func TestExecuteGoneIsChecked(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.file("a.parquet", 30*day)
	tb.file(".a.parquet.crc", 30*day)
	tb.file("b.parquet", 30*day)
	tb.file("c.parquet", 30*day)
	plan := tb.plan(retain0)
	tb.store.Delete(context.Background(), []string{"c.parquet"})
	res, err := Execute(context.Background(), &goneLiar{Store: tb.store, liar: map[string]bool{"a.parquet": true}}, plan, ExecOptions{})
	if !errors.Is(err, ErrPartialFailure) {
		t.Fatalf("got %v, want ErrPartialFailure", err)
	}
	if res.Status != StatusFailed || res.NumDeletedFiles != 1 || res.NumAlreadyGone != 1 || len(res.Failed) != 1 || res.Failed[0].Path != "a.parquet" {
		t.Errorf("got status %s, deleted %d, gone %d, failed %v; want FAILED, 1 (b), 1 (c), a.parquet", res.Status, res.NumDeletedFiles, res.NumAlreadyGone, res.Failed)
	}
	for _, k := range []string{"a.parquet", ".a.parquet.crc"} {
		if _, err := tb.store.Stat(context.Background(), k); err != nil {
			t.Errorf("%s: %v; want it kept", k, err)
		}
	}
}

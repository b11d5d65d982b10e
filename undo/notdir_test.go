package undo

import (
	"context"
	"errors"
	"fmt"
	"github.com/deltavacuum/deltavacuum/run"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// localWith returns a local store in a new directory holding files (relative path: content).
func localWith(t *testing.T, files map[string]string) (*local.Store, string) {
	t.Helper()
	root := t.TempDir()
	for p, data := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return s, root
}

// onDisk fails the test unless every file is on disk with its content.
func onDisk(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want it in place, unchanged", p, got, err)
		}
	}
}

// A trash folder that is a regular file (or a run folder of the trash that is one): no file is
// moved, none is counted gone, and each key fails with ErrNotDir. (Issue 25: the move's
// ENOTDIR on the target was read as the source missing, and both files were counted gone
// while they were still on disk.)
func TestTrashStoreTrashFolderIsAFile(t *testing.T) {
	for _, tc := range []struct{ name, file, folder string }{
		{"trash folder", "_t", "_t/r1/"},
		{"run folder", "_t/r1", "_t/r1/"},
		{"folder below the run folder", "_t/r1/p=1", "_t/r1/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"a.parquet": "aaa", "p=1/b.parquet": "bbb", tc.file: "a file, not a folder"}
			s, root := localWith(t, files)
			ts, err := run.NewTrashStore(s, tc.folder)
			if err != nil {
				t.Fatal(err)
			}
			keys := []string{"a.parquet", "p=1/b.parquet"}
			res, err := ts.Delete(context.Background(), keys)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				if tc.file == "_t/r1/p=1" && keys[i] == "a.parquet" {
					if r.Err != nil || r.Gone {
						t.Errorf("%s, whose way to the trash is clear: %+v; want moved", keys[i], r)
					}
					delete(files, "a.parquet")
					continue
				}
				if r.Key != keys[i] || r.Gone || !errors.Is(r.Err, storage.ErrNotDir) || errors.Is(r.Err, storage.ErrNotExist) {
					t.Errorf("Delete(%s) = %+v; want not Gone, an error wrapping ErrNotDir, not ErrNotExist", keys[i], r)
				}
			}
			onDisk(t, root, files)
		})
	}
}

// lostTarget is a store whose Move says ErrNotExist for a problem with the target, while the
// source is in place: what a backend that maps a target's error carelessly would answer.
type lostTarget struct{ *mem.Store }

func (s lostTarget) Move(ctx context.Context, from, to string) error {
	if _, err := s.Stat(ctx, from); err != nil {
		return err
	}
	return fmt.Errorf("%w: %s (its folder)", storage.ErrNotExist, to)
}

// A move that answers ErrNotExist counts the file gone only when it is not at its path: one
// still there is failed, and stays.
func TestTrashStoreConfirmsGone(t *testing.T) {
	ctx := context.Background()
	s := lostTarget{mem.New("mem://t")}
	if err := s.Put(ctx, "a.parquet", []byte("aaa")); err != nil {
		t.Fatal(err)
	}
	ts, err := run.NewTrashStore(s, "_t/r1/")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ts.Delete(ctx, []string{"a.parquet", "missing.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Gone || r.Err == nil {
		t.Errorf("a.parquet, at its path after a move that said ErrNotExist: %+v; want failed, not Gone", r)
	}
	if r := res[1]; !r.Gone || r.Err != nil {
		t.Errorf("missing.parquet: %+v; want Gone", r)
	}
	if b, err := storage.ReadAll(ctx, s, "a.parquet"); err != nil || string(b) != "aaa" {
		t.Errorf("a.parquet: %q, %v; want it in place", b, err)
	}
}

// testRun is the id of the runs these tests record.
const testRun = "20261201T153000Z-1a2b3c4d"

// writeTrashedRun records the completed run testRun, which moved files into its trash
// _t/testRun/.
func writeTrashedRun(t *testing.T, s storage.Store, files ...string) *run.Record {
	t.Helper()
	at, _ := run.IDTime(testRun)
	fin := at.Add(time.Minute)
	rec := &run.Record{ID: testRun, Table: s.Location(), Status: run.StatusCompleted, Complete: true, StartedAt: at, FinishedAt: &fin, Mode: "FULL",
		Recovery: storage.Recovery{Kind: storage.RecoveryNone, Detail: "test"}, Trash: "_t/" + testRun + "/"}
	for _, f := range files {
		rec.Files = append(rec.Files, run.Entry{Path: f, Size: 3})
	}
	rec.NumFiles, rec.Bytes = int64(len(files)), 3*int64(len(files))
	if err := run.WriteRecord(context.Background(), s, rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// A plain file where the folder of a trashed file was (or where a folder of its trashed copy
// is): the undo fails that file, says why, and moves nothing; it is neither "not restorable"
// nor "not in the trash any more".
func TestUndoFromTrashFileWhereFolderWas(t *testing.T) {
	const trash = "_t/" + testRun + "/"
	for _, tc := range []struct {
		name, path string
		files      map[string]string
	}{
		{"destination's folder", "a/x.parquet", map[string]string{trash + "a/x.parquet": "xxx", "a": "a file where the folder a/ was"}},
		{"destination's grandparent", "a/b/x.parquet", map[string]string{trash + "a/b/x.parquet": "xxx", "a": "a file where the folder a/ was"}},
		{"trashed copy's folder", "a/x.parquet", map[string]string{trash + "a": "a file where the trash's folder a/ is"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, root := localWith(t, tc.files)
			writeTrashedRun(t, s, tc.path)
			rep, err := Undo(ctx, s, testRun, Options{Snapshot: tableSnap(t, s)})
			if !errors.Is(err, ErrIncomplete) {
				t.Fatalf("undo: %v, want ErrIncomplete", err)
			}
			f := rep.Files[0]
			if f.Outcome != run.OutcomeFailed || rep.NumFailed != 1 || rep.NumLost != 0 {
				t.Errorf("%s: %+v (failed %d, not restorable %d); want failed", tc.path, f, rep.NumFailed, rep.NumLost)
			}
			if !strings.Contains(f.Why, "a file stands where a folder is needed") || !strings.Contains(f.Why, "nothing was moved") || strings.Contains(f.Why, "not in the trash") {
				t.Errorf("why: %q; want it to say that a file stands where a folder is needed, and that nothing was moved", f.Why)
			}
			onDisk(t, root, tc.files)
		})
	}
}

// A move back that answers ErrNotExist while the trashed copy is there: failed, not lost.
func TestUndoFromTrashConfirmsLost(t *testing.T) {
	ctx := context.Background()
	s := lostTarget{mem.New("mem://t")}
	rec := writeTrashedRun(t, s, "a/x.parquet", "b/y.parquet")
	if err := s.Put(ctx, rec.Trash+"a/x.parquet", []byte("xxx")); err != nil {
		t.Fatal(err)
	}
	rep, err := Undo(ctx, s, rec.ID, Options{Snapshot: tableSnap(t, s)})
	if !errors.Is(err, ErrIncomplete) {
		t.Fatalf("undo: %v, want ErrIncomplete", err)
	}
	if f := rep.Files[0]; f.Outcome != run.OutcomeFailed {
		t.Errorf("a/x.parquet, in the trash: %+v; want failed, not %q", f, f.Outcome)
	}
	if f := rep.Files[1]; f.Outcome != run.OutcomeLost {
		t.Errorf("b/y.parquet, in the trash no more: %+v; want %q", f, run.OutcomeLost)
	}
	if b, err := storage.ReadAll(ctx, s, rec.Trash+"a/x.parquet"); err != nil || string(b) != "xxx" {
		t.Errorf("the trashed copy: %q, %v; want it in the trash", b, err)
	}
}

// fileInTheWay is a store whose Restore finds a file where the folder of the key to restore
// was (as an Azure hierarchical-namespace account does).
type fileInTheWay struct{ *mem.Store }

func (s fileInTheWay) Restore(ctx context.Context, d storage.Deleted) error {
	return fmt.Errorf("restore %s: %w: %s, on the way to it, is a file", d.Key, storage.ErrNotDir, storage.Dir(d.Key))
}

// A restore from the store's recovery that meets a file where a folder must be: failed, with
// the reason, never "present" nor "not restorable".
func TestUndoFromRecoveryFileWhereFolderWas(t *testing.T) {
	ctx := context.Background()
	s := fileInTheWay{mem.New("mem://t")}
	at, _ := run.IDTime(testRun)
	rec := &run.Record{ID: testRun, Table: s.Location(), Status: run.StatusCompleted, Complete: true, StartedAt: at, Mode: "FULL",
		Recovery: storage.Recovery{Kind: storage.RecoverySoftDelete, Days: 7, Detail: "test"}, NumFiles: 1, Bytes: 3, Files: []run.Entry{{Path: "a/x.parquet", Size: 3}}}
	if err := run.WriteRecord(ctx, s, rec); err != nil {
		t.Fatal(err)
	}
	rep, err := Undo(ctx, s, testRun, Options{Snapshot: tableSnap(t, s)})
	if !errors.Is(err, ErrIncomplete) {
		t.Fatalf("undo: %v, want ErrIncomplete", err)
	}
	if f := rep.Files[0]; f.Outcome != run.OutcomeFailed || !strings.Contains(f.Why, "a file stands where a folder is needed") || !strings.Contains(f.Why, "nothing was moved") {
		t.Errorf("a/x.parquet: %+v; want failed, saying that a file stands where a folder is needed", f)
	}
}

package azure

import (
	"context"
	"errors"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
)

// notDirOnly fails the test unless err is storage.ErrNotDir, and neither ErrNotExist (a
// caller would take the file for gone) nor ErrExist (for the file there).
func notDirOnly(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, storage.ErrNotDir) || errors.Is(err, storage.ErrNotExist) || errors.Is(err, storage.ErrExist) {
		t.Errorf("%s: %v; want ErrNotDir, neither ErrNotExist nor ErrExist", what, err)
	}
}

// On a hierarchical-namespace account a file f stands in the way of every path f/...: a write,
// a delete, a move to or from, a restore there is ErrNotDir, never "not there"; nothing moves,
// and f is left as it is.
func TestHNSFileWhereFolderIs(t *testing.T) {
	ctx := context.Background()
	f, srv := newFakeAccount(t)
	f.hns, f.softDays = true, 7
	s := f.store(t, srv)
	for _, k := range []string{"f", "src.parquet", "g/a/x.parquet"} {
		if err := s.Put(ctx, k, []byte("bytes of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	notDirOnly(t, "Put(f/x)", s.Put(ctx, "f/x", []byte("x")))

	keys := []string{"f/x.parquet", "f/sub/y.parquet", "f/sub/"}
	res, err := s.Delete(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Gone {
			t.Errorf("Delete(%s) below the file f: Gone", keys[i])
		}
		notDirOnly(t, "Delete("+keys[i]+")", r.Err)
	}

	for _, to := range []string{"f/x.parquet", "f/r1/a/x.parquet"} {
		notDirOnly(t, "Move(src.parquet, "+to+")", s.Move(ctx, "src.parquet", to))
	}
	if got := mustRead(t, s, "src.parquet"); string(got) != "bytes of src.parquet" {
		t.Errorf("src.parquet after the refused moves: %q", got)
	}
	for _, from := range []string{"f/x.parquet", "f/sub/x.parquet"} {
		notDirOnly(t, "Move("+from+", y)", s.Move(ctx, from, "y.parquet"))
	}
	if f.renames != 0 {
		t.Errorf("%d renames, want none", f.renames)
	}

	// A soft-deleted file whose folder's folder is a file now: not restored (Restore creates
	// the missing folder g/a first, which the file g stands in the way of).
	res, err = s.Delete(ctx, []string{"g/a/x.parquet", "g/a/", "g/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil || r.Gone {
			t.Fatalf("Delete(%s) = %+v", r.Key, r)
		}
	}
	if err := s.Put(ctx, "g", []byte("a file where the folder g was")); err != nil {
		t.Fatal(err)
	}
	n := len(f.undeletes)
	notDirOnly(t, "Restore(g/a/x.parquet)", s.Restore(ctx, storage.Deleted{Key: "g/a/x.parquet", Size: int64(len("bytes of g/a/x.parquet"))}))
	if len(f.undeletes) != n {
		t.Errorf("%d undeletes below the file g", len(f.undeletes)-n)
	}
	for k, want := range map[string]string{"f": "bytes of f", "g": "a file where the folder g was"} {
		if got := mustRead(t, s, k); string(got) != want {
			t.Errorf("%s after the test: %q", k, got)
		}
	}
}

// A rename whose destination's folder is gone again (removed after Move made it), or that
// the service refuses for a file on the destination's way: from is still there, and the
// error says nothing is missing.
func TestHNSRenameTargetProblemIsNotAMissingSource(t *testing.T) {
	ctx := context.Background()
	f, srv := newFakeAccount(t)
	f.hns = true
	s := f.store(t, srv)
	if err := s.Put(ctx, "src.parquet", []byte("src")); err != nil {
		t.Fatal(err)
	}
	f.beforeRename = func(dst string) {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.dirs, dst[:len(dst)-len("/x.parquet")])
	}
	err := s.Move(ctx, "src.parquet", "_t/r1/x.parquet")
	if err == nil || errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Move into a folder removed before the rename: %v; want an error, not ErrNotExist", err)
	}
	f.beforeRename = func(dst string) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.write("tables/t/_t", []byte("a file where the trash folder was"))
		delete(f.dirs, "tables/t/_t")
		delete(f.dirs, "tables/t/_t/r1")
	}
	notDirOnly(t, "Move into a trash that became a file before the rename", s.Move(ctx, "src.parquet", "_t/r1/x.parquet"))
	if got := mustRead(t, s, "src.parquet"); string(got) != "src" {
		t.Errorf("src.parquet after the failed moves: %q", got)
	}
	if f.renames != 0 {
		t.Errorf("%d renames, want none", f.renames)
	}
}

// On a flat account a blob f and a blob f/x are unrelated: a key below f is written, moved to,
// and, when missing, gone.
func TestFlatFileBesideFolder(t *testing.T) {
	ctx := context.Background()
	f, srv := newFakeAccount(t)
	s := f.store(t, srv)
	for _, k := range []string{"f", "f/x", "src.parquet"} {
		if err := s.Put(ctx, k, []byte(k)); err != nil {
			t.Fatalf("Put(%s): %v", k, err)
		}
	}
	res, err := s.Delete(ctx, []string{"f/missing"})
	if err != nil || !res[0].Gone || res[0].Err != nil {
		t.Errorf("Delete(f/missing) beside a blob f: %+v, %v; want Gone", res, err)
	}
	if err := s.Move(ctx, "src.parquet", "f/y"); err != nil {
		t.Errorf("Move to f/y beside a blob f: %v", err)
	}
	if err := s.Move(ctx, "f/missing", "z"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Move of a missing f/missing: %v; want ErrNotExist", err)
	}
}

package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// A link on the way to either name of a move fails it: nothing is moved out of the root, nor
// taken from outside it.
func TestMoveNeverFollowsLinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	s, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Put(ctx, "a.parquet", []byte("data")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "b.parquet"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "_trash")); err != nil {
		t.Fatal(err)
	}
	if err := s.Move(ctx, "a.parquet", "_trash/r/a.parquet"); !errors.Is(err, storage.ErrSymlink) {
		t.Fatalf("move through a linked directory: %v, want ErrSymlink", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "r")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("something was created outside the root: %v", err)
	}
	if err := s.Move(ctx, "_trash/b.parquet", "b.parquet"); !errors.Is(err, storage.ErrSymlink) {
		t.Fatalf("move from a linked directory: %v, want ErrSymlink", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "b.parquet")); err != nil {
		t.Fatalf("the file outside was moved: %v", err)
	}
	// A directory is not moved.
	if err := s.Put(ctx, "d/x.parquet", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Move(ctx, "d", "e"); err == nil {
		t.Fatal("a directory was moved")
	}
	// The modification time survives the move.
	old := filepath.Join(root, "a.parquet")
	fi, _ := os.Stat(old)
	if err := s.Move(ctx, "a.parquet", "_t/a.parquet"); err != nil {
		t.Fatal(err)
	}
	fi2, err := os.Stat(filepath.Join(root, "_t", "a.parquet"))
	if err != nil || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("after the move: %v, mtime %v want %v", err, fi2, fi.ModTime())
	}
}

// A store whose root is a file (the table's folder was replaced by one): below it nothing can
// be listed (ErrNotExist), and nothing is deleted or moved, which is ErrNotDir, not a file gone.
func TestRootIsAFile(t *testing.T) {
	root := filepath.Join(t.TempDir(), "table")
	s, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(root, []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Stat(ctx, "a.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Stat below a root that is a file: %v, want ErrNotExist", err)
	}
	res, err := s.Delete(ctx, []string{"a.parquet", "p=1/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Gone || !errors.Is(r.Err, storage.ErrNotDir) || errors.Is(r.Err, storage.ErrNotExist) {
			t.Errorf("Delete(%q) below a root that is a file = %+v, want ErrNotDir (not ErrNotExist), not Gone", r.Key, r)
		}
	}
	if err := s.Move(ctx, "a.parquet", "_t/a.parquet"); !errors.Is(err, storage.ErrNotDir) || errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Move below a root that is a file: %v, want ErrNotDir, not ErrNotExist", err)
	}
	if b, err := os.ReadFile(root); err != nil || string(b) != "a file" {
		t.Errorf("the root file after the test: %q, %v", b, err)
	}
}

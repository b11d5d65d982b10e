package local_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// WalkLazy reports the regular files need is false for without size and time (on Linux,
// where the directory tells each name's kind), and everything else as Walk does: files need
// is true for, directories (their times decide the empty-folder rule), links (never
// followed) and the rest. Walk never leaves a description out.
func TestWalkLazy(t *testing.T) {
	dir := t.TempDir()
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	write := func(p, data string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(full, old, old); err != nil {
			t.Fatal(err)
		}
	}
	write("a/skip.parquet", "12345")
	write("a/need.parquet", "123")
	write("a/b/skip2.parquet", "1")
	if err := os.Symlink("skip.parquet", filepath.Join(dir, "a", "skip-link")); err != nil {
		t.Skipf("cannot create symbolic links here: %v", err)
	}
	for _, d := range []string{"a/b", "a"} {
		if err := os.Chtimes(filepath.Join(dir, d), old, old); err != nil {
			t.Fatal(err)
		}
	}
	s, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	asked := map[string]bool{}
	need := func(key string) bool {
		mu.Lock()
		asked[key] = true
		mu.Unlock()
		return key == "a/need.parquet"
	}
	got := map[string]storage.Object{}
	err = s.WalkLazy(context.Background(), "", need, func(o storage.Object) error {
		got[o.Key] = o
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	full := map[string]storage.Object{}
	if err := s.Walk(context.Background(), "", func(o storage.Object) error {
		if o.NoStat {
			t.Errorf("Walk reported %s without its description", o.Key)
		}
		full[o.Key] = o
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(full) {
		t.Fatalf("WalkLazy listed %d entries, Walk %d", len(got), len(full))
	}
	lazyOnLinux := map[string]bool{"a/skip.parquet": true, "a/b/skip2.parquet": true}
	for key, f := range full {
		o := got[key]
		if lazyOnLinux[key] && runtime.GOOS == "linux" {
			if !o.NoStat || o.Size != 0 || !o.ModTime.IsZero() || o.IsDir || o.IsLink {
				t.Errorf("%s: got %+v, want a file without its description", key, o)
			}
			continue
		}
		if o != f {
			t.Errorf("%s: WalkLazy gave %+v, Walk %+v", key, o, f)
		}
	}
	if o := got["a/"]; !o.IsDir || !o.ModTime.Equal(old) {
		t.Errorf("directory a/ described as %+v", o)
	}
	if o := got["a/skip-link"]; !o.IsLink || o.NoStat {
		t.Errorf("link described as %+v", o)
	}
	if o := got["a/need.parquet"]; o.Size != 3 || !o.ModTime.Equal(old) || o.NoStat {
		t.Errorf("needed file described as %+v", o)
	}
	for _, key := range []string{"a/", "a/b/", "a/skip-link"} {
		if asked[key] {
			t.Errorf("need asked of %s, which is always described", key)
		}
	}
}

// A directory whose names take several getdents64 calls is listed whole and in byte order,
// by both walks, names with spaces, '%', newlines and non-UTF-8 bytes included.
func TestWalkLargeDirectory(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 3000 {
		name := fmt.Sprintf("part-%05d-0123456789abcdef0123456789abcdef.parquet", i)
		switch i % 500 {
		case 1:
			name = fmt.Sprintf("a b%%20\n%d", i)
		case 2:
			name = fmt.Sprintf("\xff\xfe%d", i)
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	slices.Sort(want)
	s, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, lazy := range []bool{false, true} {
		var got []string
		fn := func(o storage.Object) error { got = append(got, o.Key); return nil }
		if lazy {
			err = s.WalkLazy(context.Background(), "", func(string) bool { return false }, fn)
		} else {
			err = s.Walk(context.Background(), "", fn)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("lazy=%v: listed %d names, want %d in byte order", lazy, len(got), len(want))
		}
	}
}

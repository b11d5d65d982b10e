package storagetest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// RunLinks runs the symbolic-link part of the contract, for backends on a file system that
// has links (local). newStore returns a new, empty store and the directory it is rooted at.
// Links are planted with os.Symlink, since no store makes them; "outside" is another
// temporary directory, whose files must survive whatever the store is asked to do.
func RunLinks(t *testing.T, newStore func(t *testing.T) (storage.Store, string)) {
	tests := []struct {
		name string
		fn   func(t *testing.T, newStore func(t *testing.T) (storage.Store, string))
	}{
		{"WalkReportsLinks", testWalkReportsLinks},
		{"WalkPrefixIsLink", testWalkPrefixIsLink},
		{"WalkDirSwappedForLink", testWalkDirSwappedForLink},
		{"StatLink", testStatLink},
		{"OpenLink", testOpenLink},
		{"DeleteThroughLink", testDeleteThroughLink},
		{"DeleteLinkItself", testDeleteLinkItself},
		{"DeleteParentSwappedForLink", testDeleteParentSwapped},
		{"PutThroughLink", testPutThroughLink},
		{"PutOverLink", testPutOverLink},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore) })
	}
}

// linkWorld is the layout most link tests start from:
//
//	root/a/f                  a file
//	root/a/inner -> ../a      a link that stays inside the root
//	root/dirlink -> outside   a link to a directory outside the root
//	root/filelink -> outside/secret.parquet
//	root/dangling -> outside/nothing-here
//	outside/secret.parquet, outside/sub/deep.parquet, outside/emptydir/
type linkWorld struct {
	root, outside string
	// precious are the paths (outside and inside) that no operation through a link may touch.
	precious []string
}

func newLinkWorld(t *testing.T, root string) *linkWorld {
	t.Helper()
	w := &linkWorld{root: root, outside: t.TempDir()}
	writeFile(t, filepath.Join(root, "a", "f"), "f")
	writeFile(t, filepath.Join(w.outside, "secret.parquet"), "secret")
	writeFile(t, filepath.Join(w.outside, "sub", "deep.parquet"), "deep")
	if err := os.Mkdir(filepath.Join(w.outside, "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join("..", "a"), filepath.Join(root, "a", "inner"))
	symlink(t, w.outside, filepath.Join(root, "dirlink"))
	symlink(t, filepath.Join(w.outside, "secret.parquet"), filepath.Join(root, "filelink"))
	symlink(t, filepath.Join(w.outside, "nothing-here"), filepath.Join(root, "dangling"))
	w.precious = []string{
		filepath.Join(root, "a", "f"),
		filepath.Join(w.outside, "secret.parquet"),
		filepath.Join(w.outside, "sub", "deep.parquet"),
		filepath.Join(w.outside, "emptydir"),
	}
	return w
}

// check fails the test for every precious path that is gone, and for anything created where
// "nothing-here" points.
func (w *linkWorld) check(t *testing.T) {
	t.Helper()
	for _, p := range w.precious {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s is gone (%v): an operation went through a symbolic link", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(w.outside, "nothing-here")); err == nil {
		t.Errorf("%s was created through a dangling symbolic link", filepath.Join(w.outside, "nothing-here"))
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot create symbolic links here: %v", err)
	}
}

func isLinkOnDisk(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

func mustSymlinkErr(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, storage.ErrSymlink) {
		t.Errorf("%s: got error %v, want ErrSymlink", what, err)
	}
}

func testWalkReportsLinks(t *testing.T, newStore func(t *testing.T) (storage.Store, string)) {
	s, root := newStore(t)
	w := newLinkWorld(t, root)
	type entry struct {
		Key           string
		IsDir, IsLink bool
	}
	var got []entry
	err := s.Walk(ctxT(t), "", func(o storage.Object) error {
		got = append(got, entry{o.Key, o.IsDir, o.IsLink})
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	want := []entry{
		{"a/", true, false},
		{"a/f", false, false},
		{"a/inner", false, true},
		{"dangling", false, true},
		{"dirlink", false, true},
		{"filelink", false, true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Walk:\n got  %+v\n want %+v", got, want)
	}
	w.check(t)
}

func testWalkPrefixIsLink(t *testing.T, newStore func(t *testing.T) (storage.Store, string)) {
	s, root := newStore(t)
	w := newLinkWorld(t, root)
	for _, prefix := range []string{"dirlink/", "a/inner/", "dirlink/sub/"} {
		var seen []string
		err := s.Walk(ctxT(t), prefix, func(o storage.Object) error {
			seen = append(seen, o.Key)
			return nil
		})
		mustSymlinkErr(t, err, "Walk("+prefix+")")
		if len(seen) > 0 {
			t.Errorf("Walk(%q) listed %q through a symbolic link", prefix, seen)
		}
	}
	w.check(t)
}

// testWalkDirSwappedForLink swaps a/b for a link to outside after a/ was listed (a/b was a
// directory then) and before a/b/ is: the walk must not list the outside directory.
func testWalkDirSwappedForLink(t *testing.T, newStore func(t *testing.T) (storage.Store, string)) {
	s, root := newStore(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "0.parquet"), "0")
	writeFile(t, filepath.Join(root, "a", "b", "x.parquet"), "x")
	writeFile(t, filepath.Join(outside, "x.parquet"), "outside x")
	writeFile(t, filepath.Join(outside, "secret.parquet"), "secret")
	var seen []string
	err := s.Walk(ctxT(t), "", func(o storage.Object) error {
		seen = append(seen, o.Key)
		if o.Key == "a/0.parquet" {
			// a/ is listed (its files are being reported); a/b/ is listed only when the walk
			// reaches it.
			if err := os.Rename(filepath.Join(root, "a", "b"), filepath.Join(root, "a", "b.moved")); err != nil {
				return err
			}
			symlink(t, outside, filepath.Join(root, "a", "b"))
		}
		return nil
	})
	for _, k := range seen {
		if strings.HasPrefix(k, "a/b/") && k != "a/b/" {
			t.Errorf("Walk listed %q through the link swapped in for a/b", k)
		}
	}
	if err != nil {
		mustSymlinkErr(t, err, "Walk with a/b swapped for a link")
	}
}

func testStatLink(t *testing.T, newStore func(t *testing.T) (storage.Store, string)) {
	s, root := newStore(t)
	w := newLinkWorld(t, root)
	ctx := ctxT(t)
	for _, key := range []string{"filelink", "dirlink", "dangling", "a/inner"} {
		o, err := s.Stat(ctx, key)
		if err != nil {
			t.Errorf("Stat(%q): %v", key, err)
			continue
		}
		if o.Key != key || !o.IsLink || o.IsDir {
			t.Errorf("Stat(%q) = %+v, want the link itself (IsLink, not IsDir)", key, o)
		}
	}
	for _, key := range []string{"dirlink/secret.parquet", "dirlink/sub/", "a/inner/f"} {
		_, err := s.Stat(ctx, key)
		mustSymlinkErr(t, err, "Stat("+key+")")
	}
	w.check(t)
}

func testOpenLink(t *testing.T, newStore func(t *testing.T) (storage.Store, string)) {
	s, root := newStore(t)
	w := newLinkWorld(t, root)
	ctx := ctxT(t)
	for _, key := range []string{"filelink", "dangling", "dirlink", "dirlink/secret.parquet", "dirlink/sub/deep.parquet", "a/inner/f"} {
		r, err := s.Open(ctx, key)
		if err == nil {
			r.Close()
		}
		mustSymlinkErr(t, err, "Open("+key+")")
	}
	if got, err := storage.ReadAll(ctx, s, "a/f"); err != nil || string(got) != "f" {
		t.Errorf("ReadAll(a/f) = %q, %v", got, err)
	}
	w.check(t)
}

func testDeleteThroughLink(t *testing.T, newStore func(t *testing.T) (storage.Store, string)) {
	s, root := newStore(t)
	w := newLinkWorld(t, root)
	keys := []string{
		"dirlink/secret.parquet",   // through a link to outside
		"dirlink/sub/deep.parquet", // two levels below it
		"dirlink/emptydir/",        // an empty directory below it
		"a/inner/f",                // through a link that stays inside the root
		"a/inner/inner/f",
	}
	res, err := s.Delete(ctxT(t), keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Key != keys[i] || r.Gone {
			t.Errorf("result %d = %+v, want key %q not Gone", i, r, keys[i])
		}
		mustSymlinkErr(t, r.Err, "Delete("+keys[i]+")")
	}
	w.check(t)
	for _, l := range []string{"dirlink", "a/inner"} {
		if !isLinkOnDisk(filepath.Join(root, filepath.FromSlash(l))) {
			t.Errorf("the link %s is gone", l)
		}
	}
}

func testDeleteLinkItself(t *testing.T, newStore func(t *testing.T) (storage.Store, string)) {
	tests := []struct {
		key     string
		deleted bool // the link goes; otherwise the key fails and the link stays
	}{
		{"dirlink", true},
		{"filelink", true},
		{"dangling", true},
		{"a/inner", true},
		{"dirlink/", false}, // a directory key: a link is not a directory
		{"a/inner/", false},
	}
	for _, tc := range tests {
		t.Run(strings.ReplaceAll(tc.key, "/", "_"), func(t *testing.T) {
			s, root := newStore(t)
			w := newLinkWorld(t, root)
			res, err := s.Delete(ctxT(t), []string{tc.key})
			if err != nil {
				t.Fatal(err)
			}
			r := res[0]
			onDisk := isLinkOnDisk(filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(tc.key, "/"))))
			if tc.deleted {
				if r.Err != nil || r.Gone || onDisk {
					t.Errorf("Delete(%q) = %+v, link still there: %v; want the link deleted", tc.key, r, onDisk)
				}
			} else if r.Err == nil || !onDisk {
				t.Errorf("Delete(%q) = %+v, link still there: %v; want an error and the link kept", tc.key, r, onDisk)
			}
			w.check(t)
		})
	}
}

// testDeleteParentSwapped plans the delete of d/x.parquet and d/y.parquet, then swaps d for a
// link to a directory holding files of the same names, outside the root or elsewhere inside
// it: the deletes must fail, and every file survive.
func testDeleteParentSwapped(t *testing.T, newStore func(t *testing.T) (storage.Store, string)) {
	for _, target := range []string{"outside", "inside"} {
		t.Run(target, func(t *testing.T) {
			s, root := newStore(t)
			writeFile(t, filepath.Join(root, "d", "x.parquet"), "x")
			writeFile(t, filepath.Join(root, "d", "y.parquet"), "y")
			var keys []string
			if err := s.Walk(ctxT(t), "d/", func(o storage.Object) error {
				keys = append(keys, o.Key)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, "d/")
			dest := t.TempDir()
			if target == "inside" {
				dest = filepath.Join(root, "e")
			}
			writeFile(t, filepath.Join(dest, "x.parquet"), "x elsewhere")
			writeFile(t, filepath.Join(dest, "y.parquet"), "y elsewhere")
			if err := os.Rename(filepath.Join(root, "d"), filepath.Join(root, "d.moved")); err != nil {
				t.Fatal(err)
			}
			symlink(t, dest, filepath.Join(root, "d"))
			res, err := s.Delete(ctxT(t), keys)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if r.Err == nil || r.Gone {
					t.Errorf("Delete(%q) = %+v, want an error", r.Key, r)
				}
				if r.Key != "d/" {
					mustSymlinkErr(t, r.Err, "Delete("+r.Key+")")
				}
			}
			for _, p := range []string{
				filepath.Join(dest, "x.parquet"), filepath.Join(dest, "y.parquet"),
				filepath.Join(root, "d.moved", "x.parquet"), filepath.Join(root, "d.moved", "y.parquet"),
			} {
				if _, err := os.Lstat(p); err != nil {
					t.Errorf("%s is gone: the delete followed the link swapped in for d", p)
				}
			}
			if !isLinkOnDisk(filepath.Join(root, "d")) {
				t.Error("the link d is gone")
			}
		})
	}
}

// testPutThroughLink writes below a _delta_log that is a link to outside: nothing may be
// written there, not even a temporary file.
func testPutThroughLink(t *testing.T, newStore func(t *testing.T) (storage.Store, string)) {
	s, root := newStore(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "00000000000000000000.json"), "{}")
	symlink(t, outside, filepath.Join(root, "_delta_log"))
	ctx := ctxT(t)
	writes := []struct {
		what string
		err  error
	}{
		{"Put(_delta_log/_last_vacuum_info)", s.Put(ctx, "_delta_log/_last_vacuum_info", []byte(`{}`))},
		{"PutIfAbsent(_delta_log/00000000000000000001.json)", s.PutIfAbsent(ctx, "_delta_log/00000000000000000001.json", []byte(`{}`))},
		{"Put(_delta_log/sub/x.json)", s.Put(ctx, "_delta_log/sub/x.json", []byte(`{}`))},
		{"Put(_delta_log/sub/)", s.Put(ctx, "_delta_log/sub/", nil)},
		{"PutIfAbsent(_delta_log/sub/)", s.PutIfAbsent(ctx, "_delta_log/sub/", nil)},
	}
	for _, w := range writes {
		mustSymlinkErr(t, w.err, w.what)
	}
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"00000000000000000000.json"}; !slices.Equal(names, want) {
		t.Errorf("the directory the link points to holds %q, want %q: a write went through the link", names, want)
	}
	if !isLinkOnDisk(filepath.Join(root, "_delta_log")) {
		t.Error("the link _delta_log was replaced")
	}
}

// testPutOverLink writes keys whose names are taken by links: the link may be refused or
// replaced, never written through.
func testPutOverLink(t *testing.T, newStore func(t *testing.T) (storage.Store, string)) {
	s, root := newStore(t)
	outside := t.TempDir()
	target := filepath.Join(outside, "target")
	writeFile(t, target, "precious")
	log := filepath.Join(root, "_delta_log")
	if err := os.MkdirAll(log, 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, target, filepath.Join(log, "_last_vacuum_info"))
	symlink(t, target, filepath.Join(log, "00000000000000000001.json"))
	symlink(t, filepath.Join(outside, "created"), filepath.Join(log, "00000000000000000002.json"))
	symlink(t, filepath.Join(outside, "created"), filepath.Join(log, "_dangling"))
	ctx := ctxT(t)
	data := []byte(`{"latestCommitVersionOutsideOfRetentionWindow":1}`)
	for _, key := range []string{"_delta_log/_last_vacuum_info", "_delta_log/_dangling"} {
		if err := s.Put(ctx, key, data); err == nil {
			// Replaced: the key is now a file of its own.
			if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(key))); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("Put(%q) succeeded but the key is not a regular file: %v, %v", key, fi, err)
			}
		}
	}
	for _, key := range []string{"_delta_log/00000000000000000001.json", "_delta_log/00000000000000000002.json"} {
		if err := s.PutIfAbsent(ctx, key, data); !errors.Is(err, storage.ErrExist) {
			t.Errorf("PutIfAbsent(%q) over a link = %v, want ErrExist (the name is taken)", key, err)
		}
	}
	if got, err := os.ReadFile(target); err != nil || string(got) != "precious" {
		t.Errorf("the link's target holds %q, %v: a write went through the link", got, err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "created")); err == nil {
		t.Error("a write through a dangling link created its target")
	}
}

// NewLocalDir returns a local store in a new temporary directory, and the directory.
func NewLocalDir(t *testing.T) (storage.Store, string) {
	dir := t.TempDir()
	s, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot create symbolic links here: %v", err)
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

func walkKeys(t *testing.T, s storage.Store, prefix string) ([]string, error) {
	t.Helper()
	var keys []string
	err := s.Walk(context.Background(), prefix, func(o storage.Object) error {
		keys = append(keys, o.Key)
		return nil
	})
	return keys, err
}

// realPath is dir with every symbolic link resolved, as a message names the target.
func realPath(t *testing.T, dir string) string {
	t.Helper()
	p, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A table root that is itself a link is refused when the store is made, with a message that
// names the target and says to vacuum it.
func TestSymlinkedRoot(t *testing.T) {
	table := t.TempDir()
	writeFile(t, filepath.Join(table, "part-0.parquet"), "x")
	base := t.TempDir()
	rel, err := filepath.Rel(base, table)
	if err != nil {
		t.Fatal(err)
	}
	symlink(t, table, filepath.Join(base, "abs"))
	symlink(t, rel, filepath.Join(base, "rel"))
	symlink(t, filepath.Join(base, "abs"), filepath.Join(base, "chain"))
	symlink(t, filepath.Join(base, "nowhere"), filepath.Join(base, "dangling"))
	want := realPath(t, table)
	tests := []struct {
		name, dir, target string
	}{
		{"absolute", filepath.Join(base, "abs"), want},
		{"relative", filepath.Join(base, "rel"), want},
		{"trailing slash", filepath.Join(base, "abs") + string(filepath.Separator), want},
		{"link to a link", filepath.Join(base, "chain"), want},
		{"dangling", filepath.Join(base, "dangling"), filepath.Join(base, "nowhere")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := local.New(tc.dir)
			if err == nil {
				t.Fatalf("New(%s) = %v, want an error: the root is a symbolic link", tc.dir, s.Root())
			}
			if !errors.Is(err, storage.ErrSymlink) {
				t.Errorf("New(%s): %v, want ErrSymlink", tc.dir, err)
			}
			link := filepath.Clean(tc.dir)
			for _, part := range []string{link + " is a symbolic link to " + tc.target, "does not follow", "vacuum " + tc.target + " itself"} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("New(%s): message %q does not say %q", tc.dir, err, part)
				}
			}
		})
	}
}

// Links above the root are followed once, when the store opens its root; everything after is
// relative to that directory.
func TestRootBelowLinkedAncestor(t *testing.T) {
	parent := t.TempDir()
	writeFile(t, filepath.Join(parent, "t", "part-0.parquet"), "x")
	base := t.TempDir()
	symlink(t, parent, filepath.Join(base, "anc"))
	dir := filepath.Join(base, "anc", "t")
	s, err := local.New(dir)
	if err != nil {
		t.Fatalf("New(%s): %v", dir, err)
	}
	if s.Root() != dir {
		t.Errorf("Root() = %s, want %s", s.Root(), dir)
	}
	if !strings.HasSuffix(s.Location(), "/anc/t") || !strings.HasPrefix(s.Location(), "file://") {
		t.Errorf("Location() = %s, want the file URI of %s", s.Location(), dir)
	}
	keys, err := walkKeys(t, s, "")
	if err != nil || !slices.Equal(keys, []string{"part-0.parquet"}) {
		t.Fatalf("Walk = %q, %v", keys, err)
	}
	res, err := s.Delete(context.Background(), []string{"part-0.parquet"})
	if err != nil || res[0].Err != nil || res[0].Gone {
		t.Fatalf("Delete = %+v, %v", res, err)
	}
}

// The root is resolved once: a root directory swapped for a link after the store opened it
// does not redirect the store.
func TestRootResolvedOnce(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "t")
	writeFile(t, filepath.Join(dir, "f.parquet"), "f")
	s, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "f.parquet"), "other f")
	writeFile(t, filepath.Join(other, "g.parquet"), "other g")
	if err := os.Rename(dir, filepath.Join(base, "t.moved")); err != nil {
		t.Fatal(err)
	}
	symlink(t, other, dir)
	keys, err := walkKeys(t, s, "")
	if err != nil || !slices.Equal(keys, []string{"f.parquet"}) {
		t.Fatalf("Walk = %q, %v; want the directory the store opened", keys, err)
	}
	res, err := s.Delete(context.Background(), []string{"f.parquet", "g.parquet"})
	if err != nil || res[0].Err != nil || res[0].Gone || !res[1].Gone {
		t.Fatalf("Delete = %+v, %v; want f deleted, g gone", res, err)
	}
	for _, p := range []string{filepath.Join(other, "f.parquet"), filepath.Join(other, "g.parquet")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s is gone: the store followed the link swapped in for its root", p)
		}
	}
	if _, err := os.Lstat(filepath.Join(base, "t.moved", "f.parquet")); err == nil {
		t.Error("t.moved/f.parquet was not deleted")
	}
}

// A root that does not exist yet is opened when it is first used (Put creates it); if it has
// become a link by then, that use fails with the message.
func TestMissingRoot(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "new", "t")
	s, err := local.New(dir)
	if err != nil {
		t.Fatalf("New of a missing directory: %v", err)
	}
	if _, err := walkKeys(t, s, ""); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Walk of a missing root = %v, want ErrNotExist", err)
	}
	if _, err := s.Stat(ctx, "x"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Stat = %v, want ErrNotExist", err)
	}
	if _, err := s.Open(ctx, "x"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Open = %v, want ErrNotExist", err)
	}
	if res, err := s.Delete(ctx, []string{"x", "y/"}); err != nil || !res[0].Gone || !res[1].Gone {
		t.Errorf("Delete = %+v, %v; want Gone", res, err)
	}
	if err := s.Put(ctx, "a/b.json", []byte("{}")); err != nil {
		t.Fatalf("Put into a missing root: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "a", "b.json")); err != nil || string(got) != "{}" {
		t.Fatalf("after Put: %q, %v", got, err)
	}
	if keys, err := walkKeys(t, s, ""); err != nil || !slices.Equal(keys, []string{"a/", "a/b.json"}) {
		t.Fatalf("Walk = %q, %v", keys, err)
	}

	later := filepath.Join(t.TempDir(), "t")
	s, err = local.New(later)
	if err != nil {
		t.Fatal(err)
	}
	table := t.TempDir()
	symlink(t, table, later)
	_, err = walkKeys(t, s, "")
	if !errors.Is(err, storage.ErrSymlink) || !strings.Contains(err.Error(), later+" is a symbolic link to "+realPath(t, table)) {
		t.Errorf("Walk of a root that became a link = %v, want ErrSymlink naming the link and its target", err)
	}
}

// A _delta_log that is a link is refused at its first Walk or Open, with a message that says
// so and what to do.
func TestSymlinkedLog(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	logs := t.TempDir()
	writeFile(t, filepath.Join(logs, "t", "00000000000000000000.json"), "{}\n")
	symlink(t, filepath.Join(logs, "t"), filepath.Join(root, "_delta_log"))
	s, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "_delta_log")
	target := realPath(t, filepath.Join(logs, "t"))
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, storage.ErrSymlink) {
			t.Errorf("%s = %v, want ErrSymlink", what, err)
			return
		}
		for _, part := range []string{link + " is a symbolic link to " + target, "does not follow", "_delta_log"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("%s: message %q does not say %q", what, err, part)
			}
		}
	}
	keys, err := walkKeys(t, s, "_delta_log/")
	check("Walk(_delta_log/)", err)
	if len(keys) > 0 {
		t.Errorf("Walk(_delta_log/) listed %q through the link", keys)
	}
	_, err = s.Open(ctx, "_delta_log/00000000000000000000.json")
	check("Open(_delta_log/00000000000000000000.json)", err)
	_, err = s.Open(ctx, "_delta_log/_last_checkpoint")
	check("Open(_delta_log/_last_checkpoint)", err)
	o, err := s.Stat(ctx, "_delta_log")
	if err != nil || !o.IsLink || o.IsDir {
		t.Errorf("Stat(_delta_log) = %+v, %v; want the link", o, err)
	}
}

// Deletes keep their semantics: a missing key is Gone, a directory goes only when empty, and
// a key of the wrong kind is an error.
func TestDeleteKinds(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		setup   func(t *testing.T, root string)
		gone    bool
		err     error // nil: deleted (or Gone); errAny: any error
		survive string
	}{
		{name: "file", key: "d/f", setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "d", "f"), "f") }},
		{name: "empty directory", key: "d/e/", setup: func(t *testing.T, root string) { mkdir(t, filepath.Join(root, "d", "e")) }},
		{name: "missing file", key: "d/missing", setup: func(t *testing.T, root string) { mkdir(t, filepath.Join(root, "d")) }, gone: true},
		{name: "missing directory", key: "d/missing/", setup: func(t *testing.T, root string) { mkdir(t, filepath.Join(root, "d")) }, gone: true},
		{name: "missing parent", key: "no/such/f", setup: func(t *testing.T, root string) {}, gone: true},
		// A file where the key's folder was is not the key's absence: the folder was replaced
		// since the listing, or the key is wrong.
		{name: "parent is a file", key: "f/x", setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "f"), "f") }, err: storage.ErrNotDir, survive: "f"},
		{name: "grandparent is a file", key: "f/d/x", setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "f"), "f") }, err: storage.ErrNotDir, survive: "f"},
		{name: "directory below a file", key: "f/d/", setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "f"), "f") }, err: storage.ErrNotDir, survive: "f"},
		{name: "full directory", key: "d/", setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "d", "f"), "f") }, err: storage.ErrNotEmpty, survive: "d/f"},
		{name: "file key names a directory", key: "d", setup: func(t *testing.T, root string) { mkdir(t, filepath.Join(root, "d")) }, err: errAny, survive: "d"},
		{name: "directory key names a file", key: "f/", setup: func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "f"), "f") }, err: errAny, survive: "f"},
		{name: "root", key: "", setup: func(t *testing.T, root string) {}, err: errAny},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tc.setup(t, root)
			s, err := local.New(root)
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Delete(context.Background(), []string{tc.key})
			if err != nil {
				t.Fatal(err)
			}
			r := res[0]
			switch {
			case tc.err == nil && r.Err != nil:
				t.Errorf("Delete(%q) = %+v, want no error", tc.key, r)
			case tc.err == errAny && r.Err == nil, tc.err != nil && tc.err != errAny && !errors.Is(r.Err, tc.err):
				t.Errorf("Delete(%q) = %+v, want error %v", tc.key, r, tc.err)
			case tc.err == storage.ErrNotDir && errors.Is(r.Err, storage.ErrNotExist):
				t.Errorf("Delete(%q) = %+v: ErrNotDir must not be ErrNotExist too", tc.key, r)
			case r.Gone != tc.gone:
				t.Errorf("Delete(%q) = %+v, want Gone %v", tc.key, r, tc.gone)
			}
			if tc.err == nil && !tc.gone {
				if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(tc.key))); err == nil {
					t.Errorf("%s still exists", tc.key)
				}
			}
			if tc.survive != "" {
				if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(tc.survive))); err != nil {
					t.Errorf("%s is gone", tc.survive)
				}
			}
		})
	}
}

var errAny = errors.New("any error")

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestLinkIntoStore: a link is marked LinkIntoStore when it resolves, following every link, to
// a place inside the root (as given or as resolved), so that the planner can see that what
// lies below it is listed twice.
func TestLinkIntoStore(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "t")
	outside := t.TempDir()
	writeFile(t, filepath.Join(root, "real", "x"), "x")
	writeFile(t, filepath.Join(outside, "y"), "y")
	symlink(t, "real", filepath.Join(root, "in"))
	symlink(t, "../t/real", filepath.Join(root, "in-via-parent"))
	symlink(t, outside, filepath.Join(root, "out"))
	symlink(t, "missing", filepath.Join(root, "dangling"))
	symlink(t, "out", filepath.Join(root, "chain-out"))
	symlink(t, "in", filepath.Join(root, "chain-in"))
	symlink(t, ".", filepath.Join(root, "self"))
	aliasParent := filepath.Join(t.TempDir(), "alias")
	symlink(t, parent, aliasParent) // the root reached through a link above it
	s, err := local.New(filepath.Join(aliasParent, "t"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	err = s.Walk(context.Background(), "", func(o storage.Object) error {
		if o.IsLink {
			got[o.Key] = o.LinkIntoStore
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"in": true, "in-via-parent": true, "out": false, "dangling": false, "chain-out": false, "chain-in": true, "self": true}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: LinkIntoStore = %v, want %v", k, got[k], w)
		}
	}
}

// TestResolvePath: an absolute path outside the root as spelled is inside when its directory
// resolves into the root (as given or as resolved); the key is the one a listing reports.
func TestResolvePath(t *testing.T) {
	realParent := t.TempDir()
	real := filepath.Join(realParent, "t")
	writeFile(t, filepath.Join(real, "p=1", "x"), "x")
	alias := filepath.Join(t.TempDir(), "alias")
	symlink(t, realParent, alias)
	other := t.TempDir()
	for _, root := range []string{real, filepath.Join(alias, "t")} {
		s, err := local.New(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			path, key string
			inside    bool
		}{
			{filepath.ToSlash(real) + "/p=1/x", "p=1/x", true},
			{filepath.ToSlash(alias) + "/t/p=1/x", "p=1/x", true},
			{filepath.ToSlash(alias) + "/t/y", "y", true},
			{filepath.ToSlash(other) + "/x", "", false},
			{filepath.ToSlash(real) + "2/x", "", false},
			{filepath.ToSlash(real) + "/missing/x", "", false},
			{filepath.ToSlash(real), "", false},
		} {
			key, inside := s.ResolvePath(tc.path)
			if key != tc.key || inside != tc.inside {
				t.Errorf("root %s: ResolvePath(%s) = %q %v, want %q %v", root, tc.path, key, inside, tc.key, tc.inside)
			}
		}
	}
}

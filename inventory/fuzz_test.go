package inventory

import (
	"context"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
)

// FuzzWalk checks the order Walk promises on arbitrary keys: every object once, its parent
// directory before it, the entries of a directory in byte order of their names, the contents of a
// directory contiguous.
func FuzzWalk(f *testing.F) {
	f.Add("a/b\na-b\na\na/\nab/c/d\n_x/y\n.z")
	f.Add("p=a%3Ab/x\np=a:b/y\na b/c d/e\n\xff/x\n\x00/y")
	f.Fuzz(func(t *testing.T, s string) {
		l := &Listing{}
		for _, k := range strings.Split(s, "\n") {
			if !cleanKey(strings.TrimSuffix(k, "/")) {
				continue
			}
			l.entries = append(l.entries, entry{key: k, dir: strings.HasSuffix(k, "/"), timed: true})
		}
		l.sort()
		seen := map[string]bool{"": true}
		lastInDir := map[string]string{}
		var open []string // directories whose contents are being listed
		err := l.Walk(context.Background(), "", func(o storage.Object) error {
			if seen[o.Key] {
				t.Fatalf("%q reported twice", o.Key)
			}
			parent := storage.Dir(o.Key)
			if !seen[parent] {
				t.Fatalf("%q reported before its directory %q", o.Key, parent)
			}
			for len(open) > 0 && !strings.HasPrefix(o.Key, open[len(open)-1]) {
				open = open[:len(open)-1]
			}
			if parent != "" && (len(open) == 0 || open[len(open)-1] != parent) {
				t.Fatalf("%q is not contiguous with the rest of %q", o.Key, parent)
			}
			// On object stores a file and a directory can share a name: the file comes first.
			name := o.Name()
			if o.IsDir {
				name += "/"
			}
			if prev, ok := lastInDir[parent]; ok && !(strings.TrimSuffix(prev, "/") < strings.TrimSuffix(name, "/") || prev+"/" == name) {
				t.Fatalf("in %q, %q comes after %q", parent, name, prev)
			}
			lastInDir[parent] = name
			seen[o.Key] = true
			if o.IsDir {
				open = append(open, o.Key)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range l.entries {
			if !seen[e.key] {
				t.Fatalf("%q not reported", e.key)
			}
		}
	})
}

// FuzzRootKey checks that a path the matcher puts inside the root yields a clean key below it.
func FuzzRootKey(f *testing.F) {
	for _, p := range []string{"file:/t/x", "file:///t/a/../b", "/t/x/", "file://host/t/x", "s3://b/t/x", "file:/t", "file:/tt/x", "/t//x", "file:/t/%2e%2e/x"} {
		f.Add(p)
	}
	r, err := parseRoot("file:///t")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		key, m := r.key(p)
		if m != inside {
			return
		}
		if !cleanKey(strings.TrimSuffix(key, "/")) {
			t.Fatalf("%q: key %q is not clean", p, key)
		}
		if !strings.HasSuffix(p, "/t/"+key) {
			t.Fatalf("%q: key %q is not the path's tail", p, key)
		}
	})
}

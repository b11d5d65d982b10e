// Package storagetest is the conformance suite every storage backend passes, and the test
// fixtures for the object-store backends (test servers on 127.0.0.1, see
// scripts/testservers/start.sh).
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Store { return newEmptyStore(t) })
//	}
//
// Objects are created with the store's own Put. Every subtest gets a fresh, empty store.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// GoneReporter is implemented by stores that may not know whether a deleted key existed: when
// ReportsGone returns false, a missing key may be reported as deleted (Gone false, Err nil)
// instead of Gone. S3 is such a store. Stores that do not implement it must report Gone.
type GoneReporter interface {
	ReportsGone() bool
}

// reportsGone tells whether s reports missing keys as Gone.
func reportsGone(s storage.Store) bool {
	if g, ok := s.(GoneReporter); ok {
		return g.ReportsGone()
	}
	return true
}

// SetModTime sets the modification time of key where the store allows it (local, mem) and
// returns false where it does not (object stores, whose modification times are the server's).
func SetModTime(s storage.Store, key string, t time.Time) (bool, error) {
	switch st := s.(type) {
	case *mem.Store:
		return true, st.Chtime(key, t)
	case *local.Store:
		p := filepath.Join(st.Root(), filepath.FromSlash(strings.TrimSuffix(key, "/")))
		return true, os.Chtimes(p, t, t)
	}
	return false, nil
}

// Option changes how Run runs.
type Option func(*options)

type options struct {
	skip map[string]string
}

// Skip skips the named subtests, each with its reason (a known failure being fixed).
func Skip(reasons map[string]string) Option {
	return func(o *options) {
		for k, v := range reasons {
			o.skip[k] = v
		}
	}
}

// Run runs the conformance suite. newStore returns a new, empty store each time it is called.
func Run(t *testing.T, newStore func(t *testing.T) storage.Store, opts ...Option) {
	var o options
	o.skip = map[string]string{}
	for _, opt := range opts {
		opt(&o)
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, s storage.Store)
	}{
		{"Empty", testEmpty},
		{"PutStatOpen", testPutStatOpen},
		{"ReadAt", testReadAt},
		{"ZeroByteObject", testZeroByte},
		{"Overwrite", testOverwrite},
		{"ChangedWhileRead", testChangedWhileRead},
		{"WalkOrder", testWalkOrder},
		{"WalkPrefix", testWalkPrefix},
		{"WalkSkipDir", testWalkSkipDir},
		{"WalkStopsOnError", testWalkError},
		{"SpecialKeys", testSpecialKeys},
		{"XMLUnsafeKeys", testXMLUnsafeKeys},
		{"ModTime", testModTime},
		{"OldModTime", testOldModTime},
		{"DirectoryMarker", testDirectoryMarker},
		{"DeleteDirectory", testDeleteDirectory},
		{"DeleteMissing", testDeleteMissing},
		{"DeleteBatchWithMissing", testDeleteBatchWithMissing},
		{"DeleteMany", testDeleteMany},
		{"DeleteInvalidKeys", testDeleteInvalid},
		{"DeleteBelowFile", testDeleteBelowFile},
		{"MoveToBelowFile", testMoveToBelowFile},
		{"MoveFromBelowFile", testMoveFromBelowFile},
		{"PutIfAbsent", testPutIfAbsent},
		{"PutIfAbsentRace", testPutIfAbsentRace},
		{"Cancellation", testCancellation},
		{"Location", testLocation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if why, ok := o.skip[tc.name]; ok {
				t.Skip(why)
			}
			tc.fn(t, newStore(t))
		})
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func put(t *testing.T, s storage.Store, key string, data []byte) {
	t.Helper()
	if err := s.Put(ctxT(t), key, data); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

// putAll writes keys concurrently, each with its own name as content.
func putAll(t *testing.T, s storage.Store, keys []string) {
	t.Helper()
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make([]error, len(keys))
	sem := make(chan struct{}, 16)
	for i, k := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var data []byte
			if !strings.HasSuffix(k, "/") {
				data = []byte("content of " + k)
			}
			errs[i] = s.Put(ctx, k, data)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Put(%q): %v", keys[i], err)
		}
	}
}

type walked struct {
	Key   string
	IsDir bool
	Size  int64
	Mod   time.Time
}

func walk(t *testing.T, s storage.Store, prefix string) []walked {
	t.Helper()
	var got []walked
	err := s.Walk(ctxT(t), prefix, func(o storage.Object) error {
		got = append(got, walked{o.Key, o.IsDir, o.Size, o.ModTime})
		return nil
	})
	if err != nil {
		t.Fatalf("Walk(%q): %v", prefix, err)
	}
	return got
}

func walkKeys(t *testing.T, s storage.Store, prefix string) []string {
	t.Helper()
	var keys []string
	for _, w := range walk(t, s, prefix) {
		keys = append(keys, w.Key)
	}
	return keys
}

// ExpectedWalk returns the keys a Walk of the root reports for a store holding exactly keys
// (files, and directory keys ending in '/'): every ancestor directory, each directory before
// its contents, the entries of a directory in byte order of their names, a file before a
// directory of the same name.
func ExpectedWalk(keys []string) []string {
	type node struct {
		children map[string]*node
		file     bool
		dir      bool
	}
	root := &node{children: map[string]*node{}}
	get := func(n *node, name string, dir bool) *node {
		k := name
		if dir {
			k += "/"
		}
		c := n.children[k]
		if c == nil {
			c = &node{children: map[string]*node{}, dir: dir, file: !dir}
			n.children[k] = c
		}
		return c
	}
	for _, key := range keys {
		parts := strings.Split(strings.TrimSuffix(key, "/"), "/")
		n := root
		for i, p := range parts {
			last := i == len(parts)-1
			n = get(n, p, !last || strings.HasSuffix(key, "/"))
		}
	}
	var out []string
	var rec func(n *node, prefix string)
	rec = func(n *node, prefix string) {
		names := make([]string, 0, len(n.children))
		for k := range n.children {
			names = append(names, k)
		}
		sort.Slice(names, func(i, j int) bool {
			a, b := strings.TrimSuffix(names[i], "/"), strings.TrimSuffix(names[j], "/")
			if a != b {
				return a < b
			}
			return !strings.HasSuffix(names[i], "/")
		})
		for _, k := range names {
			out = append(out, prefix+k)
			if c := n.children[k]; c.dir {
				rec(c, prefix+k)
			}
		}
	}
	rec(root, "")
	return out
}

func mustNotExist(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("%s: got error %v, want ErrNotExist", what, err)
	}
}

func exists(t *testing.T, s storage.Store, key string) bool {
	t.Helper()
	_, err := s.Stat(ctxT(t), key)
	if err == nil {
		return true
	}
	if errors.Is(err, storage.ErrNotExist) {
		return false
	}
	t.Fatalf("Stat(%q): %v", key, err)
	return false
}

func testEmpty(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	if got := walk(t, s, ""); len(got) != 0 {
		t.Fatalf("Walk of an empty store reported %v", got)
	}
	_, err := s.Stat(ctx, "missing")
	mustNotExist(t, err, "Stat(missing)")
	_, err = s.Open(ctx, "missing")
	mustNotExist(t, err, "Open(missing)")
	_, err = s.Stat(ctx, "missing/")
	mustNotExist(t, err, "Stat(missing/)")
	err = s.Walk(ctx, "missing/", func(storage.Object) error { return nil })
	mustNotExist(t, err, "Walk(missing/)")
}

func testPutStatOpen(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	data := []byte("hello, delta")
	put(t, s, "dir/a.txt", data)
	o, err := s.Stat(ctx, "dir/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if o.Key != "dir/a.txt" || o.IsDir || o.Size != int64(len(data)) || o.Name() != "a.txt" {
		t.Fatalf("Stat = %+v", o)
	}
	got, err := storage.ReadAll(ctx, s, "dir/a.txt")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
	d, err := s.Stat(ctx, "dir/")
	if err != nil || !d.IsDir || d.Key != "dir/" {
		t.Fatalf("Stat(dir/) = %+v, %v", d, err)
	}
	if _, err := s.Open(ctx, "dir/"); err == nil {
		t.Fatal("Open of a directory succeeded")
	}
}

func testReadAt(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	data := make([]byte, 300<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	put(t, s, "big.bin", data)
	r, err := s.Open(ctx, "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != int64(len(data)) {
		t.Fatalf("Size = %d, want %d", r.Size(), len(data))
	}
	buf := make([]byte, 1000)
	n, err := r.ReadAt(buf, 12345)
	if err != nil || n != len(buf) || !bytes.Equal(buf, data[12345:12345+1000]) {
		t.Fatalf("ReadAt middle: n=%d err=%v", n, err)
	}
	// A read past the end returns what there is and io.EOF.
	n, err = r.ReadAt(buf, int64(len(data)-10))
	if n != 10 || !errors.Is(err, io.EOF) || !bytes.Equal(buf[:10], data[len(data)-10:]) {
		t.Fatalf("ReadAt tail: n=%d err=%v", n, err)
	}
	n, err = r.ReadAt(buf, int64(len(data)))
	if n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("ReadAt at end: n=%d err=%v", n, err)
	}
	// The footer, as a Parquet reader reads it.
	n, err = r.ReadAt(buf[:8], int64(len(data)-8))
	if (err != nil && !errors.Is(err, io.EOF)) || n != 8 || !bytes.Equal(buf[:8], data[len(data)-8:]) {
		t.Fatalf("ReadAt footer: n=%d err=%v", n, err)
	}
}

func testZeroByte(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	put(t, s, "empty.json", nil)
	o, err := s.Stat(ctx, "empty.json")
	if err != nil || o.Size != 0 || o.IsDir {
		t.Fatalf("Stat = %+v, %v", o, err)
	}
	got, err := storage.ReadAll(ctx, s, "empty.json")
	if err != nil || len(got) != 0 {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
	w := walk(t, s, "")
	if len(w) != 1 || w[0].Key != "empty.json" || w[0].Size != 0 || w[0].IsDir {
		t.Fatalf("Walk = %+v", w)
	}
}

func testOverwrite(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	put(t, s, "k", []byte("one"))
	put(t, s, "k", []byte("second"))
	got, err := storage.ReadAll(ctx, s, "k")
	if err != nil || string(got) != "second" {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
}

// testChangedWhileRead: an object written again after it was opened reads as the version
// opened (a file system's open file) or fails with an error wrapping storage.ErrChanged (an
// object store's conditional read), never as the new bytes or a mix; one deleted after it was
// opened reads as the version opened, or fails with ErrChanged or ErrNotExist. ReadAll then
// reads the new version whole, or ErrNotExist.
func testChangedWhileRead(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	put(t, s, "k", []byte("first version"))
	r, err := s.Open(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "k", []byte("SECOND VERSION, longer"))
	buf := make([]byte, r.Size())
	n, err := r.ReadAt(buf, 0)
	r.Close()
	switch {
	case err == nil || errors.Is(err, io.EOF) && n == len(buf):
		if string(buf[:n]) != "first version" {
			t.Errorf("read %q of an object written again after Open, want the version opened", buf[:n])
		}
	case !errors.Is(err, storage.ErrChanged):
		t.Errorf("reading an object written again after Open: %v, want an error wrapping ErrChanged", err)
	}
	if got, err := storage.ReadAll(ctx, s, "k"); err != nil || string(got) != "SECOND VERSION, longer" {
		t.Errorf("ReadAll = %q, %v", got, err)
	}

	r, err = s.Open(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.Delete(ctx, []string{"k"}); err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("Delete = %+v, %v", res, err)
	}
	buf = make([]byte, r.Size())
	n, err = r.ReadAt(buf, 0)
	r.Close()
	switch {
	case err == nil || errors.Is(err, io.EOF) && n == len(buf):
		if string(buf[:n]) != "SECOND VERSION, longer" {
			t.Errorf("read %q of an object deleted after Open, want the version opened", buf[:n])
		}
	case !errors.Is(err, storage.ErrChanged) && !errors.Is(err, storage.ErrNotExist):
		t.Errorf("reading an object deleted after Open: %v, want ErrChanged or ErrNotExist", err)
	}
	if _, err := storage.ReadAll(ctx, s, "k"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("ReadAll of a deleted object: %v, want ErrNotExist", err)
	}
}

// walkOrderKeys make names whose byte order differs from the order of full keys ('-' and '.'
// sort before '/', '0' after it), upper case before lower case, '_' between them.
// ("a" is a directory only: a file system cannot hold a file and a directory of one name.)
var walkOrderKeys = []string{
	"a-b", "a.b", "a0", "a/x", "a/y/z", "a/y-1", "a/y.parquet",
	"B", "_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json",
	"_delta_log/_staged_commits/x.json", "b=1/c=2/part-0.parquet", "b=1/c=2/part-1.parquet",
	"b=1/part-2.parquet", "b=10/part-0.parquet", "b=2/part-0.parquet", "z",
}

func testWalkOrder(t *testing.T, s storage.Store) {
	putAll(t, s, walkOrderKeys)
	got := walk(t, s, "")
	want := ExpectedWalk(walkOrderKeys)
	var gotKeys []string
	for _, w := range got {
		gotKeys = append(gotKeys, w.Key)
		if w.IsDir != strings.HasSuffix(w.Key, "/") {
			t.Errorf("%q: IsDir=%v", w.Key, w.IsDir)
		}
		if w.IsDir && w.Size != 0 {
			t.Errorf("directory %q: size %d", w.Key, w.Size)
		}
		if !w.IsDir && w.Size != int64(len("content of "+w.Key)) {
			t.Errorf("%q: size %d, want %d", w.Key, w.Size, len("content of "+w.Key))
		}
		if !w.IsDir && w.Mod.IsZero() {
			t.Errorf("%q: zero modification time", w.Key)
		}
	}
	if !slices.Equal(gotKeys, want) {
		t.Fatalf("Walk order:\n got  %q\n want %q", gotKeys, want)
	}
}

func testWalkPrefix(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	putAll(t, s, walkOrderKeys)
	got := walkKeys(t, s, "a/")
	// Within a/: names "x", "y", "y-1", "y.parquet" in byte order ("y" < "y-1" < "y.parquet").
	want := []string{"a/x", "a/y/", "a/y/z", "a/y-1", "a/y.parquet"}
	if !slices.Equal(got, want) {
		t.Fatalf("Walk(a/) = %q, want %q", got, want)
	}
	got = walkKeys(t, s, "_delta_log/")
	want = []string{"_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json", "_delta_log/_staged_commits/", "_delta_log/_staged_commits/x.json"}
	if !slices.Equal(got, want) {
		t.Fatalf("Walk(_delta_log/) = %q, want %q", got, want)
	}
	err := s.Walk(ctx, "b=3/", func(storage.Object) error { return nil })
	mustNotExist(t, err, "Walk(b=3/)")
}

func testWalkSkipDir(t *testing.T, s storage.Store) {
	putAll(t, s, walkOrderKeys)
	var got []string
	err := s.Walk(ctxT(t), "", func(o storage.Object) error {
		got = append(got, o.Key)
		if o.Key == "_delta_log/" || o.Key == "b=1/c=2/" {
			return storage.SkipDir
		}
		if o.Key == "a0" {
			return storage.SkipDir // on a file: ignored
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, k := range ExpectedWalk(walkOrderKeys) {
		if (strings.HasPrefix(k, "_delta_log/") && k != "_delta_log/") || (strings.HasPrefix(k, "b=1/c=2/") && k != "b=1/c=2/") {
			continue
		}
		want = append(want, k)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Walk with SkipDir:\n got  %q\n want %q", got, want)
	}
}

func testWalkError(t *testing.T, s storage.Store) {
	putAll(t, s, walkOrderKeys)
	stop := errors.New("stop here")
	n := 0
	err := s.Walk(ctxT(t), "", func(o storage.Object) error {
		n++
		if o.Key == "a/y/" {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Walk returned %v, want the callback's error", err)
	}
	if want := slices.Index(ExpectedWalk(walkOrderKeys), "a/y/") + 1; n != want {
		t.Fatalf("callback ran %d times, want %d", n, want)
	}
}

// SpecialKeys are names that object stores, SDKs and URL encoders get wrong.
var SpecialKeys = []string{
	"p=00%3A00/part-00000.parquet", // Spark's escaped partition value: stored with a literal '%'
	"p=a%2Fb/f.parquet",            // an escaped '/' that must stay three characters
	"p=x y/with space.parquet",
	"p=1:2/colon:file",
	"plus+sign/a+b.parquet",
	"percent%25/100%.json",
	"unicode-é/日本語-ü.parquet",
	"_leading_underscore.json",
	"q?mark#hash&amp;=x.parquet",
	"tilde~!$'()*,;@.bin",
}

func testSpecialKeys(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	putAll(t, s, SpecialKeys)
	if got, want := walkKeys(t, s, ""), ExpectedWalk(SpecialKeys); !slices.Equal(got, want) {
		t.Fatalf("Walk:\n got  %q\n want %q", got, want)
	}
	for _, k := range SpecialKeys {
		o, err := s.Stat(ctx, k)
		if err != nil || o.Key != k || o.Size != int64(len("content of "+k)) {
			t.Errorf("Stat(%q) = %+v, %v", k, o, err)
			continue
		}
		got, err := storage.ReadAll(ctx, s, k)
		if err != nil || string(got) != "content of "+k {
			t.Errorf("ReadAll(%q) = %q, %v", k, got, err)
		}
		d := storage.Dir(k)
		if d == "" {
			continue
		}
		if got := walkKeys(t, s, d); !slices.Equal(got, []string{k}) {
			t.Errorf("Walk(%q) = %q, want [%q]", d, got, k)
		}
	}
	// Delete them under their real names: a file, then its (now empty) directory.
	res, err := s.Delete(ctx, SpecialKeys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Key != SpecialKeys[i] || r.Err != nil || r.Gone {
			t.Errorf("Delete result %d = %+v, want %q deleted", i, r, SpecialKeys[i])
		}
	}
	var dirs []string
	for _, k := range SpecialKeys {
		if d := storage.Dir(k); d != "" {
			dirs = append(dirs, d)
		}
	}
	res, err = s.Delete(ctx, dirs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Errorf("Delete(%q): %v", r.Key, r.Err)
		}
	}
	if got := walkKeys(t, s, ""); len(got) != 0 {
		t.Fatalf("after deleting everything, Walk = %q", got)
	}
}

// XMLUnsafeKeys are keys an XML 1.0 document cannot carry as they are (a control character,
// U+FFFE, a CR), beside XMLUnsafeTwin, the key an XML encoder writes for the first two (it
// puts U+FFFD in place of what XML cannot hold). S3 names the keys of a batch delete in XML.
var XMLUnsafeKeys = []string{"x/a\x01.parquet", "x/a\uFFFE.parquet", "x/a\r.parquet"}

// XMLUnsafeTwin is the key that deleting an XMLUnsafeKeys key through an XML request deletes
// instead.
const XMLUnsafeTwin = "x/a\uFFFD.parquet"

// testXMLUnsafeKeys: keys XML cannot hold are listed under their own names or the listing is
// refused (a store that ignores S3's encoding-type=url cannot name them truly; never under
// another key's name), and they are deleted under their own names, leaving their U+FFFD twin.
func testXMLUnsafeKeys(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	all := append([]string{XMLUnsafeTwin}, XMLUnsafeKeys...)
	putAll(t, s, all)
	t.Cleanup(func() { _, _ = s.Delete(context.Background(), all) })
	var got []string
	err := s.Walk(ctx, "", func(o storage.Object) error {
		got = append(got, o.Key)
		return nil
	})
	switch {
	case err != nil && strings.Contains(err.Error(), "without URL encoding"):
		t.Logf("the store cannot list these keys truly and the listing is refused: %v", err)
	case err != nil:
		t.Fatalf("Walk: %v", err)
	case !slices.Equal(got, ExpectedWalk(all)):
		t.Fatalf("Walk:\n got  %q\n want %q", got, ExpectedWalk(all))
	}
	res, err := s.Delete(ctx, XMLUnsafeKeys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Key != XMLUnsafeKeys[i] || r.Err != nil || r.Gone {
			t.Errorf("Delete result %d = %+v, want %q deleted", i, r, XMLUnsafeKeys[i])
		}
	}
	for _, k := range XMLUnsafeKeys {
		if _, err := s.Stat(ctx, k); !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("after deleting %q, Stat = %v, want ErrNotExist", k, err)
		}
	}
	if _, err := s.Stat(ctx, XMLUnsafeTwin); err != nil {
		t.Errorf("deleting the XML-unsafe keys deleted %q, another key: %v", XMLUnsafeTwin, err)
	}
}

// clockSkew is how far a store's modification times may be from this machine's clock (the
// test servers run here; second-resolution times are rounded down).
const clockSkew = 5 * time.Second

func inWindow(t *testing.T, what string, got, before, after time.Time) {
	t.Helper()
	if got.Before(before.Add(-clockSkew)) || got.After(after.Add(clockSkew)) {
		t.Errorf("%s: modification time %v not within [%v, %v] (±%v)", what, got, before, after, clockSkew)
	}
}

func testModTime(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	before := time.Now()
	put(t, s, "d/f.json", []byte("{}"))
	after := time.Now()
	o, err := s.Stat(ctx, "d/f.json")
	if err != nil {
		t.Fatal(err)
	}
	inWindow(t, "Stat", o.ModTime, before, after)
	for _, w := range walk(t, s, "") {
		if !w.IsDir {
			inWindow(t, "Walk "+w.Key, w.Mod, before, after)
		}
	}
}

func testOldModTime(t *testing.T, s storage.Store) {
	put(t, s, "old.parquet", []byte("x"))
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	ok, err := SetModTime(s, "old.parquet", old)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("the store's modification times are set by the server")
	}
	w := walk(t, s, "")
	if len(w) != 1 || !w[0].Mod.Equal(old) {
		t.Fatalf("Walk = %+v, want modification time %v", w, old)
	}
}

func testDirectoryMarker(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	before := time.Now()
	put(t, s, "empty/", nil)
	after := time.Now()
	put(t, s, "full/x", []byte("x"))
	put(t, s, "full/", nil)
	w := walk(t, s, "")
	var keys []string
	for _, e := range w {
		keys = append(keys, e.Key)
		if e.Key == "empty/" {
			if !e.IsDir {
				t.Errorf("empty/ is not a directory: %+v", e)
			}
			inWindow(t, "marker empty/", e.Mod, before, after)
		}
	}
	if want := []string{"empty/", "full/", "full/x"}; !slices.Equal(keys, want) {
		t.Fatalf("Walk = %q, want %q", keys, want)
	}
	o, err := s.Stat(ctx, "empty/")
	if err != nil || !o.IsDir || o.Key != "empty/" {
		t.Fatalf("Stat(empty/) = %+v, %v", o, err)
	}
	if got := walkKeys(t, s, "empty/"); len(got) != 0 {
		t.Fatalf("Walk(empty/) = %q", got)
	}
	res, err := s.Delete(ctx, []string{"empty/"})
	if err != nil || res[0].Err != nil || res[0].Gone {
		t.Fatalf("Delete(empty/) = %+v, %v; want deleted", res, err)
	}
	if exists(t, s, "empty/") {
		t.Fatal("empty/ still exists after its delete")
	}
	res, err = s.Delete(ctx, []string{"full/"})
	if err != nil || !errors.Is(res[0].Err, storage.ErrNotEmpty) {
		t.Fatalf("Delete(full/) = %+v, %v; want ErrNotEmpty", res, err)
	}
	if !exists(t, s, "full/x") {
		t.Fatal("full/x was deleted with its directory")
	}
}

func testDeleteDirectory(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	putAll(t, s, []string{"p=1/q=2/a.parquet", "p=1/q=2/b.parquet", "p=1/c.parquet"})
	res, err := s.Delete(ctx, []string{"p=1/q=2/", "p=1/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !errors.Is(r.Err, storage.ErrNotEmpty) {
			t.Errorf("Delete(%q) = %+v, want ErrNotEmpty", r.Key, r)
		}
	}
	if n := len(walk(t, s, "")); n != 5 {
		t.Fatalf("Walk after refused deletes: %d entries, want 5", n)
	}
	// Files, then directories bottom-up, in one call (files go first).
	res, err = s.Delete(ctx, []string{"p=1/q=2/a.parquet", "p=1/q=2/b.parquet", "p=1/q=2/", "p=1/c.parquet", "p=1/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Errorf("Delete(%q): %v", r.Key, r.Err)
		}
		if !strings.HasSuffix(r.Key, "/") && r.Gone {
			t.Errorf("Delete(%q): Gone, want deleted", r.Key)
		}
	}
	if got := walkKeys(t, s, ""); len(got) != 0 {
		t.Fatalf("Walk after deletes = %q", got)
	}
	res, err = s.Delete(ctx, []string{"never/existed/"})
	if err != nil || res[0].Err != nil || !res[0].Gone {
		t.Fatalf("Delete of a missing directory = %+v, %v; want Gone", res, err)
	}
}

func testDeleteMissing(t *testing.T, s storage.Store) {
	res, err := s.Delete(ctxT(t), []string{"missing.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Key != "missing.parquet" || res[0].Err != nil {
		t.Fatalf("Delete(missing) = %+v", res)
	}
	if !res[0].Gone && reportsGone(s) {
		t.Fatalf("Delete(missing) = %+v, want Gone", res)
	}
}

func testDeleteBatchWithMissing(t *testing.T, s storage.Store) {
	present := []string{"t/part-0.parquet", "t/part-1.parquet", "t/x=1/part-2.parquet", "t/part-3.parquet"}
	putAll(t, s, present)
	keys := []string{present[0], "t/missing-0.parquet", present[1], present[2], "t/missing-1.parquet", present[3]}
	res, err := s.Delete(ctxT(t), keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(keys) {
		t.Fatalf("%d results for %d keys", len(res), len(keys))
	}
	for i, r := range res {
		if r.Key != keys[i] || r.Err != nil {
			t.Errorf("result %d = %+v (key %q)", i, r, keys[i])
		}
		missing := strings.Contains(r.Key, "missing")
		if !missing && r.Gone {
			t.Errorf("%q: Gone, but it existed", r.Key)
		}
		if missing && !r.Gone && reportsGone(s) {
			t.Errorf("%q: not Gone, but it did not exist", r.Key)
		}
	}
	for _, k := range present {
		if exists(t, s, k) {
			t.Errorf("%q still exists", k)
		}
	}
}

func testDeleteMany(t *testing.T, s storage.Store) {
	var keys []string
	for i := range 300 {
		keys = append(keys, fmt.Sprintf("part=%d/file-%04d.parquet", i%3, i))
	}
	putAll(t, s, keys)
	res, err := s.Delete(ctxT(t), keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Key != keys[i] || r.Err != nil || r.Gone {
			t.Fatalf("result %d = %+v", i, r)
		}
	}
	for _, w := range walk(t, s, "") {
		if !w.IsDir {
			t.Fatalf("%q left after deleting all files", w.Key)
		}
	}
}

func testDeleteInvalid(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	put(t, s, "ok", []byte("x"))
	keys := []string{"../escape", "/abs", "a//b", "", "ok"}
	res, err := s.Delete(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res[:4] {
		if r.Err == nil {
			t.Errorf("Delete(%q) = %+v, want an error", keys[i], r)
		}
	}
	if r := res[4]; r.Err != nil || r.Gone {
		t.Errorf("Delete(ok) = %+v", r)
	}
	for _, k := range []string{"../x", "/x", "a//b", ""} {
		if err := s.Put(ctx, k, []byte("x")); err == nil {
			t.Errorf("Put(%q) succeeded", k)
		}
	}
}

func testPutIfAbsent(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	key := "_delta_log/00000000000000000007.json"
	if err := s.PutIfAbsent(ctx, key, []byte("first")); err != nil {
		t.Fatal(err)
	}
	err := s.PutIfAbsent(ctx, key, []byte("second"))
	if !errors.Is(err, storage.ErrExist) {
		t.Fatalf("second PutIfAbsent = %v, want ErrExist", err)
	}
	got, err := storage.ReadAll(ctx, s, key)
	if err != nil || string(got) != "first" {
		t.Fatalf("content = %q, %v; want the first writer's", got, err)
	}
}

func testPutIfAbsentRace(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	const writers, rounds = 8, 4
	for round := range rounds {
		key := fmt.Sprintf("_delta_log/%020d.json", round)
		errs := make([]error, writers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[w] = s.PutIfAbsent(ctx, key, []byte(fmt.Sprintf("writer %d", w)))
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won", round, winner, w)
				}
				winner = w
			case !errors.Is(err, storage.ErrExist):
				t.Fatalf("round %d: writer %d: %v", round, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		got, err := storage.ReadAll(ctx, s, key)
		if err != nil || string(got) != fmt.Sprintf("writer %d", winner) {
			t.Fatalf("round %d: content %q, %v; winner was %d", round, got, err, winner)
		}
	}
}

func testCancellation(t *testing.T, s storage.Store) {
	putAll(t, s, walkOrderKeys)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Walk(ctx, "", func(storage.Object) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Walk with a canceled context = %v", err)
	}
	res, err := s.Delete(ctx, []string{"a-b", "z", "B"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Delete with a canceled context = %v", err)
	}
	for _, r := range res {
		if r.Err == nil {
			t.Errorf("Delete(%q) with a canceled context reported success", r.Key)
		}
	}
	for _, k := range []string{"a-b", "z", "B"} {
		if !exists(t, s, k) {
			t.Errorf("%q was deleted with a canceled context", k)
		}
	}
	// Canceled during the walk.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err = s.Walk(ctx, "", func(o storage.Object) error {
		n++
		if o.Key == "a/" {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Walk canceled midway = %v after %d entries", err, n)
	}
}

func testLocation(t *testing.T, s storage.Store) {
	loc := s.Location()
	if loc == "" {
		t.Fatal("empty Location")
	}
	if !strings.Contains(loc, "://") {
		t.Errorf("Location %q is not a URI", loc)
	}
}

// fileContent is what belowFile writes at the file "f".
const fileContent = "a file where a folder could be"

// How a store takes a key below a file (f/x where f is a file).
type belowKind int

const (
	// flat: a store without directories (an object store): a file f and a key f/x are
	// unrelated, f/x is written, moved to and deleted as any key.
	flat belowKind = iota
	// dirs: a store with directories (local disk, a hierarchical-namespace account): every
	// write, delete and move of f/x is ErrNotDir, never ErrNotExist.
	dirs
	// opaque: an object store whose server keeps objects as files (an S3 gateway on a file
	// system: versitygw answers 409 ObjectParentIsFile), which refuses the write of f/x in its
	// own words. The API has no directories, so the store cannot tell ErrNotDir from the rest:
	// only what holds everywhere is checked (no move fails with ErrNotExist for its target,
	// nothing leaves its place, f is left as it is).
	opaque
)

// belowFile writes the file "f" and tells how the store takes a key below it, by writing the
// key "f/probe": a store with directories refuses it with ErrNotDir (never ErrNotExist); one
// without writes it (then deleted again).
func belowFile(t *testing.T, s storage.Store) belowKind {
	t.Helper()
	ctx := ctxT(t)
	put(t, s, "f", []byte(fileContent))
	err := s.Put(ctx, "f/probe", []byte("probe"))
	switch {
	case err == nil:
		res, err := s.Delete(ctx, []string{"f/probe"})
		if err != nil || res[0].Err != nil || res[0].Gone {
			t.Fatalf("Delete(f/probe) = %+v, %v", res, err)
		}
		return flat
	case errors.Is(err, storage.ErrNotDir) && !errors.Is(err, storage.ErrNotExist):
		return dirs
	case errors.Is(err, storage.ErrNotExist) || errors.Is(err, storage.ErrNotDir):
		t.Errorf("Put(f/probe) where f is a file: %v; want ErrNotDir, not ErrNotExist", err)
		return dirs
	}
	t.Logf("Put(f/probe) where f is a file: %v; only what holds on every store is checked", err)
	return opaque
}

// fileIntact fails the test unless "f" is still the file belowFile wrote.
func fileIntact(t *testing.T, s storage.Store) {
	t.Helper()
	got, err := storage.ReadAll(ctxT(t), s, "f")
	if err != nil || string(got) != fileContent {
		t.Fatalf("the file f after the test: %q, %v; want it unchanged", got, err)
	}
}

// A key below a file (f/x where f is a file) is not Gone on a store with directories: its
// folder was replaced since it was listed, and nothing says the file is gone. Stat and Open
// of such a key are ErrNotExist (for a listing, nothing is there).
func testDeleteBelowFile(t *testing.T, s storage.Store) {
	ctx := ctxT(t)
	kind := belowFile(t, s)
	keys := []string{"f/x.parquet", "f/sub/y.parquet", "f/sub/"}
	res, err := s.Delete(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(keys) {
		t.Fatalf("%d results for %d keys", len(res), len(keys))
	}
	for i, r := range res {
		switch {
		case r.Key != keys[i]:
			t.Errorf("result %d = %+v (key %q)", i, r, keys[i])
		case kind == dirs && (r.Gone || !errors.Is(r.Err, storage.ErrNotDir) || errors.Is(r.Err, storage.ErrNotExist)):
			t.Errorf("Delete(%q) where f is a file = %+v; want an error wrapping ErrNotDir, not ErrNotExist, and not Gone", r.Key, r)
		case kind == flat && r.Err != nil:
			t.Errorf("Delete(%q) beside a file f, on a store without directories = %+v; want Gone", r.Key, r)
		case kind == flat && !r.Gone && reportsGone(s):
			t.Errorf("Delete(%q) beside a file f, on a store without directories = %+v; want Gone", r.Key, r)
		}
	}
	for _, k := range []string{"f/x.parquet", "f/sub/y.parquet"} {
		_, err := s.Stat(ctx, k)
		mustNotExist(t, err, "Stat("+k+") where f is a file")
		_, err = s.Open(ctx, k)
		mustNotExist(t, err, "Open("+k+") where f is a file")
	}
	fileIntact(t, s)
}

// A move to a key below a file (the trash folder is a file, or a file stands where the folder
// of a file to restore was) fails with ErrNotDir on a store with directories, never
// ErrNotExist (the caller would take the file for gone), and leaves the file where it is. On
// a store without directories the key is free, and the move goes through.
func testMoveToBelowFile(t *testing.T, s storage.Store) {
	if !storage.CanMove(s) {
		t.Skipf("%T cannot move", s)
	}
	m := s.(storage.Mover)
	ctx := ctxT(t)
	kind := belowFile(t, s)
	for _, to := range []string{"f/x.parquet", "f/r1/a/x.parquet"} {
		data := []byte("the bytes of a file moved to " + to)
		from := "part=1/part-0 " + storage.Base(to)
		put(t, s, from, data)
		err := m.Move(ctx, from, to)
		if err == nil && kind != dirs {
			if got, err := storage.ReadAll(ctx, s, to); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s after the move: %q, %v", to, got, err)
			}
			_, err = s.Stat(ctx, from)
			mustNotExist(t, err, "Stat("+from+") after the move")
			continue
		}
		switch {
		case kind == flat:
			t.Fatalf("Move(%q, %q) beside a file f, on a store without directories: %v", from, to, err)
		case errors.Is(err, storage.ErrNotExist):
			t.Fatalf("Move(%q, %q) where f is a file: %v; the target's problem must never be ErrNotExist", from, to, err)
		case kind == dirs && !errors.Is(err, storage.ErrNotDir):
			t.Fatalf("Move(%q, %q) where f is a file: %v; want ErrNotDir", from, to, err)
		}
		if got, err := storage.ReadAll(ctx, s, from); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s after a failed move: %q, %v; want it in place", from, got, err)
		}
		_, err = s.Stat(ctx, to)
		mustNotExist(t, err, "Stat("+to+") after a failed move")
	}
	fileIntact(t, s)
}

// A move from a key below a file: nothing is there, and nothing arrives at to. On a store with
// directories the error is ErrNotDir, as a delete of that key is; elsewhere the key is simply
// missing (ErrNotExist).
func testMoveFromBelowFile(t *testing.T, s storage.Store) {
	if !storage.CanMove(s) {
		t.Skipf("%T cannot move", s)
	}
	m := s.(storage.Mover)
	ctx := ctxT(t)
	kind := belowFile(t, s)
	for _, from := range []string{"f/x.parquet", "f/sub/x.parquet"} {
		err := m.Move(ctx, from, "_trash/r1/"+from)
		switch {
		case err == nil:
			t.Errorf("Move(%q) of a key never written: no error", from)
		case kind == dirs && (!errors.Is(err, storage.ErrNotDir) || errors.Is(err, storage.ErrNotExist)):
			t.Errorf("Move(%q) where f is a file: %v; want ErrNotDir, not ErrNotExist", from, err)
		case kind == flat && !errors.Is(err, storage.ErrNotExist):
			t.Errorf("Move(%q) of a key never written: %v; want ErrNotExist", from, err)
		}
		_, err = s.Stat(ctx, "_trash/r1/"+from)
		mustNotExist(t, err, "Stat of the target of a failed move")
	}
	fileIntact(t, s)
}

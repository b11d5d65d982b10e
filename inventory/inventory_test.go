package inventory

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
)

// specialRows is an inventory of dir with every kind of row the listing must handle.
func specialRows(dir string) []row {
	return []row{
		{Path: "file:" + dir + "/part-0.parquet", Length: 10, ModificationTime: 1000},
		// file:// + absolute path is file:///...; the directory is literally "p=a%3Ab".
		{Path: "file://" + dir + "/p=a%3Ab/x.parquet", Length: 20, ModificationTime: 2000},
		// A path without scheme, with spaces, unicode, ':', '=' and '%'; its parents are implied.
		{Path: dir + "/a b/c d/f ü:=%.parquet", Length: 30, ModificationTime: 3000},
		{Path: "file:" + dir + "/a b", IsDir: true, ModificationTime: 6000},
		// An empty directory.
		{Path: "file:" + dir + "/empty", IsDir: true, ModificationTime: 4000},
		// Hidden-looking paths are the planner's business.
		{Path: "file:" + dir + "/_delta_log/00000000000000000000.json", Length: 1, ModificationTime: 5000},
		{Path: "file:" + dir + "/.hidden/x", Length: 2, ModificationTime: 5000},
		// One key twice: the latest row wins.
		{Path: "file:" + dir + "/dup", Length: 1, ModificationTime: 1},
		{Path: "file:" + dir + "/dup", Length: 2, ModificationTime: 9},
		// Outside the root.
		{Path: "file:" + dir + "_sibling/x", Length: 1, ModificationTime: 1},
		{Path: "file:/elsewhere/x", Length: 1, ModificationTime: 1},
		{Path: "s3://bucket" + dir + "/x", Length: 1, ModificationTime: 1},
		// The root itself.
		{Path: "file:" + dir, IsDir: true, ModificationTime: 1},
		// Inside, but not a clean key.
		{Path: "file:" + dir + "/a//b", Length: 1, ModificationTime: 1},
	}
}

var specialListing = []string{
	".hidden/ 0 -",
	".hidden/x 2 5000",
	"_delta_log/ 0 -",
	"_delta_log/00000000000000000000.json 1 5000",
	"a b/ 0 6000",
	"a b/c d/ 0 -",
	"a b/c d/f ü:=%.parquet 30 3000",
	"dup 2 9",
	"empty/ 0 4000",
	"p=a%3Ab/ 0 -",
	"p=a%3Ab/x.parquet 20 2000",
	"part-0.parquet 10 1000",
}

func TestParquetListing(t *testing.T) {
	dir, root := tableRoot(t)
	inv := filepath.Join(t.TempDir(), "inventory.parquet")
	writeParquet(t, inv, specialRows(dir))
	for _, format := range []Format{"", FormatAuto, FormatParquet} {
		l := open(t, Source{Location: inv, Format: format}, root)
		diff(t, walk(t, l, ""), specialListing)
		if l.Rows() != 14 || l.Ignored() != 3 || l.Invalid() != 1 || l.Len() != 8 {
			t.Errorf("format %q: rows %d, ignored %d, invalid %d, len %d; want 14, 3, 1, 8", format, l.Rows(), l.Ignored(), l.Invalid(), l.Len())
		}
	}
}

func TestWalkPrefixAndSkipDir(t *testing.T) {
	dir, root := tableRoot(t)
	inv := filepath.Join(t.TempDir(), "inventory.parquet")
	writeParquet(t, inv, specialRows(dir))
	l := open(t, Source{Location: "file://" + inv}, root)

	diff(t, walk(t, l, "a b/"), []string{"a b/c d/ 0 -", "a b/c d/f ü:=%.parquet 30 3000"})
	diff(t, walk(t, l, "a b/c d/"), []string{"a b/c d/f ü:=%.parquet 30 3000"})
	diff(t, walk(t, l, "p=a%3Ab/"), []string{"p=a%3Ab/x.parquet 20 2000"})
	if _, err := walkErr(l, "nope/", nil); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Walk of a missing prefix: got %v, want ErrNotExist", err)
	}
	if _, err := walkErr(l, "p=a:b/", nil); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Walk of the decoded name: got %v, want ErrNotExist (inventory paths are raw)", err)
	}

	// SkipDir on an explicit directory, on an implied one, and on a nested implied one.
	got, err := walkErr(l, "", map[string]bool{"a b/": true, "_delta_log/": true, ".hidden/": true, "p=a%3Ab/": true})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, got, []string{".hidden/ 0 -", "_delta_log/ 0 -", "a b/ 0 6000", "dup 2 9", "empty/ 0 4000", "p=a%3Ab/ 0 -", "part-0.parquet 10 1000"})
	got, err = walkErr(l, "", map[string]bool{"a b/c d/": true})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, got, []string{".hidden/ 0 -", ".hidden/x 2 5000", "_delta_log/ 0 -", "_delta_log/00000000000000000000.json 1 5000",
		"a b/ 0 6000", "a b/c d/ 0 -", "dup 2 9", "empty/ 0 4000", "p=a%3Ab/ 0 -", "p=a%3Ab/x.parquet 20 2000", "part-0.parquet 10 1000"})

	// Any other error stops the walk.
	stop := errors.New("stop")
	n := 0
	err = l.Walk(context.Background(), "", func(storage.Object) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Errorf("got %v after %d objects, want the callback's error after 3", err, n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Walk(ctx, "", func(storage.Object) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Walk with a cancelled context: got %v", err)
	}
}

// TestWalkOrder checks the order storage.Store.Walk promises on names that sort differently as
// whole keys: "a-b" < "a/" bytewise, but the directory a comes before the file a-b.
func TestWalkOrder(t *testing.T) {
	dir, root := tableRoot(t)
	inv := filepath.Join(t.TempDir(), "inventory.parquet")
	var rows []row
	for _, k := range []string{"a-b", "a/x", "a.c", "a", "a/ y", "a/y/z", "a\x01", "ab/c", "a b"} {
		rows = append(rows, row{Path: "file:" + dir + "/" + k, Length: 1, ModificationTime: 7})
	}
	writeParquet(t, inv, rows)
	l := open(t, Source{Location: inv}, root)
	diff(t, walk(t, l, ""), []string{
		"a 1 7", "a/ 0 -", "a/ y 1 7", "a/x 1 7", "a/y/ 0 -", "a/y/z 1 7",
		"a\x01 1 7", "a b 1 7", "a-b 1 7", "a.c 1 7", "ab/ 0 -", "ab/c 1 7",
	})
}

func TestRootForms(t *testing.T) {
	dir, root := tableRoot(t)
	for _, tc := range []struct {
		name, root string
	}{
		{"file URI", root},
		{"file URI with slash", root + "/"},
		{"file: without authority", "file:" + dir},
		{"localhost", "file://localhost" + dir},
		{"absolute path", dir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := filepath.Join(t.TempDir(), "inventory.parquet")
			writeParquet(t, inv, specialRows(dir))
			l := open(t, Source{Location: inv}, tc.root)
			diff(t, walk(t, l, ""), specialListing)
		})
	}
}

func TestRootWithEscapedCharacters(t *testing.T) {
	// storage/local percent-encodes the root's URI; inventory paths are raw.
	base := t.TempDir()
	dir := filepath.Join(base, "t a%b")
	root := "file://" + filepath.ToSlash(base) + "/t%20a%25b"
	inv := filepath.Join(t.TempDir(), "inventory.parquet")
	writeParquet(t, inv, []row{
		{Path: "file:" + dir + "/x", Length: 1, ModificationTime: 1},
		{Path: "file:" + base + "/t%20a%25b/y", Length: 1, ModificationTime: 1}, // another directory
	})
	l := open(t, Source{Location: inv}, root)
	diff(t, walk(t, l, ""), []string{"x 1 1"})
	if l.Ignored() != 1 {
		t.Errorf("ignored %d, want 1", l.Ignored())
	}
}

func TestObjectStoreRoots(t *testing.T) {
	for _, tc := range []struct {
		root  string
		paths []string // the first ones inside, then the outside ones
		in    int
	}{
		{"s3://bucket/t", []string{"s3://bucket/t/x", "s3a://bucket/t/y", "S3N://BUCKET/t/z", "s3://bucket/tt/x", "s3://other/t/x", "gs://bucket/t/x", "/t/x"}, 3},
		{"s3a://bucket/t", []string{"s3://bucket/t/x"}, 1},
		{"abfss://c@acct.dfs.core.windows.net/t", []string{
			"abfss://c@acct.dfs.core.windows.net/t/x", "abfs://c@acct.blob.core.windows.net/t/y", "wasbs://c@ACCT.blob.core.windows.net/t/z",
			"abfss://d@acct.dfs.core.windows.net/t/x", "abfss://c@other.dfs.core.windows.net/t/x", "abfss://acct.dfs.core.windows.net/t/x"}, 3},
		{"s3://bucket", []string{"s3://bucket/x", "s3://bucket2/x"}, 1},
	} {
		t.Run(tc.root, func(t *testing.T) {
			inv := filepath.Join(t.TempDir(), "inventory.parquet")
			var rows []row
			for _, p := range tc.paths {
				rows = append(rows, row{Path: p, Length: 1, ModificationTime: 1})
			}
			writeParquet(t, inv, rows)
			l := open(t, Source{Location: inv}, tc.root)
			if l.Len() != tc.in || l.Ignored() != int64(len(tc.paths)-tc.in) {
				t.Errorf("len %d, ignored %d; want %d, %d: %q", l.Len(), l.Ignored(), tc.in, len(tc.paths)-tc.in, walk(t, l, ""))
			}
		})
	}
}

func TestInvalidRows(t *testing.T) {
	dir, root := tableRoot(t)
	type nrow struct {
		Path             *string `parquet:"path,optional"`
		Length           *int64  `parquet:"length,optional"`
		IsDir            *bool   `parquet:"isDir,optional"`
		ModificationTime *int64  `parquet:"modificationTime,optional"`
	}
	s := func(v string) *string { return &v }
	i := func(v int64) *int64 { return &v }
	b := func(v bool) *bool { return &v }
	for _, tc := range []struct {
		name string
		row  nrow
		want string // "" when the row is fine
	}{
		{"no length", nrow{s("file:" + dir + "/x"), nil, b(false), i(1)}, "has no length"},
		{"negative length", nrow{s("file:" + dir + "/x"), i(-1), b(false), i(1)}, "negative length"},
		{"no time", nrow{s("file:" + dir + "/x"), i(1), b(false), nil}, "has no modificationTime"},
		{"no isDir", nrow{s("file:" + dir + "/x"), i(1), nil, i(1)}, "has no isDir"},
		{"directory without length or time", nrow{s("file:" + dir + "/d"), nil, b(true), nil}, ""},
		{"directory by its trailing slash", nrow{s("file:" + dir + "/d/"), nil, nil, nil}, ""},
		{"no path", nrow{nil, nil, nil, nil}, ""},
		{"outside, without anything", nrow{s("file:/elsewhere/x"), nil, nil, nil}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := filepath.Join(t.TempDir(), "inventory.parquet")
			writeParquet(t, inv, []nrow{tc.row})
			_, err := Open(context.Background(), Source{Location: inv}, root, Options{})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidRow) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), inv+" row 1") {
				t.Errorf("got %v, want ErrInvalidRow %q naming the file and row", err, tc.want)
			}
		})
	}
}

func TestEmptyDirectoryRow(t *testing.T) {
	dir, root := tableRoot(t)
	inv := filepath.Join(t.TempDir(), "inventory.parquet")
	writeParquet(t, inv, []row{
		{Path: "file:" + dir + "/p=1/", IsDir: true, ModificationTime: 11},
		{Path: "file:" + dir + "/p=2", IsDir: true, ModificationTime: 12},
		{Path: "file:" + dir + "/p=2/q=3", IsDir: true, ModificationTime: 13},
	})
	l := open(t, Source{Location: inv}, root)
	diff(t, walk(t, l, ""), []string{"p=1/ 0 11", "p=2/ 0 12", "p=2/q=3/ 0 13"})
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"": FormatAuto, "AUTO": FormatAuto, "Delta": FormatDelta, "parquet": FormatParquet, "csv": FormatCSV, "azure": FormatAzure, "S3": FormatS3} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseFormat("orc"); err == nil {
		t.Error("ParseFormat(orc) succeeded")
	}
}

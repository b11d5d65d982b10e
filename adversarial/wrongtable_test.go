package adversarial

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRelativeFileURIVacuumsTheTableItNames: `deltavacuum vacuum file:../t4`, run inside
// another table, vacuumed the working directory (the URI's path was read as empty). A
// relative file: URI names a directory relative to the working directory, as Hadoop reads it.
func TestRelativeFileURIVacuumsTheTableItNames(t *testing.T) {
	parent := t.TempDir()
	here := newLocalTableIn(t, filepath.Join(parent, "t3"))
	here.file("junk-of-t3.parquet", 30*day)
	there := newLocalTableIn(t, filepath.Join(parent, "t4"))
	there.file("junk-of-t4.parquet", 30*day)
	t.Chdir(here.dir)
	for _, uri := range []string{"file:../t4", "../t4", "file:" + filepath.ToSlash(filepath.Join(parent, "t4"))} {
		there.file("junk-of-t4.parquet", 30*day)
		if code, stderr := vacuumNow(t, uri); code != 0 {
			t.Fatalf("%s: exit %d: %s", uri, code, stderr)
		}
		if there.exists("junk-of-t4.parquet") {
			t.Errorf("%s: the table it names was not vacuumed", uri)
		}
		here.mustExist("junk-of-t3.parquet")
	}
}

// TestFileURIsThatNameNothingAreRefused: a file: URI whose path is empty, or that carries a
// query, a fragment or another host, is refused before anything is read: any reading of it
// could be another directory than the one meant.
func TestFileURIsThatNameNothingAreRefused(t *testing.T) {
	tb := newLocalTable(t)
	tb.file("junk.parquet", 30*day)
	t.Chdir(tb.dir)
	abs := "file://" + filepath.ToSlash(tb.dir)
	for _, uri := range []string{"file:", "file://", abs + "?x=1", abs + "#frag", "file://otherhost" + filepath.ToSlash(tb.dir), ""} {
		code, stderr := vacuumNow(t, uri)
		if code == 0 {
			t.Errorf("%q: exit 0, want a refusal", uri)
		}
		if uri != "" && !strings.Contains(stderr, "file") {
			t.Errorf("%q: the message %q does not say what is wrong with the location", uri, stderr)
		}
		tb.mustExist("junk.parquet")
	}
}

// TestPartitionDirectoryIsNotATable: a directory inside a table, named by a relative path or
// a file: URI, is refused (its files are the table's live files).
func TestPartitionDirectoryIsNotATable(t *testing.T) {
	tb := newLocalTable(t)
	tb.commit(addLine("p=1/live.parquet"))
	tb.file("p=1/live.parquet", 30*day)
	t.Chdir(tb.dir)
	for _, uri := range []string{"p=1", "file:p=1", "./p=1/", "file://" + filepath.ToSlash(filepath.Join(tb.dir, "p=1"))} {
		code, stderr := vacuumNow(t, uri)
		if code != 1 || !strings.Contains(stderr, "inside the Delta table") {
			t.Errorf("%q: exit %d, %q; want a refusal naming the table it lies in", uri, code, stderr)
		}
		tb.mustExist("p=1/live.parquet")
	}
	if _, err := os.Stat(filepath.Join(tb.dir, "_delta_log")); err != nil {
		t.Fatal(err)
	}
}

// TestNestedTableIsLeftAlone: a Delta table saved into a folder of another table is not the
// outer table's to vacuum: its files, live in it, are named by no action of the outer log.
func TestNestedTableIsLeftAlone(t *testing.T) {
	outer := newLocalTable(t)
	inner := newLocalTableIn(t, filepath.Join(outer.dir, "inner"))
	inner.commit(addLine("A.parquet"), addLine("part-0.parquet"))
	inner.file("A.parquet", 30*day) // sorts before _delta_log
	inner.file("part-0.parquet", 30*day)
	outer.file("junk.parquet", 30*day)
	code, out, stderr := run(t, "vacuum", outer.dir, "--retain-hours", "0", "--conf", checkOff)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	outer.mustExist("inner/A.parquet", "inner/part-0.parquet", "inner/_delta_log/00000000000000000000.json")
	if outer.exists("junk.parquet") {
		t.Error("the outer table's own junk was kept")
	}
	if !strings.Contains(stderr, "inner/ holds a _delta_log of its own") {
		t.Errorf("no warning about the nested table: %q %q", out, stderr)
	}
}

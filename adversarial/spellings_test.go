package adversarial

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneFileSeveralSpellings: a log path that can be read more than one way keeps the file
// whichever reading names it: '#' and '?' (a fragment and a query to a URI parser, part of the
// name to a writer that did not escape them), file://localhost/, a relative and an absolute
// spelling, '%' left unescaped, '+' for a space, Unicode NFC and NFD, and the case a
// case-insensitive file system ignores.
func TestOneFileSeveralSpellings(t *testing.T) {
	tb := newLocalTable(t)
	abs := "file://" + filepath.ToSlash(tb.dir)
	cases := []struct{ logPath, onDisk string }{
		{"a#1.parquet", "a#1.parquet"},
		{"b#1.parquet", "b"},
		{"c?x=1.parquet", "c?x=1.parquet"},
		{"d?x=1.parquet", "d"},
		{"file://localhost" + filepath.ToSlash(tb.dir) + "/e.parquet", "e.parquet"},
		{abs + "/f.parquet", "f.parquet"},
		{"p=10%3A00/g.parquet", "p=10%3A00/g.parquet"}, // '%' that the writer did not escape
		{"h+1.parquet", "h 1.parquet"},
		{"caf%C3%A9.parquet", "cafe\u0301.parquet"},
		{"Part-0.parquet", "part-0.parquet"},
		{abs + "/i%23x.parquet", "i#x.parquet"},
	}
	var adds []string
	for _, c := range cases {
		adds = append(adds, addLine(c.logPath))
		tb.file(c.onDisk, 30*day)
	}
	tb.commit(adds...)
	tb.file("junk.parquet", 30*day)
	if code, stderr := vacuumNow(t, tb.dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, c := range cases {
		if !tb.exists(c.onDisk) {
			t.Errorf("%s (the log says %s) was deleted: it is live", c.onDisk, c.logPath)
		}
	}
	if tb.exists("junk.parquet") {
		t.Error("junk.parquet was kept: the vacuum did not run")
	}
}

// TestOneVersionTwoFiles: 1.json beside 00000000000000000001.json is two claims on version 1
// (Spark's \d+\.json reads both); whichever holds the live files, the table is refused.
func TestOneVersionTwoFiles(t *testing.T) {
	tb := newLocalTable(t)
	tb.commit(addLine("a.parquet"))
	tb.file("a.parquet", 30*day)
	tb.file("b.parquet", 30*day)
	if err := os.WriteFile(filepath.Join(tb.dir, "_delta_log", "1.json"), []byte(addLine("b.parquet")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := vacuumNow(t, tb.dir)
	if code != 1 || !strings.Contains(stderr, "two commit files claim version 1") {
		t.Errorf("exit %d, %q; want a refusal naming both files", code, stderr)
	}
	tb.mustExist("a.parquet", "b.parquet")
}

// TestWriterFeatures: a feature about the content of data files does not stop VACUUM (Spark
// vacuums such tables); commits kept outside _delta_log/ (coordinated, catalog-managed) and
// unknown features do, before anything is listed.
func TestWriterFeatures(t *testing.T) {
	protocol := func(writer ...string) string {
		return fmt.Sprintf(`{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["%s"]}}`, strings.Join(writer, `","`))
	}
	t.Run("materializePartitionColumns", func(t *testing.T) {
		tb := newLocalTableIn(t, t.TempDir(), protocol("materializePartitionColumns", "appendOnly", "invariants"), metadataLine)
		tb.commit(addLine("live.parquet"))
		tb.file("live.parquet", 30*day)
		tb.file("junk.parquet", 30*day)
		if code, stderr := vacuumNow(t, tb.dir); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		tb.mustExist("live.parquet")
		if tb.exists("junk.parquet") {
			t.Error("junk.parquet was kept")
		}
	})
	for _, f := range []string{"coordinatedCommits-preview", "someFutureFeature", "MaterializePartitionColumns"} {
		t.Run(f, func(t *testing.T) {
			tb := newLocalTableIn(t, t.TempDir(), protocol(f), metadataLine)
			tb.file("junk.parquet", 30*day)
			code, stderr := vacuumNow(t, tb.dir)
			if code != 1 || !strings.Contains(stderr, f) {
				t.Errorf("exit %d, %q; want a refusal naming %s", code, stderr, f)
			}
			tb.mustExist("junk.parquet")
		})
	}
	t.Run("unbackfilled coordinated commits", func(t *testing.T) {
		tb := newLocalTable(t)
		tb.file("_delta_log/_commits/00000000000000000001.0a1b2c3d-0000-4000-8000-000000000000.json", day)
		tb.file("junk.parquet", 30*day)
		code, stderr := vacuumNow(t, tb.dir)
		if code != 1 || !strings.Contains(stderr, "_delta_log/_commits/") {
			t.Errorf("exit %d, %q; want a refusal", code, stderr)
		}
		tb.mustExist("junk.parquet")
	})
}

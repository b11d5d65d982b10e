package inventory

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestLargeParquet reads a file of many row groups and pages, dictionary-encoded, with nulls.
func TestLargeParquet(t *testing.T) {
	type bigRow struct {
		Path             string `parquet:"path,dict"`
		Length           int64  `parquet:"length,delta"`
		IsDir            bool   `parquet:"isDir"`
		ModificationTime *int64 `parquet:"modificationTime,optional"`
		Extra            string `parquet:"extra,dict"`
	}
	dir, root := tableRoot(t)
	const n = 20000
	rows := make([]bigRow, n)
	for i := range rows {
		mt := int64(i)
		rows[i] = bigRow{Path: fmt.Sprintf("file:%s/d%02d/f%05d", dir, i%7, i), ModificationTime: &mt, Extra: fmt.Sprint(i % 3)}
		if i%5 == 0 {
			rows[i].IsDir = true
			rows[i].ModificationTime = nil
		} else {
			rows[i].Length = int64(i)
		}
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[bigRow](&buf, parquet.MaxRowsPerRowGroup(3000), parquet.PageBufferSize(2048))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(t.TempDir(), "big.parquet")
	writeFile(t, inv, buf.Bytes())
	l := open(t, Source{Location: inv, Query: query(t, "SELECT * FROM inventory WHERE extra != '1'")}, root)
	got := walk(t, l, "")
	var want []string
	seen := map[int]bool{}
	for d := range 7 {
		want = append(want, fmt.Sprintf("d%02d/ 0 -", d))
		for i := d; i < n; i += 7 {
			if i%3 == 1 {
				continue
			}
			seen[i] = true
		}
		for i := 0; i < n; i++ {
			if !seen[i] || i%7 != d {
				continue
			}
			if i%5 == 0 {
				want = append(want, fmt.Sprintf("d%02d/f%05d/ 0 -", d, i))
			} else {
				want = append(want, fmt.Sprintf("d%02d/f%05d %d %d", d, i, i, i))
			}
		}
	}
	diff(t, got, want)
	if l.Rows() != int64(len(seen)) {
		t.Errorf("rows %d, want %d", l.Rows(), len(seen))
	}
}

func TestDetection(t *testing.T) {
	dir, root := tableRoot(t)
	rows := []row{{Path: "file:" + dir + "/a", Length: 1, ModificationTime: 2}}

	t.Run("directory of Parquet files", func(t *testing.T) {
		inv := filepath.Join(t.TempDir(), "inventory")
		writeParquet(t, filepath.Join(inv, "part-00000.snappy.parquet"), rows)
		writeParquet(t, filepath.Join(inv, "p=1", "part-00001.parquet"), []row{{Path: "file:" + dir + "/b", Length: 1, ModificationTime: 3}})
		writeFile(t, filepath.Join(inv, "_SUCCESS"), nil)
		writeFile(t, filepath.Join(inv, "_tmp", "junk.parquet"), []byte("junk"))
		writeFile(t, filepath.Join(inv, ".part-00000.snappy.parquet.crc"), []byte("crc"))
		for _, f := range []Format{FormatAuto, FormatParquet} {
			diff(t, walk(t, open(t, Source{Location: inv, Format: f}, root), ""), []string{"a 1 2", "b 1 3"})
		}
		diff(t, walk(t, open(t, Source{Query: query(t, "SELECT * FROM parquet.`"+inv+"`")}, root), ""), []string{"a 1 2", "b 1 3"})
	})
	t.Run("Parquet file without extension", func(t *testing.T) {
		inv := filepath.Join(t.TempDir(), "inventory")
		writeParquet(t, inv, rows)
		diff(t, walk(t, open(t, Source{Location: inv}, root), ""), []string{"a 1 2"})
	})
	for _, tc := range []struct {
		name  string
		files map[string]string
		f     Format
		want  string
	}{
		{"mixed formats", map[string]string{"a.csv": "x", "b.parquet": "y"}, FormatAuto, "holds both Parquet and CSV files"},
		{"no data files", map[string]string{"_SUCCESS": "", "notes.txt": "x"}, FormatAuto, "holds no Delta table, manifest, Parquet or CSV file"},
		{"several manifests", map[string]string{"a-manifest.json": "{}", "b-manifest.json": "{}"}, FormatAuto, "holds several manifests"},
		{"not a manifest", map[string]string{"manifest.json": `{"x": 1}`}, FormatAuto, "is neither an Amazon S3 Inventory manifest nor an Azure blob inventory manifest"},
		{"S3 without manifest", map[string]string{"a.csv": "x"}, FormatS3, "has no manifest.json"},
		{"not Parquet", map[string]string{"a.parquet": "not parquet at all"}, FormatAuto, "not a Parquet file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := t.TempDir()
			for name, data := range tc.files {
				writeFile(t, filepath.Join(inv, name), []byte(data))
			}
			_, err := Open(context.Background(), Source{Location: inv, Format: tc.f}, root, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("unknown file", func(t *testing.T) {
		inv := filepath.Join(t.TempDir(), "inventory.txt")
		writeFile(t, inv, []byte("path\n"))
		_, err := Open(context.Background(), Source{Location: inv}, root, Options{})
		if err == nil || !strings.Contains(err.Error(), "cannot tell its format from its name: give it as parquet.`") {
			t.Errorf("got %v", err)
		}
		// Named explicitly, it is read.
		writeFile(t, inv, []byte("path,length,isDir,modificationTime\nfile:"+dir+"/a,1,false,2\n"))
		diff(t, walk(t, open(t, Source{Location: inv, Format: FormatCSV}, root), ""), []string{"a 1 2"})
	})
	t.Run("missing", func(t *testing.T) {
		inv := filepath.Join(t.TempDir(), "nope")
		_, err := Open(context.Background(), Source{Location: inv}, root, Options{})
		if err == nil || !strings.HasPrefix(err.Error(), "inventory "+inv+" does not exist") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("bad table root", func(t *testing.T) {
		for _, r := range []string{"", "relative/t", "file://host/t", "s3://b/t/../u"} {
			if _, err := Open(context.Background(), Source{Location: dir}, r, Options{}); err == nil {
				t.Errorf("table root %q accepted", r)
			}
		}
	})
}

// TestLocalInventoryThroughALink: an inventory whose path passes through a symbolic link (as
// /tmp does on macOS) is read; only the table's own store never follows links.
func TestLocalInventoryThroughALink(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "via")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	for _, loc := range []string{link, "file://" + filepath.ToSlash(link)} {
		l, err := parseLocation(loc)
		if err != nil {
			t.Fatal(err)
		}
		if l.key != strings.Trim(filepath.ToSlash(real), "/") {
			t.Errorf("%s: key %q, want the resolved %q", loc, l.key, real)
		}
	}
}

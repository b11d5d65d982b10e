package inventory

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestCSV(t *testing.T) {
	dir, root := tableRoot(t)
	csv := "\ufeffpath,length,isDir,modificationTime,extra\n" +
		"file:" + dir + "/a,10,false,1000,x\n" +
		"\"file:" + dir + "/b,c \"\"q\"\"\",20,FALSE,2000,\n" +
		"file:" + dir + "/d,,true,3000,y\n" +
		"\n" +
		"file:" + dir + "/d/e,,True,,\n" +
		"file:/elsewhere/x,1,false,1,\n"
	inv := filepath.Join(t.TempDir(), "inventory.csv")
	writeFile(t, inv, []byte(csv))
	want := []string{"a 10 1000", "b,c \"q\" 20 2000", "d/ 0 3000", "d/e/ 0 -"}
	for _, f := range []Format{"", FormatCSV} {
		l := open(t, Source{Location: inv, Format: f}, root)
		diff(t, walk(t, l, ""), want)
		if l.Rows() != 5 || l.Ignored() != 1 {
			t.Errorf("rows %d, ignored %d; want 5, 1", l.Rows(), l.Ignored())
		}
	}

	// A directory of CSV files, one gzip-compressed, with files Spark writes beside them.
	invDir := filepath.Join(t.TempDir(), "inventory")
	header := "path,length,isDir,modificationTime\n"
	writeFile(t, filepath.Join(invDir, "part-00000.csv"), []byte(header+"file:"+dir+"/a,10,false,1000\n"))
	writeFile(t, filepath.Join(invDir, "part-00001.csv.gz"), gzipped(t, header+"file:"+dir+"/z,11,false,1001\n"))
	writeFile(t, filepath.Join(invDir, "_SUCCESS"), nil)
	writeFile(t, filepath.Join(invDir, ".part-00000.csv.crc"), []byte("crc"))
	for _, f := range []Format{"", FormatCSV} {
		l := open(t, Source{Location: invDir, Format: f}, root)
		diff(t, walk(t, l, ""), []string{"a 10 1000", "z 11 1001"})
	}
}

func TestCSVErrors(t *testing.T) {
	dir, root := tableRoot(t)
	for _, tc := range []struct {
		name, csv, want string
		schema          bool
	}{
		{"missing column", "path,length,isDir\nfile:" + dir + "/a,1,false\n",
			schemaMsg + " Found in %s: path STRING, length STRING, isDir STRING (modificationTime is missing)", true},
		{"not an integer", "path,length,isDir,modificationTime\nfile:" + dir + "/a,1,false,1\nfile:" + dir + "/b,abc,false,1\n",
			"inventory %s line 3: " + schemaMsg + " Found in %s: path STRING, length STRING, isDir STRING, modificationTime STRING (the CSV column length holds \"abc\", which is not an integer type)", true},
		{"not a boolean", "path,length,isDir,modificationTime\nfile:" + dir + "/a,1,yes,1\n",
			"inventory %s line 2: " + schemaMsg + " Found in %s: path STRING, length STRING, isDir STRING, modificationTime STRING (the CSV column isDir holds \"yes\", which is not BOOLEAN)", true},
		{"empty file", "", "inventory %s: the CSV file is empty: it needs a header row naming the columns (path, length, isDir, modificationTime)", false},
		{"short row", "path,length,isDir,modificationTime\nfile:" + dir + "/a,1\n", "inventory %s line 2: 2 fields, the header names 4", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := filepath.Join(t.TempDir(), "inventory.csv")
			writeFile(t, inv, []byte(tc.csv))
			_, err := Open(context.Background(), Source{Location: inv}, root, Options{})
			want := strings.ReplaceAll(tc.want, "%s", inv)
			if tc.schema {
				wantSchemaError(t, err, want)
			} else if err == nil || err.Error() != want {
				t.Errorf("got %v, want %s", err, want)
			}
		})
	}
}

package inventory

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

type extraRow struct {
	Path             string `parquet:"path"`
	Length           int32  `parquet:"length"`
	IsDir            bool   `parquet:"isDir"`
	ModificationTime int64  `parquet:"modificationTime"`
	Extra            string `parquet:"extra"`
	Blob             []byte `parquet:"blob"`
}

func TestQuery(t *testing.T) {
	dir, root := tableRoot(t)
	inv := filepath.Join(t.TempDir(), "inventory.parquet")
	writeParquet(t, inv, []extraRow{
		{Path: "file:" + dir + "/a", Length: 10, ModificationTime: 1, Extra: "keep"},
		{Path: dir + "/b", Length: 20, ModificationTime: 2, Extra: "keep"},
		{Path: "file://" + dir + "/c", Length: 30, ModificationTime: 3, Extra: "drop"},
		{Path: "file:" + dir + "/d/e", Length: 40, ModificationTime: 4},
	})
	invCSV := filepath.Join(t.TempDir(), "inventory.csv")
	writeFile(t, invCSV, []byte("path,length,isDir,modificationTime,extra\n"+
		"file:"+dir+"/a,10,false,1,keep\nfile:"+dir+"/b,20,false,2,\nfile:"+dir+"/c,30,false,3,drop\n"))

	for _, tc := range []struct {
		name, query, location string
		want                  []string
		rows                  int64
	}{
		{"seed example", "SELECT * FROM inventory WHERE path LIKE 'file:%'", inv,
			[]string{"a 10 1", "c 30 3", "d/ 0 -", "d/e 40 4"}, 3},
		{"no condition", "SELECT * FROM inventory", inv,
			[]string{"a 10 1", "b 20 2", "c 30 3", "d/ 0 -", "d/e 40 4"}, 4},
		{"column list, FROM path", "SELECT path, length, isDir, modificationTime FROM parquet.`" + inv + "` WHERE extra = 'keep'", "",
			[]string{"a 10 1", "b 20 2"}, 2},
		{"names in other cases", "SELECT PATH, Length, ISDIR, modificationtime FROM '" + inv + "' WHERE EXTRA IS NULL OR length >= 30", "",
			[]string{"c 30 3", "d/ 0 -", "d/e 40 4"}, 2},
		{"condition on a selected column", "SELECT modificationTime, isDir, length, path FROM inventory WHERE length < 25 AND NOT path LIKE '%b'", inv,
			[]string{"a 10 1"}, 1},
		{"CSV integers", "SELECT * FROM csv.`" + invCSV + "` WHERE length > 15", "",
			[]string{"b 20 2", "c 30 3"}, 2},
		{"CSV text", "SELECT * FROM inventory WHERE extra IN ('keep', 'drop')", invCSV,
			[]string{"a 10 1", "c 30 3"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := open(t, Source{Location: tc.location, Query: query(t, tc.query)}, root)
			diff(t, walk(t, l, ""), tc.want)
			if l.Rows() != tc.rows {
				t.Errorf("rows %d, want %d", l.Rows(), tc.rows)
			}
		})
	}
}

func TestQueryErrors(t *testing.T) {
	_, root := tableRoot(t)
	inv := filepath.Join(t.TempDir(), "inventory.parquet")
	writeParquet(t, inv, []extraRow{{Path: "x", Extra: "a"}})
	found := "path STRING, length INT, isDir BOOLEAN, modificationTime BIGINT, extra STRING, blob BINARY"

	t.Run("select list without the required columns", func(t *testing.T) {
		_, err := Open(context.Background(), Source{Location: inv, Query: query(t, "SELECT path, extra, length FROM inventory")}, root, Options{})
		wantSchemaError(t, err, schemaMsg+" Found in "+inv+": path STRING, extra STRING, length INT (isDir is missing; modificationTime is missing)")
	})
	for _, tc := range []struct{ name, query, location, want string }{
		{"unknown selected column", "SELECT path, length, isDir, modificationTime, nope FROM inventory", inv,
			"inventory query: the column nope (in the select list) does not exist in " + inv + "; its columns are: " + found},
		{"unknown column in WHERE", "SELECT * FROM inventory WHERE nope = 1", inv,
			"inventory query: the column nope (in WHERE) does not exist in " + inv + "; its columns are: " + found},
		{"binary column in WHERE", "SELECT * FROM inventory WHERE blob IS NULL", inv,
			"inventory query: the column blob of " + inv + " is BINARY, which this program cannot evaluate in WHERE"},
		{"type error in WHERE", "SELECT * FROM inventory WHERE path > 1", inv,
			"inventory " + inv + " row 1: inventory query: WHERE path > 1: cannot compare STRING with BIGINT"},
		{"unresolved table name", "SELECT * FROM inventory", "",
			"inventory query reads the table inventory: the caller must resolve table names to a location (Source.Location)"},
		{"json", "SELECT * FROM json.`/x.json`", "",
			"inventory /x.json: JSON inventories are not supported; use Delta, Parquet or CSV"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(context.Background(), Source{Location: tc.location, Query: query(t, tc.query)}, root, Options{})
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
			if err != nil && strings.Contains(tc.name, "column") && strings.Contains(err.Error(), "DELTA_INVALID") {
				t.Errorf("an unknown column is not a schema error: %v", err)
			}
		})
	}
}

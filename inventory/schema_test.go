package inventory

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// widthRow writes length and modificationTime with the integer types L and M.
type widthRow[L, M any] struct {
	Path             string `parquet:"path"`
	Length           L      `parquet:"length"`
	IsDir            bool   `parquet:"isDir"`
	ModificationTime M      `parquet:"modificationTime"`
}

func testWidth[L, M any](t *testing.T, name string, length L, mtime M, want string) {
	t.Run(name, func(t *testing.T) {
		dir, root := tableRoot(t)
		inv := filepath.Join(t.TempDir(), "inventory.parquet")
		writeParquet(t, inv, []widthRow[L, M]{{Path: "file:" + dir + "/x", Length: length, ModificationTime: mtime}})
		l := open(t, Source{Location: inv}, root)
		diff(t, walk(t, l, ""), []string{want})
	})
}

func TestIntegerWidths(t *testing.T) {
	testWidth(t, "int8/int16", int8(127), int16(-32768), "x 127 -32768")
	testWidth(t, "int32/int32", int32(2147483647), int32(5), "x 2147483647 5")
	testWidth(t, "int64/int64", int64(1)<<40, int64(1700000000123), "x 1099511627776 1700000000123")
	testWidth(t, "uint8/uint16", uint8(255), uint16(65535), "x 255 65535")
	testWidth(t, "uint32/uint32", uint32(4294967295), uint32(4294967295), "x 4294967295 4294967295")
	testWidth(t, "uint64/uint64", uint64(1)<<62, uint64(1700000000123), "x 4611686018427387904 1700000000123")

	t.Run("uint64 out of range", func(t *testing.T) {
		dir, root := tableRoot(t)
		inv := filepath.Join(t.TempDir(), "inventory.parquet")
		writeParquet(t, inv, []widthRow[uint64, int64]{{Path: "file:" + dir + "/x", Length: 1 << 63, ModificationTime: 1}})
		_, err := Open(context.Background(), Source{Location: inv}, root, Options{})
		if err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("got %v, want an out-of-range error", err)
		}
	})
}

const schemaMsg = "[DELTA_INVALID_INVENTORY_SCHEMA] The schema for the specified INVENTORY does not contain all of the required fields. Required fields are: path STRING, length BIGINT, isDir BOOLEAN, modificationTime BIGINT."

func TestSchemaErrors(t *testing.T) {
	type missing struct {
		Path   string `parquet:"path"`
		Length int64  `parquet:"length"`
		IsDir  bool   `parquet:"isDir"`
		Extra  string `parquet:"extra"`
	}
	type wrongTypes struct {
		Path             int64   `parquet:"path"`
		Length           string  `parquet:"length"`
		IsDir            string  `parquet:"isDir"`
		ModificationTime float64 `parquet:"modificationTime"`
	}
	type timestamp struct {
		Path             string `parquet:"path"`
		Length           int64  `parquet:"length"`
		IsDir            bool   `parquet:"isDir"`
		ModificationTime int64  `parquet:"modificationTime,timestamp(millisecond)"`
	}
	type nested struct {
		Path struct {
			S string `parquet:"s"`
		} `parquet:"path"`
		Length           []int64 `parquet:"length,list"`
		IsDir            bool    `parquet:"isDir"`
		ModificationTime int64   `parquet:"modificationTime"`
	}
	_, root := tableRoot(t)
	for _, tc := range []struct {
		name  string
		write func(p string)
		want  string
	}{
		{"missing column", func(p string) { writeParquet(t, p, []missing{{Path: "x"}}) },
			"Found in %s: path STRING, length BIGINT, isDir BOOLEAN, extra STRING (modificationTime is missing)"},
		{"wrong types", func(p string) { writeParquet(t, p, []wrongTypes{{}}) },
			"Found in %s: path BIGINT, length STRING, isDir STRING, modificationTime DOUBLE (path is BIGINT, not STRING; length is STRING, not an integer type; isDir is STRING, not BOOLEAN; modificationTime is DOUBLE, not an integer type)"},
		{"timestamp", func(p string) { writeParquet(t, p, []timestamp{{}}) },
			"Found in %s: path STRING, length BIGINT, isDir BOOLEAN, modificationTime TIMESTAMP (modificationTime is TIMESTAMP, not an integer type)"},
		{"nested", func(p string) { writeParquet(t, p, []nested{{}}) },
			"Found in %s: path STRUCT<s: STRING>, length ARRAY<BIGINT>, isDir BOOLEAN, modificationTime BIGINT (path is STRUCT<s: STRING>, not STRING; length is ARRAY<BIGINT>, not an integer type)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := filepath.Join(t.TempDir(), "inventory.parquet")
			tc.write(inv)
			_, err := Open(context.Background(), Source{Location: inv}, root, Options{})
			wantSchemaError(t, err, schemaMsg+" "+strings.ReplaceAll(tc.want, "%s", filepath.ToSlash(inv)))
		})
	}
}

package deltalog

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestParquetLargeFooter reads a checkpoint whose footer is larger than the tail read at
// first (a 5 M-row checkpoint has a footer of about 250 KiB): it must be fetched whole.
func TestParquetLargeFooter(t *testing.T) {
	type add struct {
		Path             string `parquet:"path"`
		Size             int64  `parquet:"size"`
		ModificationTime int64  `parquet:"modificationTime"`
		DataChange       bool   `parquet:"dataChange"`
	}
	type remove struct {
		Path string `parquet:"path"`
	}
	type row struct {
		Add    *add    `parquet:"add,optional"`
		Remove *remove `parquet:"remove,optional"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.KeyValueMetadata("padding", strings.Repeat("x", 200<<10)))
	if _, err := w.Write([]row{{Add: &add{Path: "part-0.parquet", Size: 7, DataChange: true}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []*Action
	err := readParquetActions(context.Background(), pqBytesReader(buf.Bytes()), KindAdd|KindRemove, func(a *Action) error {
		got = append(got, a)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Add == nil || got[0].Add.Path != "part-0.parquet" || got[0].Add.Size != 7 {
		t.Errorf("got %+v", got)
	}
}

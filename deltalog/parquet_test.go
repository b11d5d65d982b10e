package deltalog

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

type fileReader struct{ *os.File; size int64 }

func (f fileReader) Size() int64 { return f.size }

func TestParquetDump(t *testing.T) {
	files, _ := filepath.Glob("/work/shared/fixtures/delta-tables/*/*/_delta_log/*.parquet")
	more, _ := filepath.Glob("/work/shared/fixtures/delta-tables/*/*/_delta_log/_sidecars/*.parquet")
	for _, p := range append(files, more...) {
		f, _ := os.Open(p)
		st, _ := f.Stat()
		fmt.Println("==", p)
		err := readParquetActions(context.Background(), fileReader{f, st.Size()}, KindAll, func(a *Action) error {
			b, _ := json.Marshal(a)
			if a.Metadata != nil { b = append(b, "  RAW="...); b = append(b, a.Metadata.Raw...) }
			if len(b) > 400 { b = append(b[:400], "..."...) }
			fmt.Println(string(b))
			return nil
		})
		if err != nil { t.Error(p, err) }
		f.Close()
	}
}

func TestParquetWriteSmoke(t *testing.T) {
	f, _ := os.Create("/tmp/smoke.parquet")
	off := int32(1)
	ts := int64(5)
	name := "n"
	acts := []*Action{
		{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{}}},
		{Metadata: &Metadata{ID: "id", Name: &name, Format: Format{Provider: "parquet"}, SchemaString: "{}", PartitionColumns: []string{"a", "b"}, Configuration: map[string]string{"x": "1", "y": "2"}}},
		{Add: &Add{Path: "p1", Size: 1, ModificationTime: 2, DataChange: true, PartitionValues: map[string]string{"a": "1"}, Stats: "{}"}},
		{Add: &Add{Path: "p2", Size: 1, DeletionVector: &DeletionVector{StorageType: "u", PathOrInlineDv: "abc", Offset: &off, SizeInBytes: 3, Cardinality: 4}}},
		{Remove: &Remove{Path: "r1", DeletionTimestamp: &ts}},
		{Remove: &Remove{Path: "r2"}},
		{Sidecar: &Sidecar{Path: "s", SizeInBytes: 3, ModificationTime: 4}},
		{CheckpointMetadata: &CheckpointMetadata{Version: 3}},
	}
	if err := WriteParquetCheckpoint(f, func(yield func(*Action) bool) {
		for _, a := range acts {
			if !yield(a) {
				return
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	f, _ = os.Open("/tmp/smoke.parquet")
	st, _ := f.Stat()
	err := readParquetActions(context.Background(), fileReader{f, st.Size()}, KindAll, func(a *Action) error {
		b, _ := json.Marshal(a)
		if a.Metadata != nil {
			b = append(b, "  RAW="...)
			b = append(b, a.Metadata.Raw...)
		}
		fmt.Println(string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

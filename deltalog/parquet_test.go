package deltalog

import (
	"syscall"
	"runtime"
	"time"
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

func TestParquetCounts(t *testing.T) {
	files, _ := filepath.Glob("/work/shared/fixtures/delta-tables/*/*/_delta_log/*.parquet")
	more, _ := filepath.Glob("/work/shared/fixtures/delta-tables/*/*/_delta_log/_sidecars/*.parquet")
	for _, p := range append(files, more...) {
		f, _ := os.Open(p)
		st, _ := f.Stat()
		c := map[string]int{}
		err := readParquetActions(context.Background(), fileReader{f, st.Size()}, KindAll, func(a *Action) error {
			switch {
			case a.Add != nil:
				c["add"]++
				if a.Add.DeletionVector != nil { c["addDV"]++ }
			case a.Remove != nil:
				c["rm"]++
				if a.Remove.DeletionTimestamp == nil { c["rmNoTS"]++ }
				if a.Remove.Size == nil { c["rmNoSize"]++ }
				if a.Remove.DeletionVector != nil { c["rmDV"]++ ; if a.Remove.DeletionVector.Offset == nil {c["rmDVnoOff"]++}}
			case a.Metadata != nil:
				c["md"]++
			case a.Protocol != nil:
				c["p"]++
			case a.Sidecar != nil:
				c["sc"]++
			case a.CheckpointMetadata != nil:
				c["cm"]++
			}
			if a.Add != nil && a.Add.DeletionVector != nil && a.Add.DeletionVector.Offset == nil { c["addDVnoOff"]++ }
			return nil
		})
		if err != nil { t.Error(p, err) }
		fmt.Println(st.Size(), p[len("/work/shared/fixtures/delta-tables/"):], c)
		f.Close()
	}
}

func genActions(n int) func(yield func(*Action) bool) {
	return func(yield func(*Action) bool) {
		for i := range n {
			a := &Add{
				Path:             fmt.Sprintf("date=2024-%02d-%02d/part-%05d-%08x-4b8c-4d2e-9f1a-%012x.c000.snappy.parquet", i%12+1, i%28+1, i%1000, i, i*7919),
				Size:             int64(1000 + i),
				ModificationTime: 1700000000000 + int64(i),
				DataChange:       i%2 == 0,
			}
			if i%5 == 0 {
				off := int32(1 + i%100)
				a.DeletionVector = &DeletionVector{StorageType: "u", PathOrInlineDv: fmt.Sprintf("ab%018d", i), Offset: &off, SizeInBytes: 40, Cardinality: int64(i % 50)}
			}
			if !yield(&Action{Add: a}) {
				return
			}
		}
	}
}

func BenchmarkTmpWrite(b *testing.B) {
	p := filepath.Join(b.TempDir(), "c.parquet")
	for b.Loop() {
		f, _ := os.Create(p)
		if err := WriteParquetCheckpoint(f, genActions(1_000_000)); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	st, _ := os.Stat(p)
	b.ReportMetric(float64(st.Size())/1e6, "MB")
}

func BenchmarkTmpRead(b *testing.B) {
	p := filepath.Join(b.TempDir(), "c.parquet")
	f, _ := os.Create(p)
	if err := WriteParquetCheckpoint(f, genActions(1_000_000)); err != nil {
		b.Fatal(err)
	}
	f.Close()
	b.ReportAllocs()
	for b.Loop() {
		f, _ := os.Open(p)
		st, _ := f.Stat()
		n := 0
		if err := readParquetActions(context.Background(), fileReader{f, st.Size()}, KindAdd|KindRemove, func(a *Action) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != 1_000_000 {
			b.Fatal(n)
		}
		f.Close()
	}
}

func TestTmpWriteRepeat(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.parquet")
	for i := 0; i < 4; i++ {
		start := time.Now()
		var ru0, ru1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		f, _ := os.Create(p)
		if err := WriteParquetCheckpoint(f, genActions(1_000_000)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
		fmt.Println(i, time.Since(start), "cpu", cpu, "heap", ms.HeapAlloc>>20, "sys", ms.Sys>>20, "numgc", ms.NumGC, "pause", time.Duration(ms.PauseTotalNs))
	}
}

package deltalog_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/checkpointwriter"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// benchCommit is a commit of n add actions as Spark writes them (partition values, stats,
// tags; one in twenty with a deletion vector) after a protocol and a metaData line, and a
// remove for every tenth file.
func benchCommit(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"commitInfo":{"timestamp":1700000000000,"operation":"WRITE","operationParameters":{"mode":"Append","partitionBy":"[\"part\"]"},"isolationLevel":"Serializable","isBlindAppend":true,"operationMetrics":{"numFiles":"1","numOutputRows":"100","numOutputBytes":"12345"},"engineInfo":"Apache-Spark/3.5.0 Delta-Lake/3.2.0","txnId":"6d4b0c6a-8b9e-4a57-9d0c-0d1f2e3a4b5c"}}` + "\n")
	b.WriteString(`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}}` + "\n")
	b.WriteString(`{"metaData":{"id":"bench","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"part\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["part"],"configuration":{"delta.enableDeletionVectors":"true"},"createdTime":1700000000000}}` + "\n")
	for i := range n {
		fmt.Fprintf(&b, `{"add":{"path":"part=%d/part-%05d-3f1c2b4a-5d6e-4f70-8a9b-%012d.c000.snappy.parquet","partitionValues":{"part":"%d"},"size":%d,"modificationTime":1700000000000,"dataChange":true,`+
			`"stats":"{\"numRecords\":100,\"minValues\":{\"id\":%d},\"maxValues\":{\"id\":%d},\"nullCount\":{\"id\":0}}"`, i%100, i%1000, i, i%100, 10000+i, i*100, i*100+99)
		if i%20 == 0 {
			fmt.Fprintf(&b, `,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*","offset":%d,"sizeInBytes":36,"cardinality":2}`, 1+i%64)
		}
		b.WriteString(`,"tags":{"INSERTION_TIME":"1700000000000000","MIN_INSERTION_TIME":"1700000000000000"}}}` + "\n")
	}
	for i := 0; i < n; i += 10 {
		fmt.Fprintf(&b, `{"remove":{"path":"part=%d/part-%05d-3f1c2b4a-5d6e-4f70-8a9b-%012d.c000.snappy.parquet","deletionTimestamp":1700000000000,"dataChange":true,"extendedFileMetadata":true,"partitionValues":{"part":"%d"},"size":%d}}`+"\n", i%100, i%1000, n+i, i%100, 10000+i)
	}
	return b.Bytes()
}

// BenchmarkReplayCommit decodes one commit of 100 k adds and 10 k removes through Load and
// Files: the cost of decoding the JSON log.
func BenchmarkReplayCommit(b *testing.B) {
	const n = 100_000
	store := mem.New("mem://bench")
	data := benchCommit(n)
	store.PutAt(deltalog.CommitKey(0), data, time.Unix(1700000000, 0))
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	defer deltalog.ReportCPU(b)()
	for b.Loop() {
		snap, err := deltalog.Load(ctx, store)
		if err != nil {
			b.Fatal(err)
		}
		adds := 0
		err = snap.Files(ctx, store, func(f deltalog.File) error {
			if !f.Removed {
				adds++
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if adds != n {
			b.Fatalf("%d adds, want %d", adds, n)
		}
	}
}

// BenchmarkReplayCheckpoint reads a table whose state is a Parquet checkpoint of 1 M adds (a
// fifth of them with a deletion vector) and 100 k removes, through Load and Files.
func BenchmarkReplayCheckpoint(b *testing.B) {
	const n = 1_000_000
	var buf bytes.Buffer
	acts := func(yield func(*deltalog.Action) bool) {
		if !yield(&deltalog.Action{Protocol: &deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors"}}}) {
			return
		}
		if !yield(&deltalog.Action{Metadata: &deltalog.Metadata{ID: "bench", Format: deltalog.Format{Provider: "parquet"},
			SchemaString: "{}", PartitionColumns: []string{"part"}, Configuration: map[string]string{}}}) {
			return
		}
		var a deltalog.Action
		for i := range n + n/10 {
			path := fmt.Sprintf("part=%d/part-%05d-3f1c2b4a-5d6e-4f70-8a9b-%012d.c000.snappy.parquet", i%100, i%1000, i)
			if i < n {
				add := &deltalog.Add{Path: path, Size: int64(10000 + i), ModificationTime: 1700000000000, DataChange: true,
					PartitionValues: map[string]string{"part": fmt.Sprint(i % 100)}}
				if i%5 == 0 {
					off := int32(1 + i%64)
					add.DeletionVector = &deltalog.DeletionVector{StorageType: "u", PathOrInlineDv: "ab^-aqEH.-t@S}K{vb[*k^", Offset: &off, SizeInBytes: 36, Cardinality: 2}
				}
				a = deltalog.Action{Add: add}
			} else {
				ts := int64(1700000000000)
				a = deltalog.Action{Remove: &deltalog.Remove{Path: path, DeletionTimestamp: &ts, DataChange: true}}
			}
			if !yield(&a) {
				return
			}
		}
	}
	if err := checkpointwriter.Write(&buf, acts); err != nil {
		b.Fatal(err)
	}
	store := mem.New("mem://bench")
	store.PutAt(deltalog.CommitKey(0), []byte(`{"commitInfo":{"operation":"WRITE"}}`+"\n"), time.Unix(1700000000, 0))
	store.PutAt("_delta_log/00000000000000000000.checkpoint.parquet", buf.Bytes(), time.Unix(1700000000, 0))
	ctx := context.Background()
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	defer deltalog.ReportCPU(b)()
	for b.Loop() {
		snap, err := deltalog.Load(ctx, store)
		if err != nil {
			b.Fatal(err)
		}
		adds := 0
		err = snap.Files(ctx, store, func(f deltalog.File) error {
			if !f.Removed {
				adds++
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if adds != n {
			b.Fatalf("%d adds, want %d", adds, n)
		}
	}
}

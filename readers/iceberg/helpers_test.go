package iceberg

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hamba/avro/v2/ocf"

	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// The schemas Iceberg writes (the table spec, format version 2), with the fields this package
// skips, so that the tests prove it reads through them.
const manifestListSchema = `{"type":"record","name":"manifest_file","fields":[
 {"name":"manifest_path","type":"string","field-id":500},
 {"name":"manifest_length","type":"long","field-id":501},
 {"name":"partition_spec_id","type":"int","field-id":502},
 {"name":"content","type":"int","field-id":517},
 {"name":"sequence_number","type":"long","field-id":515},
 {"name":"added_snapshot_id","type":"long","field-id":503},
 {"name":"partitions","type":["null",{"type":"array","items":{"type":"record","name":"r508","fields":[
   {"name":"contains_null","type":"boolean","field-id":509},
   {"name":"lower_bound","type":["null","bytes"],"field-id":510}]}}],"default":null,"field-id":507}]}`

const manifestSchema = `{"type":"record","name":"manifest_entry","fields":[
 {"name":"status","type":"int","field-id":0},
 {"name":"snapshot_id","type":["null","long"],"default":null,"field-id":1},
 {"name":"sequence_number","type":["null","long"],"default":null,"field-id":3},
 {"name":"data_file","type":{"type":"record","name":"r2","fields":[
   {"name":"content","type":"int","field-id":134},
   {"name":"file_path","type":"string","field-id":100},
   {"name":"file_format","type":"string","field-id":101},
   {"name":"partition","type":{"type":"record","name":"r102","fields":[{"name":"p","type":["null","string"],"default":null,"field-id":1000}]},"field-id":102},
   {"name":"record_count","type":"long","field-id":103},
   {"name":"file_size_in_bytes","type":"long","field-id":104},
   {"name":"column_sizes","type":["null",{"type":"array","items":{"type":"record","name":"k117_v118","fields":[{"name":"key","type":"int"},{"name":"value","type":"long"}]},"logicalType":"map"}],"default":null,"field-id":108}]},"field-id":2}]}`

type listRec struct {
	ManifestPath    string  `avro:"manifest_path"`
	ManifestLength  int64   `avro:"manifest_length"`
	PartitionSpecID int32   `avro:"partition_spec_id"`
	Content         int32   `avro:"content"`
	SequenceNumber  int64   `avro:"sequence_number"`
	AddedSnapshotID int64   `avro:"added_snapshot_id"`
	Partitions      *[]part `avro:"partitions"`
}

type part struct {
	ContainsNull bool    `avro:"contains_null"`
	LowerBound   *[]byte `avro:"lower_bound"`
}

type entryRec struct {
	Status         int32  `avro:"status"`
	SnapshotID     *int64 `avro:"snapshot_id"`
	SequenceNumber *int64 `avro:"sequence_number"`
	DataFile       struct {
		Content    int32  `avro:"content"`
		FilePath   string `avro:"file_path"`
		FileFormat string `avro:"file_format"`
		Partition  struct {
			P *string `avro:"p"`
		} `avro:"partition"`
		RecordCount int64         `avro:"record_count"`
		FileSize    int64         `avro:"file_size_in_bytes"`
		ColumnSizes *[]columnSize `avro:"column_sizes"`
	} `avro:"data_file"`
}

type columnSize struct {
	Key   int32 `avro:"key"`
	Value int64 `avro:"value"`
}

func writeOCF(t testing.TB, schema string, codec ocf.CodecName, recs []any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := ocf.NewEncoder(schema, &buf, ocf.WithCodec(codec), ocf.WithBlockLength(100))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func manifestListBytes(t testing.TB, codec ocf.CodecName, paths ...string) []byte {
	var recs []any
	for i, p := range paths {
		lb := []byte{1}
		recs = append(recs, listRec{ManifestPath: p, ManifestLength: 100, AddedSnapshotID: int64(i), Partitions: &[]part{{LowerBound: &lb}}})
	}
	return writeOCF(t, manifestListSchema, codec, recs)
}

type entry struct {
	status  int32
	path    string
	content int32
}

func manifestBytes(t testing.TB, codec ocf.CodecName, entries ...entry) []byte {
	var recs []any
	for _, e := range entries {
		var r entryRec
		id := int64(7)
		r.Status, r.SnapshotID = e.status, &id
		r.DataFile.Content, r.DataFile.FilePath, r.DataFile.FileFormat = e.content, e.path, "PARQUET"
		r.DataFile.RecordCount, r.DataFile.FileSize = 10, 1234
		r.DataFile.ColumnSizes = &[]columnSize{{Key: 1, Value: 5}}
		recs = append(recs, r)
	}
	return writeOCF(t, manifestSchema, codec, recs)
}

// snap describes one snapshot of a metadata file built by meta.
type snap struct {
	id      int64
	ms      int64
	list    string // absolute manifest-list path
	summary map[string]string
}

// meta builds a format-version 2 metadata file. edit may change the map before it is written.
func meta(t testing.TB, loc string, updated int64, current int64, snaps []snap, props map[string]string, edit func(map[string]any)) []byte {
	t.Helper()
	var ss []any
	for _, s := range snaps {
		sum := map[string]string{"operation": "append"}
		for k, v := range s.summary {
			sum[k] = v
		}
		ss = append(ss, map[string]any{"snapshot-id": s.id, "sequence-number": 1, "timestamp-ms": s.ms, "manifest-list": s.list, "summary": sum, "schema-id": 0})
	}
	m := map[string]any{
		"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": loc,
		"last-sequence-number": 1, "last-updated-ms": updated, "last-column-id": 1,
		"schemas":               []any{map[string]any{"type": "struct", "schema-id": 0, "fields": []any{map[string]any{"id": 1, "name": "x", "required": false, "type": "long"}}}},
		"current-schema-id":     0,
		"partition-specs":       []any{map[string]any{"spec-id": 0, "fields": []any{}}},
		"default-spec-id":       0,
		"last-partition-id":     999,
		"sort-orders":           []any{map[string]any{"order-id": 0, "fields": []any{}}},
		"default-sort-order-id": 0,
		"properties":            props,
		"current-snapshot-id":   current,
		"snapshots":             ss,
		"snapshot-log":          []any{},
		"metadata-log":          []any{},
	}
	if props == nil {
		m["properties"] = map[string]string{}
	}
	if edit != nil {
		edit(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// table is a Delta table folder in memory with an Iceberg view of files a and b.
type table struct {
	s   *mem.Store
	loc string
}

const loc = "s3://bucket/sales"

func newTable(t testing.TB) *table {
	return &table{s: mem.New(loc), loc: loc}
}

func (tb *table) put(key string, data []byte) { tb.s.PutAt(key, data, fixedTime) }

// standard writes v1 (snapshot 1: a.parquet) and v2 (snapshot 2: a and b) with a hint of 2.
func (tb *table) standard(t testing.TB) {
	tb.put("metadata/m1.avro", manifestBytes(t, ocf.Deflate, entry{1, loc + "/a.parquet", 0}))
	tb.put("metadata/m2.avro", manifestBytes(t, ocf.Deflate, entry{0, loc + "/a.parquet", 0}, entry{1, loc + "/b.parquet", 0}, entry{2, loc + "/gone.parquet", 0}))
	tb.put("metadata/snap-1.avro", manifestListBytes(t, ocf.Deflate, loc+"/metadata/m1.avro"))
	tb.put("metadata/snap-2.avro", manifestListBytes(t, ocf.Deflate, loc+"/metadata/m1.avro", loc+"/metadata/m2.avro"))
	s1 := snap{id: 1, ms: 1_700_000_000_000, list: loc + "/metadata/snap-1.avro"}
	s2 := snap{id: 2, ms: 1_700_000_100_000, list: loc + "/metadata/snap-2.avro"}
	tb.put("metadata/v1.metadata.json", meta(t, loc, 1_700_000_000_000, 1, []snap{s1}, nil, nil))
	tb.put("metadata/v2.metadata.json", meta(t, loc, 1_700_000_100_000, 2, []snap{s1, s2}, nil, func(m map[string]any) {
		m["metadata-log"] = []any{map[string]any{"timestamp-ms": 1_700_000_000_000, "metadata-file": loc + "/metadata/v1.metadata.json"}}
	}))
	tb.put("metadata/version-hint.text", []byte("2"))
}

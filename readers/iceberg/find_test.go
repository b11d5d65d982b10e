package iceberg

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hamba/avro/v2/ocf"
)

var fixedTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func dataKeys(t *testing.T, tb *table, it *Table) (keys []string, outside []string) {
	t.Helper()
	err := it.DataFiles(context.Background(), tb.s, func(f DataFile) error {
		if f.Outside {
			outside = append(outside, f.Path)
		} else {
			keys = append(keys, f.Key)
			keys = append(keys, f.OtherKeys...)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("DataFiles: %v", err)
	}
	sort.Strings(keys)
	return keys, outside
}

func TestFindStandard(t *testing.T) {
	tb := newTable(t)
	tb.standard(t)
	tb.put("metadata/conversion.log", []byte("not metadata"))
	tb.put("part-0.parquet", []byte("x"))
	it, err := Find(context.Background(), tb.s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if it == nil {
		t.Fatal("Find: nil, want the Iceberg view")
	}
	if it.Current.Key != "metadata/v2.metadata.json" || it.Current.Version != 2 || it.Current.Kind != NameHadoop {
		t.Errorf("Current = %+v, want metadata/v2.metadata.json", it.Current)
	}
	if it.Hint == nil || !it.Hint.Used || it.Hint.Content != "2" {
		t.Errorf("Hint = %+v, want used, content 2", it.Hint)
	}
	if it.Snapshot == nil || it.Snapshot.ID != 2 || !it.Snapshot.Timestamp.Equal(time.UnixMilli(1_700_000_100_000)) || it.Snapshot.ManifestList != "metadata/snap-2.avro" {
		t.Errorf("Snapshot = %+v, want id 2 at its time with its manifest list", it.Snapshot)
	}
	if it.Conversion != nil {
		t.Errorf("Conversion = %+v, want nil (no converter property)", it.Conversion)
	}
	want := []string{"metadata/m1.avro", "metadata/m2.avro", "metadata/snap-1.avro", "metadata/snap-2.avro", "metadata/v1.metadata.json", "metadata/v2.metadata.json", "metadata/version-hint.text"}
	if diff := cmp.Diff(want, it.MetadataFiles); diff != "" {
		t.Errorf("MetadataFiles (-want +got):\n%s", diff)
	}
	keys, outside := dataKeys(t, tb, it)
	if diff := cmp.Diff([]string{"a.parquet", "a.parquet", "b.parquet"}, keys); diff != "" {
		t.Errorf("data files of the current snapshot (-want +got), DELETED entries left out:\n%s", diff)
	}
	if outside != nil {
		t.Errorf("outside = %v, want none", outside)
	}
}

func TestFindNotIceberg(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
	}{
		{"no metadata folder", map[string]string{"part-0.parquet": "x"}},
		{"empty metadata folder", map[string]string{"metadata/": ""}},
		{"unrelated JSON named like metadata", map[string]string{"metadata/x.metadata.json": `{"hello":"world"}`}},
		{"truncated JSON", map[string]string{"metadata/v1.metadata.json": `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","loc`}},
		{"a JSON array", map[string]string{"metadata/v1.metadata.json": `[1,2,3]`}},
		{"format-version 4", map[string]string{"metadata/v1.metadata.json": `{"format-version":4,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://bucket/sales","last-updated-ms":1,"schemas":[{}]}`}},
		{"no table-uuid in format-version 2", map[string]string{"metadata/v1.metadata.json": `{"format-version":2,"location":"s3://bucket/sales","last-updated-ms":1,"schemas":[{}]}`}},
		{"no schema", map[string]string{"metadata/v1.metadata.json": `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://bucket/sales","last-updated-ms":1}`}},
		{"current snapshot not among snapshots", map[string]string{"metadata/v1.metadata.json": `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://bucket/sales","last-updated-ms":1,"schemas":[{}],"current-snapshot-id":5,"snapshots":[]}`}},
		{"duplicate key", map[string]string{"metadata/v1.metadata.json": `{"format-version":2,"format-version":1,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://bucket/sales","last-updated-ms":1,"schemas":[{}]}`}},
		{"a property that is not a string", map[string]string{"metadata/v1.metadata.json": `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://bucket/sales","last-updated-ms":1,"schemas":[{}],"properties":{"a":1}}`}},
		{"invalid UTF-8", map[string]string{"metadata/v1.metadata.json": "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\",\"location\":\"s3://bucket/\xff\",\"last-updated-ms\":1,\"schemas\":[{}]}"}},
		{"a gzip that is not", map[string]string{"metadata/v1.gz.metadata.json": "\x1f\x8bnot gzip"}},
		{"Iceberg metadata in a folder not named metadata", map[string]string{"other/v1.metadata.json": `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://bucket/sales","last-updated-ms":1,"schemas":[{}]}`}},
		{"a hint alone", map[string]string{"metadata/version-hint.text": "3"}},
		{"a hint whose file is not Iceberg", map[string]string{"metadata/version-hint.text": "1", "metadata/v1.metadata.json": `{"a":1}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTable(t)
			for k, v := range tt.files {
				tb.put(k, []byte(v))
			}
			it, err := Find(context.Background(), tb.s, Options{})
			if err != nil {
				t.Fatalf("Find: %v, want nil, nil", err)
			}
			if it != nil {
				t.Fatalf("Find: %+v, want nil (not Iceberg)", it.Current)
			}
		})
	}
}

// TestFindUnreadable: an Iceberg view that exists and cannot be read is an error matching
// ErrUnreadable that names the file; each case breaks the standard table one way.
func TestFindUnreadable(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(t *testing.T, tb *table)
		opts     Options
		wantFile string // the error names it
	}{
		{"hint names a missing version", func(t *testing.T, tb *table) {
			tb.put("metadata/version-hint.text", []byte("3"))
		}, Options{}, "v3.metadata.json"},
		{"hint names a missing file by name", func(t *testing.T, tb *table) {
			tb.put("metadata/version-hint.text", []byte("gone.metadata.json"))
		}, Options{}, "gone.metadata.json"},
		{"hint names a file that is not Iceberg", func(t *testing.T, tb *table) {
			tb.put("metadata/v2.metadata.json", []byte(`{"truncated`))
		}, Options{}, "v2.metadata.json"},
		{"the newest by name is truncated", func(t *testing.T, tb *table) {
			tb.s.Delete(context.Background(), []string{"metadata/version-hint.text"})
			tb.put("metadata/v3.metadata.json", []byte(`{"format-version":2,"tab`))
		}, Options{}, "v3.metadata.json"},
		{"a newer consecutive version after the hint is not Iceberg", func(t *testing.T, tb *table) {
			tb.put("metadata/v3.metadata.json", []byte(`not json`))
		}, Options{}, "v3.metadata.json"},
		{"the newest by name is over the size limit", func(t *testing.T, tb *table) {
			tb.s.Delete(context.Background(), []string{"metadata/version-hint.text"})
			tb.put("metadata/v3.metadata.json", []byte(strings.Repeat(" ", 5000)+"{}"))
		}, Options{MaxMetadataBytes: 4096}, "v3.metadata.json"},
		{"two files of one version and time, different states", func(t *testing.T, tb *table) {
			tb.s.Delete(context.Background(), []string{"metadata/version-hint.text"})
			s1 := snap{id: 1, ms: 1, list: loc + "/metadata/snap-1.avro"}
			tb.put("metadata/00003-11111111-1111-1111-1111-111111111111.metadata.json", meta(t, loc, 5, -1, nil, nil, nil))
			tb.put("metadata/00003-22222222-2222-2222-2222-222222222222.metadata.json", meta(t, loc, 5, 1, []snap{s1}, nil, nil))
		}, Options{}, "00003-"},
		{"current manifest list missing", func(t *testing.T, tb *table) {
			tb.s.Delete(context.Background(), []string{"metadata/snap-2.avro"})
		}, Options{}, "metadata/snap-2.avro"},
		{"current manifest list not Avro", func(t *testing.T, tb *table) {
			tb.put("metadata/snap-2.avro", []byte("PAR1 this is parquet, not avro"))
		}, Options{}, "metadata/snap-2.avro"},
		{"current manifest list Avro of another schema", func(t *testing.T, tb *table) {
			tb.put("metadata/snap-2.avro", writeOCF(t, `{"type":"record","name":"x","fields":[{"name":"a","type":"long"}]}`, ocf.Null, []any{map[string]any{"a": int64(1)}}))
		}, Options{}, "metadata/snap-2.avro"},
		{"current manifest list truncated", func(t *testing.T, tb *table) {
			b := manifestListBytes(t, ocf.Null, loc+"/metadata/m1.avro", loc+"/metadata/m2.avro")
			tb.put("metadata/snap-2.avro", b[:len(b)-20])
		}, Options{}, "metadata/snap-2.avro"},
		{"a block of absurd size", func(t *testing.T, tb *table) {
			b := manifestListBytes(t, ocf.Null)
			// header, then a block of 1 record claiming 2^62 bytes
			b = append(b, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)
			tb.put("metadata/snap-2.avro", b)
		}, Options{}, "metadata/snap-2.avro"},
		{"a block of negative size", func(t *testing.T, tb *table) {
			b := manifestListBytes(t, ocf.Null)
			b = append(b, 0x02, 0x03)
			tb.put("metadata/snap-2.avro", b)
		}, Options{}, "metadata/snap-2.avro"},
		{"a manifest list path with ..", func(t *testing.T, tb *table) {
			tb.put("metadata/snap-2.avro", manifestListBytes(t, ocf.Deflate, loc+"/metadata/../../other/m.avro"))
		}, Options{}, "snap-2.avro"},
		{"the current manifest list outside the table", func(t *testing.T, tb *table) {
			s2 := snap{id: 2, ms: 2, list: "s3://elsewhere/t/metadata/snap-2.avro"}
			tb.put("metadata/v2.metadata.json", meta(t, loc, 2, 2, []snap{s2}, nil, nil))
		}, Options{}, "s3://elsewhere/t/metadata/snap-2.avro"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTable(t)
			tb.standard(t)
			tt.edit(t, tb)
			it, err := Find(context.Background(), tb.s, tt.opts)
			if err == nil {
				t.Fatalf("Find: %+v, nil; want an error matching ErrUnreadable", it)
			}
			if !errors.Is(err, ErrUnreadable) {
				t.Fatalf("Find: %v; want it to match ErrUnreadable", err)
			}
			if !strings.Contains(err.Error(), tt.wantFile) {
				t.Errorf("Find: %v; want it to name %s", err, tt.wantFile)
			}
		})
	}
}

// TestDataFilesUnreadable: a manifest of the current snapshot that cannot be read stops
// DataFiles with an error matching ErrUnreadable that names it.
func TestDataFilesUnreadable(t *testing.T) {
	tests := []struct {
		name     string
		manifest []byte
		missing  bool
		wantText string
	}{
		{name: "missing manifest", missing: true, wantText: "metadata/m2.avro"},
		{name: "not Avro", manifest: []byte("not avro at all"), wantText: "metadata/m2.avro"},
		{name: "Avro of another schema", manifest: manifestListBytes(t, ocf.Null, "x"), wantText: "metadata/m2.avro"},
		{name: "a path with ..", manifest: manifestBytes(t, ocf.Null, entry{1, loc + "/p/../../x.parquet", 0}), wantText: "x.parquet"},
		{name: "a path with a control character", manifest: manifestBytes(t, ocf.Null, entry{1, loc + "/a\x01.parquet", 0}), wantText: "a\\x01.parquet"},
		{name: "an unknown status", manifest: manifestBytes(t, ocf.Null, entry{7, loc + "/a.parquet", 0}), wantText: "status 7"},
		{name: "an empty path", manifest: manifestBytes(t, ocf.Null, entry{1, "", 0}), wantText: "without a file_path"},
		{name: "an unknown codec", manifest: func() []byte {
			b := manifestBytes(t, ocf.Null, entry{1, loc + "/a.parquet", 0})
			return []byte(strings.Replace(string(b), "\x08null", "\x08lzma", 1))
		}(), wantText: "codec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTable(t)
			tb.standard(t)
			if tt.missing {
				tb.s.Delete(context.Background(), []string{"metadata/m2.avro"})
			} else {
				tb.put("metadata/m2.avro", tt.manifest)
			}
			it, err := Find(context.Background(), tb.s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			err = it.DataFiles(context.Background(), tb.s, func(DataFile) error { return nil })
			if !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("DataFiles: %v; want an error matching ErrUnreadable naming %q", err, tt.wantText)
			}
		})
	}
}

// TestHostileCounts: counts and lengths inside a block are checked against the bytes left, so
// a hostile count in a field nobody reads cannot make the reader loop or allocate.
func TestHostileCounts(t *testing.T) {
	schema := `{"type":"record","name":"manifest_file","fields":[{"name":"manifest_path","type":"string"},
	 {"name":"junk","type":{"type":"array","items":"long"}},{"name":"nulls","type":{"type":"array","items":"null"}}]}`
	good := writeOCF(t, schema, ocf.Null, []any{map[string]any{"manifest_path": "x", "junk": []int64{1}, "nulls": []any{nil, nil}}})
	// One record: "x" (02 78), junk [1] (02 02 00), two nulls (04 00).
	rec := []byte{0x02, 0x78, 0x02, 0x02, 0x00, 0x04, 0x00}
	tests := []struct {
		name string
		rec  []byte
		ok   bool
	}{
		{"as written", rec, true},
		{"an array count of 2^62", []byte{0x02, 0x78, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, false},
		{"2^62 nulls take no byte: not iterated", []byte{0x02, 0x78, 0x00, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00}, true},
		{"a block with its size in bytes (a negative count)", []byte{0x02, 0x78, 0x01, 0x02, 0x02, 0x00, 0x00}, true},
		{"a string longer than the block", []byte{0x0a, 0x78}, false},
		{"a path length of 2^62", []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, false},
		{"the smallest int64 as a block count", []byte{0x02, 0x78, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := walker{b: tt.rec}
			o, err := newOCF(bytes.NewReader(good), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			out := newRecord("manifest_path")
			err = w.value(o.schema, "", out, 0)
			if (err == nil) != tt.ok {
				t.Fatalf("value: %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && out["manifest_path"] != "x" {
				t.Errorf("manifest_path = %v, want x", out["manifest_path"])
			}
		})
	}
}

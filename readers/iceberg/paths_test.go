package iceberg

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hamba/avro/v2/ocf"

	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// TestDataFilePaths: Iceberg's paths as keys of the table: literal first, the reading as a
// URI beside it, and a path outside the table reported, never dropped.
func TestDataFilePaths(t *testing.T) {
	tests := []struct {
		path       string
		key        string
		others     []string
		outside    bool
		storeLoc   string
		icebergLoc string
	}{
		{path: loc + "/a.parquet", key: "a.parquet"},
		{path: "s3a://bucket/sales/p=1/a.parquet", key: "p=1/a.parquet"},
		{path: loc + "/p=a b/x.parquet", key: "p=a b/x.parquet"},
		{path: loc + "/p=a%3Ab/x.parquet", key: "p=a%3Ab/x.parquet", others: []string{"p=a:b/x.parquet"}},
		{path: loc + "/p=a%20b/x.parquet", key: "p=a%20b/x.parquet", others: []string{"p=a b/x.parquet"}},
		{path: loc + "/p=#1/x.parquet", key: "p=#1/x.parquet", others: []string{"p="}},
		{path: "/sales/rel.parquet", key: "rel.parquet"}, // no scheme: the root's own file system
		{path: "s3://other/sales/a.parquet", outside: true},
		{path: "gs://bucket/sales/a.parquet", outside: true},
		// OneLake by ids where the store names it by names: found through Iceberg's location.
		{path: "abfss://11111111-1111-1111-1111-111111111111@onelake.dfs.fabric.microsoft.com/22222222-2222-2222-2222-222222222222/Tables/t/p/a.parquet", key: "p/a.parquet",
			storeLoc: "abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse/Tables/t", icebergLoc: "abfss://11111111-1111-1111-1111-111111111111@onelake.dfs.fabric.microsoft.com/22222222-2222-2222-2222-222222222222/Tables/t"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			sl, il := loc, loc
			if tt.storeLoc != "" {
				sl, il = tt.storeLoc, tt.icebergLoc
			}
			tb := &table{s: mem.New(sl), loc: sl}
			tb.put("metadata/m.avro", manifestBytes(t, ocf.Snappy, entry{1, tt.path, 0}))
			tb.put("metadata/snap-1.avro", manifestListBytes(t, ocf.Snappy, il+"/metadata/m.avro"))
			tb.put("metadata/v1.metadata.json", meta(t, il, 1, 1, []snap{{id: 1, ms: 1, list: il + "/metadata/snap-1.avro"}}, nil, nil))
			it, err := Find(context.Background(), tb.s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if it.LocationAlias != (tt.icebergLoc != "") {
				t.Errorf("LocationAlias = %v", it.LocationAlias)
			}
			var got []DataFile
			if err := it.DataFiles(context.Background(), tb.s, func(f DataFile) error { got = append(got, f); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("DataFiles: %d files, want 1", len(got))
			}
			f := got[0]
			if f.Key != tt.key || f.Outside != tt.outside || f.Path != tt.path || f.Manifest != "metadata/m.avro" || f.Size != 1234 {
				t.Errorf("DataFile = %+v, want key %q outside %v", f, tt.key, tt.outside)
			}
			if diff := cmp.Diff(tt.others, f.OtherKeys); diff != "" {
				t.Errorf("OtherKeys (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMetadataFolders: folders other than metadata/ are read when Iceberg's or UniForm's
// write.metadata.path names them.
func TestMetadataFolders(t *testing.T) {
	for _, viaDelta := range []bool{false, true} {
		t.Run(fmt.Sprint("viaDelta=", viaDelta), func(t *testing.T) {
			tb := newTable(t)
			s1 := snap{id: 1, ms: 1, list: loc + "/metadata/snap-1.avro"}
			s2 := snap{id: 2, ms: 2, list: loc + "/_iceberg/meta/snap-2.avro"}
			tb.put("metadata/snap-1.avro", manifestListBytes(t, ocf.Null))
			tb.put("_iceberg/meta/snap-2.avro", manifestListBytes(t, ocf.Null))
			props := map[string]string{"write.metadata.path": loc + "/_iceberg/meta"}
			opts := Options{}
			if viaDelta {
				props = nil
				opts.DeltaConfiguration = map[string]string{"delta.universalFormat.config.iceberg.write.metadata.path": loc + "/_iceberg/meta/"}
			}
			tb.put("metadata/v1.metadata.json", meta(t, loc, 1, 1, []snap{s1}, props, nil))
			tb.put("_iceberg/meta/v2.metadata.json", meta(t, loc, 2, 2, []snap{s1, s2}, props, nil))
			it, err := Find(context.Background(), tb.s, opts)
			if err != nil {
				t.Fatal(err)
			}
			if it.Current.Key != "_iceberg/meta/v2.metadata.json" {
				t.Errorf("Current = %s, want the file in the moved folder", it.Current.Key)
			}
			want := []string{"_iceberg/meta/snap-2.avro", "_iceberg/meta/v2.metadata.json", "metadata/snap-1.avro", "metadata/v1.metadata.json"}
			if diff := cmp.Diff(want, it.MetadataFiles); diff != "" {
				t.Errorf("MetadataFiles (-want +got):\n%s", diff)
			}
		})
	}
}

// TestManyManifests: a manifest list of thousands of manifests, in every codec Avro has, is
// read whole, block by block.
func TestManyManifests(t *testing.T) {
	for _, codec := range []ocf.CodecName{ocf.Null, ocf.Deflate, ocf.Snappy, ocf.ZStandard} {
		t.Run(string(codec), func(t *testing.T) {
			const n = 3000
			tb := newTable(t)
			var paths, want []string
			for i := 0; i < n; i++ {
				k := fmt.Sprintf("metadata/m-%05d.avro", i)
				paths, want = append(paths, loc+"/"+k), append(want, fmt.Sprintf("d/%05d.parquet", i))
				if i%1000 == 0 { // a few real ones; the rest are never opened by Find
					tb.put(k, manifestBytes(t, codec, entry{1, loc + "/" + want[i], 0}))
				}
			}
			tb.put("metadata/snap-1.avro", manifestListBytes(t, codec, paths...))
			tb.put("metadata/v1.metadata.json", meta(t, loc, 1, 1, []snap{{id: 1, ms: 1, list: loc + "/metadata/snap-1.avro"}}, nil, nil))
			it, err := Find(context.Background(), tb.s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(it.MetadataFiles); got != n+2 {
				t.Errorf("MetadataFiles: %d, want %d manifests, the list and the metadata file", got, n+2)
			}
			// The manifests Find did not need must exist for DataFiles.
			for i := 0; i < n; i++ {
				if i%1000 != 0 { // the codec is tested on the list and a few manifests: encoding is slow
					tb.put(fmt.Sprintf("metadata/m-%05d.avro", i), manifestBytes(t, ocf.Null, entry{1, loc + "/" + want[i], 0}))
				}
			}
			var got []string
			if err := it.DataFiles(context.Background(), tb.s, func(f DataFile) error { got = append(got, f.Key); return nil }); err != nil {
				t.Fatal(err)
			}
			sort.Strings(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("DataFiles (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOlderSnapshots: an older snapshot's missing or damaged manifest list is reported, not an
// error (only travelling back to it fails); a table without a current snapshot has no data.
func TestOlderSnapshots(t *testing.T) {
	tb := newTable(t)
	tb.standard(t)
	tb.s.Delete(context.Background(), []string{"metadata/snap-1.avro"})
	it, err := Find(context.Background(), tb.s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"metadata/snap-1.avro"}, it.Missing); diff != "" {
		t.Errorf("Missing (-want +got):\n%s", diff)
	}
	tb.put("metadata/snap-1.avro", []byte("garbage"))
	if it, err = Find(context.Background(), tb.s, Options{}); err != nil || len(it.Notes) == 0 {
		t.Errorf("Find: %v, notes %q; want a note on the damaged old manifest list", err, it.Notes)
	}

	empty := newTable(t)
	empty.put("metadata/v1.metadata.json", meta(t, loc, 1, -1, nil, nil, nil))
	it, err = Find(context.Background(), empty.s, Options{})
	if err != nil || it.Snapshot != nil {
		t.Fatalf("Find: %+v, %v; want a table without a snapshot", it, err)
	}
	n := 0
	if err := it.DataFiles(context.Background(), empty.s, func(DataFile) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("DataFiles: %d, %v; want none", n, err)
	}
}

// TestFormatVersion1: a version 1 snapshot may list its manifests inline.
func TestFormatVersion1(t *testing.T) {
	tb := newTable(t)
	tb.put("metadata/m.avro", manifestBytes(t, ocf.Null, entry{1, loc + "/a.parquet", 0}))
	tb.put("metadata/v1.metadata.json", meta(t, loc, 1, 1, nil, nil, func(m map[string]any) {
		m["format-version"] = 1
		delete(m, "table-uuid")
		m["schema"] = map[string]any{"type": "struct", "fields": []any{}}
		m["snapshots"] = []any{map[string]any{"snapshot-id": 1, "timestamp-ms": 5, "manifests": []string{loc + "/metadata/m.avro"}}}
	}))
	it, err := Find(context.Background(), tb.s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if it.FormatVersion != 1 || it.Snapshot == nil || it.Snapshot.ManifestList != "" {
		t.Fatalf("Find: %+v", it)
	}
	var got []string
	if err := it.DataFiles(context.Background(), tb.s, func(f DataFile) error { got = append(got, f.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.parquet"}, got); diff != "" {
		t.Errorf("DataFiles (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"metadata/m.avro", "metadata/v1.metadata.json"}, it.MetadataFiles); diff != "" {
		t.Errorf("MetadataFiles (-want +got):\n%s", diff)
	}
}

package iceberg

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// TestPyicebergFixture reads the metadata pyiceberg 0.12.0 wrote over a Delta table's files
// (testdata/pyiceberg-0.12.0/README.md) and compares with what pyiceberg reported.
func TestPyicebergFixture(t *testing.T) {
	const dir = "testdata/pyiceberg-0.12.0"
	b, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Iceberg struct {
			Table        string   `json:"table"`
			MetadataFile string   `json:"metadata_file"`
			SnapshotID   int64    `json:"snapshot_id"`
			SnapshotMs   int64    `json:"snapshot_ms"`
			ManifestList string   `json:"manifest_list"`
			DataFiles    []string `json:"data_files"`
		} `json:"iceberg"`
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	e := exp.Iceberg
	s := mem.New("file://" + e.Table)
	var all []string
	err = filepath.WalkDir(filepath.Join(dir, "metadata"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		k := "metadata/" + d.Name()
		s.PutAt(k, data, time.Unix(0, 0))
		all = append(all, k)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	it, err := Find(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if it.Current.Key != e.MetadataFile || it.Current.Kind != NameSequence || it.Current.Version != 2 {
		t.Errorf("Current = %+v, want %s", it.Current, e.MetadataFile)
	}
	if it.Snapshot == nil || it.Snapshot.ID != e.SnapshotID || !it.Snapshot.Timestamp.Equal(time.UnixMilli(e.SnapshotMs)) || it.Snapshot.ManifestList != e.ManifestList {
		t.Errorf("Snapshot = %+v", it.Snapshot)
	}
	want := &Conversion{Engine: "Apache XTable", Version: new(int64), CommitTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Property: "summary.XTABLE_METADATA", File: e.MetadataFile}
	*want.Version = 3
	if diff := cmp.Diff(want, it.Conversion); diff != "" {
		t.Errorf("Conversion (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(all, it.MetadataFiles); diff != "" {
		t.Errorf("MetadataFiles (-every file pyiceberg wrote +got):\n%s", diff)
	}
	var got []string
	if err := it.DataFiles(context.Background(), s, func(f DataFile) error { got = append(got, f.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if diff := cmp.Diff(e.DataFiles, got); diff != "" {
		t.Errorf("DataFiles (-pyiceberg +got):\n%s", diff)
	}
}

package iceberg

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage/local"
)

// TestConformance reads the Iceberg metadata pyiceberg wrote over a Delta table's own data
// files at this run of conformance/test_readers.py, and compares with what pyiceberg said;
// skipped without DELTAVACUUM_READERS_FIXTURES.
func TestConformance(t *testing.T) {
	dir := os.Getenv("DELTAVACUUM_READERS_FIXTURES")
	if dir == "" {
		t.Skip("DELTAVACUUM_READERS_FIXTURES is not set: run conformance/test_readers.py")
	}
	b, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Iceberg struct {
			Table            string   `json:"table"`
			MetadataFile     string   `json:"metadata_file"`
			SnapshotID       int64    `json:"snapshot_id"`
			SnapshotMs       int64    `json:"snapshot_ms"`
			ManifestList     string   `json:"manifest_list"`
			DataFiles        []string `json:"data_files"`
			ConvertedVersion int64    `json:"converted_version"`
			LatestVersion    int64    `json:"latest_version"`
		} `json:"iceberg"`
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	e := exp.Iceberg
	st, err := local.New(e.Table)
	if err != nil {
		t.Fatal(err)
	}
	it, err := Find(context.Background(), st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if it == nil {
		t.Fatal("Find: nil; want the Iceberg view pyiceberg wrote")
	}
	if it.Current.Key != e.MetadataFile {
		t.Errorf("Current = %s, want %s", it.Current.Key, e.MetadataFile)
	}
	if it.Snapshot == nil || it.Snapshot.ID != e.SnapshotID || !it.Snapshot.Timestamp.Equal(time.UnixMilli(e.SnapshotMs)) || it.Snapshot.ManifestList != e.ManifestList {
		t.Errorf("Snapshot = %+v, want id %d at %d ms, list %s", it.Snapshot, e.SnapshotID, e.SnapshotMs, e.ManifestList)
	}
	if it.Conversion == nil || it.Conversion.Version == nil || *it.Conversion.Version != e.ConvertedVersion {
		t.Errorf("Conversion = %+v, want Delta version %d", it.Conversion, e.ConvertedVersion)
	}
	if l := LagOf(it, e.LatestVersion, time.Now()); l.Versions == nil || *l.Versions != e.LatestVersion-e.ConvertedVersion {
		t.Errorf("LagOf = %+v, want %d versions behind", l, e.LatestVersion-e.ConvertedVersion)
	}
	var got []string
	err = it.DataFiles(context.Background(), st, func(f DataFile) error {
		if f.Outside {
			t.Errorf("data file %s reported outside the table", f.Path)
		}
		got = append(got, f.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if diff := cmp.Diff(e.DataFiles, got); diff != "" {
		t.Errorf("DataFiles (-pyiceberg +got):\n%s", diff)
	}
	// Every file in the metadata folder is Iceberg's (pyiceberg writes nothing else there)
	// and must be kept.
	keep := map[string]bool{}
	for _, k := range it.MetadataFiles {
		keep[k] = true
	}
	ents, err := os.ReadDir(filepath.Join(e.Table, "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range ents {
		if k := "metadata/" + en.Name(); !keep[k] && en.Name()[0] != '.' {
			t.Errorf("%s is not in MetadataFiles", k)
		}
	}
}

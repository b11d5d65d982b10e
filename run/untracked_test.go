package run

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// untrackedTable is a table in memory whose log names live.parquet (added) and gone.parquet
// (removed long ago), beside the files given, which no commit names; every file is two days old.
func untrackedTable(t *testing.T, files map[string]int) *mem.Store {
	t.Helper()
	ctx := context.Background()
	store := mem.New("s3://bucket/t")
	old := time.Now().Add(-48 * time.Hour)
	if err := deltalog.WriteCommit(ctx, store, 0, []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}},
		map[string]any{"add": map[string]any{"path": "live.parquet", "size": 4, "modificationTime": 1, "dataChange": true}},
		map[string]any{"remove": map[string]any{"path": "gone.parquet", "deletionTimestamp": old.Add(-time.Hour).UnixMilli(), "dataChange": true}},
	}); err != nil {
		t.Fatal(err)
	}
	store.PutAt("live.parquet", []byte("live"), old)
	store.PutAt("gone.parquet", []byte("gone!"), old)
	for k, n := range files {
		store.PutAt(k, make([]byte, n), old)
	}
	return store
}

// TestRunRecordsUntracked: a real run's record counts the files of its plan that no commit
// names, and their bytes, and names the folders holding the most of them (most files first,
// then most bytes, then by name; at most MaxUntrackedFolders, NumFolders counting them
// all); tombstoned files are not counted. The run's result plan gives the same count
// (UntrackedOf, which the service uses). A LITE run, which lists nothing, records none.
func TestRunRecordsUntracked(t *testing.T) {
	ctx := context.Background()
	files := map[string]int{"a=1/x.parquet": 10, "a=1/y.parquet": 20, "b=2/z.parquet": 40, "tmp.parquet": 30, "a=1/c=3/w.parquet": 1}
	for i := range 12 {
		files[fmt.Sprintf("spread/d%02d/f.parquet", i)] = 1
	}
	store := untrackedTable(t, files)
	zero := 0.0
	res, err := Vacuum(ctx, store, Request{Options: vacuum.Options{Now: time.Now(), RetainHours: &zero, DisableRetentionCheck: true}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ReadRecord(ctx, store, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	want := &Untracked{Files: 17, Bytes: 10 + 20 + 40 + 30 + 1 + 12, NumFolders: 16, Folders: []FolderCount{
		{Folder: "a=1", Files: 2, Bytes: 30}, {Folder: "b=2", Files: 1, Bytes: 40}, {Folder: "", Files: 1, Bytes: 30},
		{Folder: "a=1/c=3", Files: 1, Bytes: 1},
		{Folder: "spread/d00", Files: 1, Bytes: 1}, {Folder: "spread/d01", Files: 1, Bytes: 1}, {Folder: "spread/d02", Files: 1, Bytes: 1},
		{Folder: "spread/d03", Files: 1, Bytes: 1}, {Folder: "spread/d04", Files: 1, Bytes: 1}, {Folder: "spread/d05", Files: 1, Bytes: 1},
	}}
	if diff := cmp.Diff(want, rec.Untracked); diff != "" {
		t.Errorf("the record's untracked files (-want +got):\n%s", diff)
	}
	if rec.NumFiles != 18 {
		t.Errorf("the run deleted %d files, want the 17 untracked and the tombstoned one", rec.NumFiles)
	}
	if got, err := UntrackedOf(res.Plan); err != nil || !cmp.Equal(got, want) {
		t.Errorf("UntrackedOf the result's plan: %+v, %v", got, err)
	}

	lite := untrackedTable(t, map[string]int{"stray.parquet": 3})
	res, err = Vacuum(ctx, lite, Request{Options: vacuum.Options{Now: time.Now(), RetainHours: &zero, DisableRetentionCheck: true, Mode: vacuum.ModeLite}})
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := ReadRecord(ctx, lite, res.RunID); err != nil || rec.Untracked != nil {
		t.Errorf("a LITE run's record: untracked %+v, %v; want none", rec.Untracked, err)
	}
}

package run

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// reviewTable is a table whose commit 2 removes a.parquet (20 days ago: an expired tombstone
// at the default retention of 7 days) and writes the change data of that delete; commit 3
// adds c.parquet. Every data file was written 30 days ago.
func reviewTable(t *testing.T, now time.Time) *mem.Store {
	t.Helper()
	store := mem.New("file:///tmp/review/table")
	old := now.Add(-20 * 24 * time.Hour).UnixMilli()
	commit(t, store, 0, map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": readersTableID, "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}})
	commit(t, store, 1, map[string]any{"add": map[string]any{"path": "a.parquet", "size": 1, "modificationTime": 0, "dataChange": true}},
		map[string]any{"add": map[string]any{"path": "b.parquet", "size": 1, "modificationTime": 0, "dataChange": true}})
	commit(t, store, 2, map[string]any{"remove": map[string]any{"path": "a.parquet", "deletionTimestamp": old, "dataChange": true}},
		map[string]any{"cdc": map[string]any{"path": "_change_data/c2.parquet", "size": 1, "dataChange": false, "partitionValues": map[string]string{}}})
	commit(t, store, 3, map[string]any{"add": map[string]any{"path": "c.parquet", "size": 1, "modificationTime": 0, "dataChange": true}})
	for _, k := range []string{"a.parquet", "b.parquet", "c.parquet", "_change_data/c2.parquet"} {
		store.PutAt(k, []byte("x"), now.Add(-30*24*time.Hour))
	}
	return store
}

// streamingCheckpointAt is the checkpoint of a query on the review table whose only batch (0)
// finished with the end offset (version, index -1): after a restart it reads the changes of
// that version first (DeltaSourceOffset: "the offset before all changes in the
// reservoirVersion").
func streamingCheckpointAt(version int64) *mem.Store {
	cp := mem.New("cp://review")
	cp.PutAt("offsets/0", []byte(fmt.Sprintf("v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":0,\"conf\":{}}\n"+
		"{\"sourceVersion\":1,\"reservoirId\":%q,\"reservoirVersion\":%d,\"index\":-1,\"isStartingVersion\":false}", readersTableID, version)), time.Now())
	cp.PutAt("commits/0", []byte("v1\n{\"nextBatchWatermarkMs\":0}"), time.Now())
	return cp
}

func dryRunDeletes(t *testing.T, store storage.Store, req Request) []string {
	t.Helper()
	req.DryRun = true
	res, err := Vacuum(context.Background(), store, req)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range res.Plan.Files.MustCollect() {
		out = append(out, f.Path)
	}
	sort.Strings(out)
	return out
}

// TestStreamingReaderKeepsTheChangesOfTheVersionItReadsNext: a streaming query whose offset is
// (2, -1) reads the changes of commit 2 when it restarts: with readChangeFeed, the change data
// commit 2 wrote, or (for a commit without change data) the file commit 2 removed. VACUUM
// must keep both, however old: they are what the query reads next.
func TestStreamingReaderKeepsTheChangesOfTheVersionItReadsNext(t *testing.T) {
	now := time.Now()
	store := reviewTable(t, now)
	cp := streamingCheckpointAt(2)
	got := dryRunDeletes(t, store, Request{Options: vacuum.Options{Now: now}, Discover: ReaderOptions{
		StreamingCheckpoints: []string{"cp://review"}, Open: opener(map[string]storage.Store{"cp://review": cp})}})
	for _, k := range got {
		if k == "a.parquet" || k == "_change_data/c2.parquet" {
			t.Errorf("the DRY RUN deletes %s, which commit 2 names and the streaming query reads next (deletes %v)", k, got)
		}
	}
}

package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
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

// cloneOf is a shallow clone (at file:///tmp/review/clone) whose only add names, by absolute
// path, a file of the review table, with the given deletion vector (nil: none).
func cloneOf(t *testing.T, path string, dv map[string]any) *mem.Store {
	t.Helper()
	clone := mem.New("file:///tmp/review/clone")
	add := map[string]any{"path": path, "size": 1, "modificationTime": 0, "dataChange": true}
	if dv != nil {
		add["deletionVector"] = dv
	}
	commit(t, clone, 0, map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
		"readerFeatures": []string{"deletionVectors"}, "writerFeatures": []string{"deletionVectors"}}},
		map[string]any{"metaData": map[string]any{"id": "clone", "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}},
		map[string]any{"add": add})
	return clone
}

// TestShallowCloneKeepsTheDeletionVectorsItReads: SHALLOW CLONE of a table with deletion vectors
// writes its adds with absolute paths into the source table, their deletion vectors as "p"
// vectors naming the source's files (delta-io/delta#1733). When the source replaces the
// deletion vector of that file (a second DELETE) and its tombstone expires, the old vector is
// an orphan of the source, but the clone still reads it: VACUUM of the source must keep it.
func TestShallowCloneKeepsTheDeletionVectorsItReads(t *testing.T) {
	now := time.Now()
	store := mem.New("file:///tmp/review/table")
	const (
		dv1 = "deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin" // z85 ^-aqEH.-t@S}K{vb[*k^
		dv2 = "deletion_vector_00000000-0000-0000-0000-000000000024.bin" // z85 0000000000000000000A
	)
	u := func(z string) map[string]any {
		return map[string]any{"storageType": "u", "pathOrInlineDv": z, "offset": 1, "sizeInBytes": 36, "cardinality": 2}
	}
	commit(t, store, 0, map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
		"readerFeatures": []string{"deletionVectors"}, "writerFeatures": []string{"deletionVectors"}}},
		map[string]any{"metaData": map[string]any{"id": readersTableID, "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{"delta.enableDeletionVectors": "true"}}})
	commit(t, store, 1, map[string]any{"add": map[string]any{"path": "f.parquet", "size": 1, "modificationTime": 0, "dataChange": true, "deletionVector": u("^-aqEH.-t@S}K{vb[*k^")}})
	// The clone is taken here, then a second DELETE replaces the deletion vector.
	commit(t, store, 2, map[string]any{"remove": map[string]any{"path": "f.parquet", "deletionTimestamp": now.Add(-20 * 24 * time.Hour).UnixMilli(), "dataChange": true, "deletionVector": u("^-aqEH.-t@S}K{vb[*k^")}},
		map[string]any{"add": map[string]any{"path": "f.parquet", "size": 1, "modificationTime": 0, "dataChange": true, "deletionVector": u("0000000000000000000A")}})
	for _, k := range []string{"f.parquet", dv1, dv2} {
		store.PutAt(k, []byte("x"), now.Add(-30*24*time.Hour))
	}
	clone := cloneOf(t, "file:///tmp/review/table/f.parquet", map[string]any{"storageType": "p",
		"pathOrInlineDv": "file:///tmp/review/table/" + dv1, "offset": 1, "sizeInBytes": 36, "cardinality": 2})
	got := dryRunDeletes(t, store, Request{Options: vacuum.Options{Now: now}, Discover: ReaderOptions{
		Siblings: []string{"file:///tmp/review/clone"}, Open: opener(map[string]storage.Store{"file:///tmp/review/clone": clone})}})
	for _, k := range got {
		if k == dv1 {
			t.Errorf("the DRY RUN deletes %s, the deletion vector the shallow clone reads (deletes %v)", k, got)
		}
	}
}

// TestShallowCloneKeepsEveryReadingOfItsPaths: a path the clone names that can be read two
// ways (a writer that did not escape '%') keeps both readings, as the table's own log does
// for its files (VACUUM-SPEC section 7).
func TestShallowCloneKeepsEveryReadingOfItsPaths(t *testing.T) {
	now := time.Now()
	store := mem.New("file:///tmp/review/table")
	commit(t, store, 0, map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": readersTableID, "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}})
	commit(t, store, 1, map[string]any{"add": map[string]any{"path": "p=a%3Ab/part.parquet", "size": 1, "modificationTime": 0, "dataChange": true}})
	commit(t, store, 2, map[string]any{"remove": map[string]any{"path": "p=a%3Ab/part.parquet", "deletionTimestamp": now.Add(-20 * 24 * time.Hour).UnixMilli(), "dataChange": true}})
	store.PutAt("p=a%3Ab/part.parquet", []byte("x"), now.Add(-30*24*time.Hour))
	clone := cloneOf(t, "file:///tmp/review/table/p=a%3Ab/part.parquet", nil)
	got := dryRunDeletes(t, store, Request{Options: vacuum.Options{Now: now}, Discover: ReaderOptions{
		Siblings: []string{"file:///tmp/review/clone"}, Open: opener(map[string]storage.Store{"file:///tmp/review/clone": clone})}})
	if len(got) != 0 {
		t.Errorf("the DRY RUN deletes %v, which the shallow clone reads", got)
	}
}

// TestReaderRefusalWritesNothing: a real run refused for a pin it cannot honour (a pin beyond
// the log, which the planner refuses after the lock is taken) leaves the table's folder as it
// found it, and deletes nothing.
func TestReaderRefusalWritesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	commit(t, store, 0, map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": readersTableID, "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}})
	commit(t, store, 1, map[string]any{"add": map[string]any{"path": "a.parquet", "size": 1, "modificationTime": 0, "dataChange": true}})
	commit(t, store, 2, map[string]any{"remove": map[string]any{"path": "a.parquet", "deletionTimestamp": now.Add(-20 * 24 * time.Hour).UnixMilli(), "dataChange": true}})
	old := now.Add(-30 * 24 * time.Hour)
	for _, k := range []string{"a.parquet", "orphan.parquet"} {
		if err := os.WriteFile(filepath.Join(dir, k), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(dir, k), old, old); err != nil {
			t.Fatal(err)
		}
	}
	const id = "0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21"
	b, err := json.Marshal(Pin{Format: pinFormat, ID: id, Table: store.Location(), Version: 100, Reason: "another table's",
		Created: now.Add(-time.Hour).UTC(), Until: now.Add(time.Hour).UTC(), By: Self()})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(ctx, pinKey(id), b); err != nil {
		t.Fatal(err)
	}
	before := filesBelow(t, dir)
	_, err = Vacuum(ctx, store, Request{Options: vacuum.Options{Now: now}})
	if !errors.Is(err, vacuum.ErrReaderTooOld) {
		t.Fatalf("got %v, want the refusal of a pin beyond the log", err)
	}
	// (The lock folder's own time moves: the lock's ticket was written in it and removed.)
	if after := filesBelow(t, dir); !slices.Equal(before, after) {
		t.Errorf("the refusal changed the folder:\nbefore %v\nafter  %v", before, after)
	}
}

// filesBelow is tree without the times of folders.
func filesBelow(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, e := range tree(t, dir) {
		if fi, err := os.Stat(e[:strings.Index(e, " ")]); err == nil && fi.IsDir() {
			e = e[:strings.LastIndex(e, " ")]
		}
		out = append(out, e)
	}
	return out
}

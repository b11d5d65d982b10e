package adversarial

import (
	"context"
	"encoding/json"
	dvrun "github.com/deltavacuum/deltavacuum/run"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage/local"
)

// The trash tests attack the folders a run moves files into instead of deleting them: every
// path that takes a trash folder (vacuum --trash, trash purge, undo, the service's purge) goes
// through one rule (vacuum.TrashFolder), and a purge deletes only what run records say was
// moved there.

// partitionedTable is a table partitioned by _p whose live files lie in _p=1/, one of them in a
// folder named like a run id (a data folder: its name does not start with '_' or '.').
func partitionedTable(t *testing.T) (*localTable, []string) {
	t.Helper()
	meta := `{"metaData":{"id":"trash","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"_p\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["_p"],"configuration":{},"createdTime":0}}`
	tb := newLocalTableIn(t, t.TempDir(), protocolLine, meta)
	live := []string{"_p=1/part-0.parquet", "_p=1/20261101T000000Z-deadbeef/part-1.parquet"}
	var lines []string
	for _, p := range live {
		tb.file(p, 30*day)
		lines = append(lines, `{"add":{"path":`+jsonString(p)+`,"size":1,"modificationTime":0,"dataChange":true,"partitionValues":{"_p":"1"}}}`)
	}
	tb.commit(lines...)
	tb.file("_p=1/stray.parquet", 30*day)
	return tb, live
}

// TestTrashPurgeOfAPartitionFolder: `trash purge --trash _p=1` (a partition folder of the table,
// which VACUUM does not hide) deleted a live file on the main of 2026-12-01; vacuum --trash
// refused the same folder. Every path now refuses it, and nothing is deleted.
func TestTrashPurgeOfAPartitionFolder(t *testing.T) {
	tb, live := partitionedTable(t)
	for _, args := range [][]string{
		{"trash", "purge", tb.dir, "--trash", "_p=1", "--older-than", "0"},
		{"trash", "purge", tb.dir, "--trash", "_p=1/", "--older-than", "0", "--dry-run"},
		{"trash", "purge", tb.dir, "--trash", "./_p=1", "--older-than", "0"},
		{"vacuum", tb.dir, "--trash=_p=1", "--retain-hours", "0", "--conf", checkOff},
	} {
		code, _, stderr := run(t, args...)
		if code == 0 || !strings.Contains(stderr, "does not take _p=1 for hidden") {
			t.Errorf("%v: exit %d, want a refusal naming the partition folder: %s", args, code, stderr)
		}
		tb.mustExist(live...)
		tb.mustExist("_p=1/stray.parquet")
	}
}

// TestUndoOfARecordWhoseTrashIsAPartitionFolder: a planted run record that names a partition
// folder as its trash is not used: its undo would move live files.
func TestUndoOfARecordWhoseTrashIsAPartitionFolder(t *testing.T) {
	tb, live := partitionedTable(t)
	store, err := local.New(tb.dir)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().Add(-48 * time.Hour)
	id := "20261101T000000Z-deadbeef"
	rec := &dvrun.Record{ID: id, Table: store.Location(), Status: dvrun.StatusCompleted, Complete: true, StartedAt: started, Mode: "FULL",
		Trash: "_p=1/" + id + "/", Files: []dvrun.Entry{{Path: "part-1.parquet", Size: 1}}}
	if err := dvrun.WriteRecord(context.Background(), store, rec); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "undo", tb.dir, "--run", id)
	if code == 0 || !strings.Contains(stderr, "does not take _p=1 for hidden") {
		t.Errorf("undo: exit %d: %s", code, stderr)
	}
	code, _, stderr = run(t, "trash", "purge", tb.dir, "--older-than", "0")
	if code != 0 {
		t.Errorf("purge of the default trash: exit %d: %s", code, stderr)
	}
	tb.mustExist(live...)
	if tb.exists("part-1.parquet") {
		t.Error("undo moved a live file out of its partition")
	}
}

// TestTrashPurgeDeletesOnlyWhatRecordsMoved: a file planted in a run's trash folder, not named
// by the run's record, survives the purge of that run's trash.
func TestTrashPurgeDeletesOnlyWhatRecordsMoved(t *testing.T) {
	tb := newLocalTable(t)
	tb.commit(addLine("live.parquet"))
	tb.file("live.parquet", 30*day)
	tb.file("stray.parquet", 30*day)
	code, stdout, stderr := run(t, "vacuum", tb.dir, "--trash", "--retain-hours", "0", "--conf", checkOff, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	id := jsonField(t, stdout, "runId")
	planted := filepath.Join("_deltavacuum", "trash", id, "planted.parquet")
	tb.file(planted, 30*day)
	if code, _, stderr := run(t, "trash", "purge", tb.dir, "--older-than", "0"); code != 0 {
		t.Fatalf("purge: exit %d: %s", code, stderr)
	}
	if tb.exists(filepath.Join("_deltavacuum", "trash", id, "stray.parquet")) {
		t.Error("the purge left the trashed file")
	}
	tb.mustExist("live.parquet", planted)
}

// TestTrashFolderThatIsAFile: --trash=_t where _t is a regular file ended COMPLETED with both
// files "already gone" on the main of 2026-12-01, while they were still on disk. The run is now
// refused before anything is moved.
func TestTrashFolderThatIsAFile(t *testing.T) {
	tb := newLocalTable(t)
	tb.commit(addLine("live.parquet"))
	tb.file("live.parquet", 30*day)
	tb.file("stray-1.parquet", 30*day)
	tb.file("stray-2.parquet", 30*day)
	if err := os.WriteFile(filepath.Join(tb.dir, "_t"), []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "vacuum", tb.dir, "--trash=_t", "--retain-hours", "0", "--conf", checkOff, "--json")
	if code == 0 || !strings.Contains(stderr, "is a file, not a folder") {
		t.Fatalf("exit %d, want a refusal: %s %s", code, stdout, stderr)
	}
	if strings.Contains(stdout, `"numAlreadyGoneFiles": 2`) {
		t.Errorf("files on disk counted as already gone: %s", stdout)
	}
	tb.mustExist("live.parquet", "stray-1.parquet", "stray-2.parquet")
}

// jsonField returns the string field key of the JSON document doc.
func jsonField(t *testing.T, doc, key string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("%v: %s", err, doc)
	}
	s, _ := m[key].(string)
	if s == "" {
		t.Fatalf("no %s in %s", key, doc)
	}
	return s
}

package undo

import (
	"bytes"
	"compress/gzip"
	"context"
	"github.com/deltavacuum/deltavacuum/run"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

func tableSnap(t *testing.T, s storage.Store, adds ...string) *deltalog.Snapshot {
	t.Helper()
	ctx := context.Background()
	actions := []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet"},
			"schemaString":     `{"type":"struct","fields":[{"name":"_p","type":"string","nullable":true,"metadata":{}}]}`,
			"partitionColumns": []string{"_p"}, "configuration": map[string]string{}}},
	}
	for _, p := range append([]string{"live.parquet", "_p=1/x.parquet"}, adds...) {
		actions = append(actions, map[string]any{"add": map[string]any{"path": p, "size": 5, "modificationTime": 1, "dataChange": true, "partitionValues": map[string]string{}}})
	}
	if err := deltalog.WriteCommit(ctx, s, 0, actions); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"live.parquet", "_p=1/x.parquet"} {
		if err := s.Put(ctx, p, []byte("12345")); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := deltalog.Load(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// A killed run left a record of what it planned: undo refuses it unless told, then restores
// what is missing and leaves what is there. (Whether its process is gone is the table lock's
// to tell: a real undo holds it, see the root package's tests.)
func TestUnfinishedRun(t *testing.T) {
	ctx := context.Background()
	s := mem.New("mem://t")
	snap := tableSnap(t, s)
	started := time.Now().Add(-time.Hour)
	id := run.NewID(started)
	rec := &run.Record{ID: id, Table: "mem://t", Status: run.StatusRunning, StartedAt: started, Mode: "FULL", Trash: "_t/" + id + "/",
		Files: []run.Entry{{Path: "moved.parquet", Size: 3}, {Path: "not-moved.parquet", Size: 3}}}
	if err := run.WriteRecord(ctx, s, rec); err != nil {
		t.Fatal(err)
	}
	_ = s.Put(ctx, "_t/"+id+"/moved.parquet", []byte("abc"))
	_ = s.Put(ctx, "not-moved.parquet", []byte("def"))
	if _, err := Undo(ctx, s, id, Options{Snapshot: snap}); err == nil || !strings.Contains(err.Error(), "--unfinished") {
		t.Fatalf("undo of a running run: %v", err)
	}
	rep, err := Undo(ctx, s, id, Options{Unfinished: true, Snapshot: snap})
	if err != nil || rep.NumRestored != 1 || rep.NumPresent != 1 {
		t.Fatalf("undo --unfinished: %+v, %v", rep, err)
	}
	if b, _ := storage.ReadAll(ctx, s, "moved.parquet"); string(b) != "abc" {
		t.Fatalf("moved.parquet: %q", b)
	}
}

// writeTrashed writes the record of a run that moved files into the trash folder, and those
// files into the trash.
func writeTrashed(t *testing.T, s storage.Store, folder string, started time.Time, files ...string) string {
	t.Helper()
	ctx := context.Background()
	id := run.NewID(started)
	rec := &run.Record{ID: id, Table: s.Location(), Status: run.StatusCompleted, Complete: true, StartedAt: started, Mode: "FULL", Trash: folder + id + "/",
		NumFiles: int64(len(files)), Bytes: 5 * int64(len(files))}
	for _, f := range files {
		rec.Files = append(rec.Files, run.Entry{Path: f, Size: 5})
		if err := s.Put(ctx, folder+id+"/"+f, []byte("12345")); err != nil {
			t.Fatal(err)
		}
	}
	if err := run.WriteRecord(ctx, s, rec); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestPurge: a purge deletes from the trash what the records of the runs older than the window
// say they moved there, and nothing else: not a file no record names, not a younger run's, not
// one in another folder, not one the table's log names; a folder the table does not hide (a
// partition folder) is refused.
func TestPurge(t *testing.T) {
	ctx := context.Background()
	s := mem.New("mem://t")
	now := time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC)
	old := writeTrashed(t, s, "_t/", now.Add(-8*24*time.Hour), "a.parquet", "p=1/b.parquet", "named-by-the-log.parquet")
	young := writeTrashed(t, s, "_t/", now.Add(-time.Hour), "c.parquet")
	other := writeTrashed(t, s, "_t2/", now.Add(-8*24*time.Hour), "e.parquet")
	for _, k := range []string{"_t/" + old + "/unnamed.parquet", "_t/not-a-run/d.parquet"} {
		_ = s.Put(ctx, k, []byte("12345"))
	}
	snap := tableSnap(t, s, "_t/"+old+"/named-by-the-log.parquet")
	if _, err := Purge(ctx, s, snap, "_t/", -time.Hour, now, false); err == nil {
		t.Fatal("negative age accepted")
	}
	for _, bad := range []string{"t/", "_delta_log/", "../_t/", "", run.RunsDir, "_p=1/", "_t"} {
		if _, err := Purge(ctx, s, snap, bad, 0, now, false); err == nil {
			t.Errorf("purge of folder %q accepted", bad)
		}
	}
	before := s.Keys()
	dry, err := Purge(ctx, s, snap, "_t/", 7*24*time.Hour, now, true)
	if err != nil || dry.NumFiles != 2 || dry.Bytes != 10 || !slices.Equal(s.Keys(), before) {
		t.Fatalf("dry purge: %+v, %v, %v", dry, err, s.Keys())
	}
	rep, err := Purge(ctx, s, snap, "_t/", 7*24*time.Hour, now, false)
	if err != nil || rep.NumFiles != 2 || len(rep.Runs) != 1 || rep.Runs[0] != old || len(rep.Kept) != 1 || rep.Kept[0] != young || len(rep.Left) != 2 {
		t.Fatalf("purge: %+v, %v", rep, err)
	}
	want := map[string]bool{"_t/" + young + "/c.parquet": true, "_t/not-a-run/d.parquet": true, "live.parquet": true, "_t2/" + other + "/e.parquet": true,
		"_t/" + old + "/unnamed.parquet": true, "_t/" + old + "/named-by-the-log.parquet": true, "_p=1/x.parquet": true}
	for _, k := range s.Keys() {
		if strings.HasSuffix(k, "/") || strings.HasPrefix(k, "_delta_log/") || strings.HasPrefix(k, run.RunsDir) {
			continue
		}
		if !want[k] {
			t.Errorf("%s left after the purge", k)
		}
		delete(want, k)
	}
	if len(want) > 0 {
		t.Errorf("purged what it must keep: %v", want)
	}
}

// TestPurgeOfAPartitionFolder: the attack that deleted a live file. A partition column _p makes
// _p=1 a partition folder; a record that names _p=1 as its trash is not used, and a purge of
// --trash _p=1 is refused, whatever is in it.
func TestPurgeOfAPartitionFolder(t *testing.T) {
	ctx := context.Background()
	s := mem.New("mem://t")
	now := time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC)
	snap := tableSnap(t, s)
	id := run.NewID(now.Add(-8 * 24 * time.Hour))
	_ = s.Put(ctx, "_p=1/"+id+"/x.parquet", []byte("12345"))
	rec := &run.Record{ID: id, Table: "mem://t", Status: run.StatusCompleted, Complete: true, StartedAt: now.Add(-8 * 24 * time.Hour), Mode: "FULL",
		Trash: "_p=1/" + id + "/", Files: []run.Entry{{Path: "x.parquet", Size: 5}}}
	if err := run.WriteRecord(ctx, s, rec); err != nil {
		t.Fatal(err)
	}
	for _, folder := range []string{"_p=1/", "_p=1"} {
		if rep, err := Purge(ctx, s, snap, folder, 0, now, false); err == nil {
			t.Errorf("purge of the partition folder %q: %+v", folder, rep)
		}
	}
	if _, err := Undo(ctx, s, id, Options{Snapshot: snap}); err == nil || !strings.Contains(err.Error(), "does not take _p=1 for hidden") {
		t.Errorf("undo of a run whose trash is a partition folder: %v", err)
	}
	for _, k := range []string{"_p=1/x.parquet", "_p=1/" + id + "/x.parquet"} {
		if _, err := s.Stat(ctx, k); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
}

// TestUndoRefusesABadRecord: a planted or damaged record (run.ReadRecord refuses it: every form
// in run's TestRecordRefusals) is not undone.
func TestUndoRefusesABadRecord(t *testing.T) {
	ctx := context.Background()
	const id = "20261201T153000Z-1a2b3c4d"
	header := `{"format":1,"id":"` + id + `","table":"mem://t","status":"COMPLETED","complete":true,"startedAt":"2026-12-01T15:30:00Z","mode":"FULL","snapshotVersion":3,"retentionHours":0,"recovery":{"kind":"none","detail":"x"},"numFiles":1,"bytes":5,"numDirectories":0}`
	for name, body := range map[string]string{
		"path outside": header + "\n" + `{"path":"../etc/passwd","size":1}`,
		"log path":     header + "\n" + `{"path":"_delta_log/00000000000000000000.json","size":1}`,
		"not json":     header + "\n" + `a`,
	} {
		t.Run(name, func(t *testing.T) {
			s := mem.New("mem://t")
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write([]byte(body))
			zw.Close()
			if err := s.Put(ctx, run.RunsDir+id+".jsonl.gz", buf.Bytes()); err != nil {
				t.Fatal(err)
			}
			if _, err := Undo(ctx, s, id, Options{Snapshot: tableSnap(t, s)}); err == nil {
				t.Fatal("undo ran on a bad record")
			}
		})
	}
}

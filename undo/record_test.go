package undo

import (
	"bytes"
	"compress/gzip"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

func TestIDs(t *testing.T) {
	at := time.Date(2026, 12, 1, 15, 30, 0, 0, time.UTC)
	id := NewID(at)
	if !ValidID(id) || !strings.HasPrefix(id, "20261201T153000Z-") {
		t.Fatalf("NewID: %q", id)
	}
	if got, ok := IDTime(id); !ok || !got.Equal(at) {
		t.Fatalf("IDTime(%q) = %v, %v", id, got, ok)
	}
	for _, bad := range []string{"", "x", "../20261201T153000Z-1a2b3c4d", "20261201T153000Z-1a2b3c4d/..", "20261201T153000Z-1A2B3C4D", "20261201T153000Z-1a2b3c4d\n", "20261341T153000Z-1a2b3c4d.jsonl", "20261201T153000Z-1a2b3c4"} {
		if ValidID(bad) {
			if _, ok := IDTime(bad); ok {
				t.Errorf("%q taken for a run id", bad)
			}
		}
	}
	if ValidID("20261341T153000Z-1a2b3c4d") {
		if _, ok := IDTime("20261341T153000Z-1a2b3c4d"); ok {
			t.Error("month 13 parsed")
		}
	}
}

func gz(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.Bytes()
}

func goodRecord(id string) string {
	return `{"format":1,"id":"` + id + `","table":"mem://t","status":"COMPLETED","complete":true,"startedAt":"2026-12-01T15:30:00Z","mode":"FULL","snapshotVersion":3,"retentionHours":0,"recovery":{"kind":"none","detail":"x"},"numFiles":1,"bytes":5,"numDirectories":0}`
}

// A record is input: a planted or damaged one must not make undo write where VACUUM never
// deletes (the log, the tool's folder, outside the table), nor be half-read.
func TestRecordRefusals(t *testing.T) {
	const id = "20261201T153000Z-1a2b3c4d"
	ctx := context.Background()
	cases := map[string]string{
		"path outside":          goodRecord(id) + "\n" + `{"path":"../etc/passwd","size":1}`,
		"absolute path":         goodRecord(id) + "\n" + `{"path":"/etc/passwd","size":1}`,
		"log path":              goodRecord(id) + "\n" + `{"path":"_delta_log/00000000000000000000.json","size":1}`,
		"tool folder":           goodRecord(id) + "\n" + `{"path":"_deltavacuum/runs/x.jsonl","size":1}`,
		"directory":             goodRecord(id) + "\n" + `{"path":"a/","size":1}`,
		"empty path":            goodRecord(id) + "\n" + `{"path":"","size":1}`,
		"dot segment":           goodRecord(id) + "\n" + `{"path":"a/./b","size":1}`,
		"negative size":         goodRecord(id) + "\n" + `{"path":"a","size":-2}`,
		"unknown entry field":   goodRecord(id) + "\n" + `{"path":"a","size":1,"to":"../x"}`,
		"duplicate key":         goodRecord(id) + "\n" + `{"path":"a","path":"../x","size":1}`,
		"not json":              goodRecord(id) + "\n" + `a`,
		"other id":              goodRecord("20261201T153000Z-00000000"),
		"other format":          strings.Replace(goodRecord(id), `"format":1`, `"format":2`, 1),
		"unknown status":        strings.Replace(goodRecord(id), `COMPLETED`, `DONE`, 1),
		"unknown header field":  strings.Replace(goodRecord(id), `"mode"`, `"undo":"x","mode"`, 1),
		"trash not hidden":      strings.Replace(goodRecord(id), `"mode"`, `"trash":"data/","mode"`, 1),
		"trash in log":          strings.Replace(goodRecord(id), `"mode"`, `"trash":"_delta_log/t/","mode"`, 1),
		"trash outside":         strings.Replace(goodRecord(id), `"mode"`, `"trash":"../_t/","mode"`, 1),
		"trash in change data":  strings.Replace(goodRecord(id), `"mode"`, `"trash":"_change_data/t/","mode"`, 1),
		"trash without slash":   strings.Replace(goodRecord(id), `"mode"`, `"trash":"_t","mode"`, 1),
		"empty":                 "",
		"invalid utf-8 in path": goodRecord(id) + "\n" + "{\"path\":\"a\xff\",\"size\":1}",
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			s := mem.New("mem://t")
			if err := s.Put(ctx, RunsDir+id+recordSuffix, gz(body)); err != nil {
				t.Fatal(err)
			}
			if r, err := Read(ctx, s, id); err == nil {
				t.Fatalf("record read: %+v %+v", r, r.Files)
			}
			if _, err := Undo(ctx, s, id, Options{}); err == nil {
				t.Fatal("undo ran on a bad record")
			}
		})
	}
	s := mem.New("mem://t")
	if err := s.Put(ctx, RunsDir+id+recordSuffix, []byte(goodRecord(id))); err == nil {
		if _, err := Read(ctx, s, id); err == nil {
			t.Fatal("a record that is not gzip was read")
		}
	}
	if err := s.Put(ctx, RunsDir+id+recordSuffix, gz(goodRecord(id)+"\n"+`{"path":"a b/c%20.parquet","size":5,"modificationTime":1}`+"\n")); err != nil {
		t.Fatal(err)
	}
	r, err := Read(ctx, s, id)
	if err != nil || len(r.Files) != 1 || r.Files[0].Path != "a b/c%20.parquet" {
		t.Fatalf("good record: %+v, %v", r, err)
	}
	for _, bad := range []string{"", "../x", "20261201T153000Z-1a2b3c4d/../x"} {
		if _, err := Read(ctx, s, bad); err == nil {
			t.Errorf("Read(%q) accepted", bad)
		}
	}
}

// The run list reads headers only, shows an unreadable record as such, and ignores names
// that are not records.
func TestList(t *testing.T) {
	ctx := context.Background()
	s := mem.New("mem://t")
	if runs, err := List(ctx, s); err != nil || len(runs) != 0 {
		t.Fatalf("no runs folder: %v, %v", runs, err)
	}
	a, b := "20261201T153000Z-1a2b3c4d", "20261202T153000Z-1a2b3c4d"
	for k, v := range map[string]string{
		RunsDir + a + recordSuffix:               goodRecord(a) + "\n" + strings.Repeat(`{"path":"x","size":1}`+"\n", 5000),
		RunsDir + b + recordSuffix:               "garbage",
		RunsDir + "notes.txt":                    "x",
		RunsDir + "sub/" + a + recordSuffix:      goodRecord(a),
		RunsDir + "../x" + recordSuffix:          "x",
		RunsDir + a + ".jsonl.bak":               "x",
		RunsDir + a + ".jsonl":                   "x",
		RunsDir + "20261201T153000Z-zz.jsonl.gz": "x",
	} {
		if storage.ValidKey(k) {
			if err := s.Put(ctx, k, gz(v)); err != nil {
				t.Fatal(err)
			}
		}
	}
	runs, err := List(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != a || runs[0].Err != "" || runs[0].NumFiles != 1 || runs[1].ID != b || runs[1].Err == "" {
		t.Fatalf("runs: %+v", runs)
	}
}

// A killed run left a record of what it planned: undo refuses it unless told, then restores
// what is missing and leaves what is there.
func TestUnfinishedRun(t *testing.T) {
	ctx := context.Background()
	s := mem.New("mem://t")
	started := time.Now().Add(-time.Hour) // killed long ago: no heartbeat, a start older than the stale limit
	id := NewID(started)
	rec := &Record{ID: id, Table: "mem://t", Status: StatusRunning, StartedAt: started, Mode: "FULL", Trash: "_t/" + id + "/",
		Files: []Entry{{Path: "moved.parquet", Size: 3}, {Path: "not-moved.parquet", Size: 3}}}
	if err := Write(ctx, s, rec); err != nil {
		t.Fatal(err)
	}
	_ = s.Put(ctx, "_t/"+id+"/moved.parquet", []byte("abc"))
	_ = s.Put(ctx, "not-moved.parquet", []byte("def"))
	if _, err := Undo(ctx, s, id, Options{}); err == nil || !strings.Contains(err.Error(), "--unfinished") {
		t.Fatalf("undo of a running run: %v", err)
	}
	rep, err := Undo(ctx, s, id, Options{Unfinished: true})
	if err != nil || rep.NumRestored != 1 || rep.NumPresent != 1 {
		t.Fatalf("undo --unfinished: %+v, %v", rep, err)
	}
	if b, _ := storage.ReadAll(ctx, s, "moved.parquet"); string(b) != "abc" {
		t.Fatalf("moved.parquet: %q", b)
	}
}

func TestPurge(t *testing.T) {
	ctx := context.Background()
	s := mem.New("mem://t")
	now := time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC)
	old, young := NewID(now.Add(-8*24*time.Hour)), NewID(now.Add(-time.Hour))
	for _, k := range []string{"_t/" + old + "/a.parquet", "_t/" + old + "/p=1/b.parquet", "_t/" + young + "/c.parquet", "_t/not-a-run/d.parquet", "live.parquet", "_t2/" + old + "/e.parquet"} {
		_ = s.Put(ctx, k, []byte("12345"))
	}
	if _, err := Purge(ctx, s, "_t/", -time.Hour, now, false); err == nil {
		t.Fatal("negative age accepted")
	}
	for _, bad := range []string{"t/", "_delta_log/", "../_t/", "", RunsDir} {
		if _, err := Purge(ctx, s, bad, 0, now, false); err == nil {
			t.Errorf("purge of folder %q accepted", bad)
		}
	}
	dry, err := Purge(ctx, s, "_t/", 7*24*time.Hour, now, true)
	if err != nil || dry.NumFiles != 2 || dry.Bytes != 10 || len(s.Keys()) != 6 {
		t.Fatalf("dry purge: %+v, %v, %v", dry, err, s.Keys())
	}
	rep, err := Purge(ctx, s, "_t/", 7*24*time.Hour, now, false)
	if err != nil || rep.NumFiles != 2 || len(rep.Runs) != 1 || rep.Runs[0] != old || len(rep.Kept) != 1 {
		t.Fatalf("purge: %+v, %v", rep, err)
	}
	want := map[string]bool{"_t/" + young + "/c.parquet": true, "_t/not-a-run/d.parquet": true, "live.parquet": true, "_t2/" + old + "/e.parquet": true}
	for _, k := range s.Keys() {
		if !strings.HasSuffix(k, "/") && !want[k] {
			t.Errorf("%s left after the purge", k)
		}
		delete(want, k)
	}
	if len(want) > 0 {
		t.Errorf("purged what it must keep: %v", want)
	}
}

// TestPurgeKeepsLiveRun: the trash of a run that started before the cutoff but is still in
// progress (its record RUNNING, its heartbeat fresh: a long run of another process) is kept;
// once its heartbeat is stale, the window decides as for any run.
func TestPurgeKeepsLiveRun(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		beat time.Duration // before now
		kept bool
	}{{"live", time.Minute, true}, {"stale", DefaultStaleAfter + time.Minute, false}} {
		t.Run(tc.name, func(t *testing.T) {
			s := mem.New("mem://t")
			started := now.Add(-8 * 24 * time.Hour)
			id := NewID(started)
			rec := &Record{ID: id, Table: "mem://t", Status: StatusRunning, StartedAt: started, Mode: "FULL", Trash: "_t/" + id + "/",
				Files: []Entry{{Path: "a.parquet", Size: 5}}}
			if err := Write(ctx, s, rec); err != nil {
				t.Fatal(err)
			}
			if err := WriteHeartbeat(ctx, s, id, now.Add(-tc.beat)); err != nil {
				t.Fatal(err)
			}
			_ = s.Put(ctx, "_t/"+id+"/a.parquet", []byte("12345"))
			rep, err := Purge(ctx, s, "_t/", 7*24*time.Hour, now, false)
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := s.Stat(ctx, "_t/"+id+"/a.parquet")
			if kept := statErr == nil; kept != tc.kept {
				t.Fatalf("trash of the run kept: %v, want %v (%+v)", kept, tc.kept, rep)
			}
			if tc.kept && (len(rep.Kept) != 1 || len(rep.Runs) != 0) {
				t.Errorf("report %+v: the live run is not listed as kept", rep)
			}
		})
	}
}

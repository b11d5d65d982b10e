package undo

import (
	"bytes"
	"compress/gzip"
	"context"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// TestIDs: a new run id is a version 7 UUID (a GUID wherever one is wanted, Fabric's job
// ids) that carries its start time and sorts by it as a string; ids of the older form are
// still read; anything else is no run id.
func TestIDs(t *testing.T) {
	at := time.Date(2026, 12, 1, 15, 30, 0, 0, time.UTC)
	id := NewID(at)
	if !ValidID(id) || !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(id) {
		t.Fatalf("NewID: %q, want a version 7 UUID in lower case", id)
	}
	if u, err := uuid.Parse(id); err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 || u.String() != id {
		t.Fatalf("NewID %q read as a UUID: %v %v", id, u, err)
	}
	if got, ok := IDTime(id); !ok || !got.Equal(at) {
		t.Fatalf("IDTime(%q) = %v, %v", id, got, ok)
	}
	if !ValidID(IDExample) {
		t.Errorf("IDExample %q is no run id", IDExample)
	}
	// Sorted as strings, ids are sorted by time: across milliseconds, within one, across years.
	var prev string
	for i, d := range []time.Duration{0, 300 * time.Nanosecond, time.Microsecond, time.Millisecond, time.Second, 24 * time.Hour, 200 * 24 * 365 * time.Hour} {
		next := NewID(at.Add(d))
		if got, ok := IDTime(next); !ok || got.Sub(at.Add(d)).Abs() > 250*time.Nanosecond {
			t.Errorf("IDTime(%q) = %v, want %v", next, got, at.Add(d))
		}
		if i > 0 && next <= prev {
			t.Errorf("%q (at +%v) sorts before %q", next, d, prev)
		}
		prev = next
	}
	// The older form is read, with its time.
	if old := "20261201T153000Z-1a2b3c4d"; !ValidID(old) {
		t.Errorf("the older id %q is refused", old)
	} else if got, ok := IDTime(old); !ok || !got.Equal(at) {
		t.Errorf("IDTime(%q) = %v, %v", old, got, ok)
	}
	for _, bad := range []string{"", "x", "../20261201T153000Z-1a2b3c4d", "20261201T153000Z-1a2b3c4d/..", "20261201T153000Z-1A2B3C4D", "20261201T153000Z-1a2b3c4d\n",
		"20261341T153000Z-1a2b3c4d.jsonl", "20261201T153000Z-1a2b3c4",
		strings.ToUpper(id), "{" + id + "}", strings.ReplaceAll(id, "-", ""), id + "\n", " " + id, id[:35], id + "0", "../" + id,
		"f2d65699-dd22-4889-980c-15226deb0e1b", // version 4: not an id this tool makes
		"0196f5a2-3c41-7d2e-cb1a-5c3e8f7a6b21", // another variant
		"00000000-0000-0000-0000-000000000000"} {
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
		"path outside":            goodRecord(id) + "\n" + `{"path":"../etc/passwd","size":1}`,
		"absolute path":           goodRecord(id) + "\n" + `{"path":"/etc/passwd","size":1}`,
		"log path":                goodRecord(id) + "\n" + `{"path":"_delta_log/00000000000000000000.json","size":1}`,
		"tool folder":             goodRecord(id) + "\n" + `{"path":"_deltavacuum/runs/x.jsonl","size":1}`,
		"directory":               goodRecord(id) + "\n" + `{"path":"a/","size":1}`,
		"empty path":              goodRecord(id) + "\n" + `{"path":"","size":1}`,
		"dot segment":             goodRecord(id) + "\n" + `{"path":"a/./b","size":1}`,
		"negative size":           goodRecord(id) + "\n" + `{"path":"a","size":-2}`,
		"unknown entry field":     goodRecord(id) + "\n" + `{"path":"a","size":1,"to":"../x"}`,
		"duplicate key":           goodRecord(id) + "\n" + `{"path":"a","path":"../x","size":1}`,
		"not json":                goodRecord(id) + "\n" + `a`,
		"other id":                goodRecord("20261201T153000Z-00000000"),
		"other format":            strings.Replace(goodRecord(id), `"format":1`, `"format":2`, 1),
		"unknown status":          strings.Replace(goodRecord(id), `COMPLETED`, `DONE`, 1),
		"unknown header field":    strings.Replace(goodRecord(id), `"mode"`, `"undo":"x","mode"`, 1),
		"trash not hidden":        strings.Replace(goodRecord(id), `"mode"`, `"trash":"data/","mode"`, 1),
		"trash in log":            strings.Replace(goodRecord(id), `"mode"`, `"trash":"_delta_log/t/","mode"`, 1),
		"trash outside":           strings.Replace(goodRecord(id), `"mode"`, `"trash":"../_t/","mode"`, 1),
		"trash in change data":    strings.Replace(goodRecord(id), `"mode"`, `"trash":"_change_data/t/","mode"`, 1),
		"trash without slash":     strings.Replace(goodRecord(id), `"mode"`, `"trash":"_t","mode"`, 1),
		"untracked negative":      strings.Replace(goodRecord(id), `"mode"`, `"untracked":{"files":-1,"bytes":0,"folders":[],"numFolders":0},"mode"`, 1),
		"untracked empty folder":  strings.Replace(goodRecord(id), `"mode"`, `"untracked":{"files":1,"bytes":0,"folders":[{"folder":"a","files":0,"bytes":0}],"numFolders":1},"mode"`, 1),
		"untracked more folders":  strings.Replace(goodRecord(id), `"mode"`, `"untracked":{"files":1,"bytes":0,"folders":[{"folder":"a","files":1,"bytes":0}],"numFolders":0},"mode"`, 1),
		"untracked unknown field": strings.Replace(goodRecord(id), `"mode"`, `"untracked":{"files":1,"bytes":0,"folders":[],"numFolders":0,"x":1},"mode"`, 1),
		"empty":                   "",
		"invalid utf-8 in path":   goodRecord(id) + "\n" + "{\"path\":\"a\xff\",\"size\":1}",
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
	if err != nil || len(r.Files) != 1 || r.Files[0].Path != "a b/c%20.parquet" || r.Untracked != nil {
		t.Fatalf("good record: %+v, %v", r, err)
	}
	// The untracked files a run found (a header member since issue 29): written and read back.
	r.Untracked = &Untracked{Files: 3, Bytes: 30, NumFolders: 2, Folders: []FolderCount{{Folder: "p=1", Files: 2, Bytes: 20}, {Folder: "", Files: 1, Bytes: 10}}}
	if err := Write(ctx, s, r); err != nil {
		t.Fatal(err)
	}
	back, err := Read(ctx, s, id)
	if err != nil || !reflect.DeepEqual(back.Untracked, r.Untracked) {
		t.Fatalf("untracked written %+v, read %+v (%v)", r.Untracked, back.Untracked, err)
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

// TestListOrder: runs are listed by the time their ids carry, oldest first, whatever the form of
// their ids: a table keeps the records of older builds (20261201T153000Z-…) beside version 7
// ids, which as strings sort before them.
func TestListOrder(t *testing.T) {
	ctx := context.Background()
	s := mem.New("mem://t")
	day := time.Date(2026, 12, 1, 15, 30, 0, 0, time.UTC)
	older, newer := "20261201T153000Z-1a2b3c4d", "20261203T153000Z-00000000"
	v7a, v7b := NewID(day.Add(24*time.Hour)), NewID(day.Add(72*time.Hour))
	for _, id := range []string{v7b, newer, v7a, older} {
		if err := s.Put(ctx, RunsDir+id+recordSuffix, gz(goodRecord(id))); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := List(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.ID)
	}
	if want := []string{older, v7a, newer, v7b}; !slices.Equal(got, want) {
		t.Errorf("runs in the order\n %v\nwant\n %v", got, want)
	}
}

// tableSnap writes a table (partition column _p, live files live.parquet and _p=1/x.parquet,
// plus the adds given) into s and returns its snapshot.
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
	id := NewID(started)
	rec := &Record{ID: id, Table: "mem://t", Status: StatusRunning, StartedAt: started, Mode: "FULL", Trash: "_t/" + id + "/",
		Files: []Entry{{Path: "moved.parquet", Size: 3}, {Path: "not-moved.parquet", Size: 3}}}
	if err := Write(ctx, s, rec); err != nil {
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
	id := NewID(started)
	rec := &Record{ID: id, Table: s.Location(), Status: StatusCompleted, Complete: true, StartedAt: started, Mode: "FULL", Trash: folder + id + "/"}
	for _, f := range files {
		rec.Files = append(rec.Files, Entry{Path: f, Size: 5})
		if err := s.Put(ctx, folder+id+"/"+f, []byte("12345")); err != nil {
			t.Fatal(err)
		}
	}
	if err := Write(ctx, s, rec); err != nil {
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
	for _, bad := range []string{"t/", "_delta_log/", "../_t/", "", RunsDir, "_p=1/", "_t"} {
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
		if strings.HasSuffix(k, "/") || strings.HasPrefix(k, "_delta_log/") || strings.HasPrefix(k, RunsDir) {
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
	id := NewID(now.Add(-8 * 24 * time.Hour))
	_ = s.Put(ctx, "_p=1/"+id+"/x.parquet", []byte("12345"))
	rec := &Record{ID: id, Table: "mem://t", Status: StatusCompleted, Complete: true, StartedAt: now.Add(-8 * 24 * time.Hour), Mode: "FULL",
		Trash: "_p=1/" + id + "/", Files: []Entry{{Path: "x.parquet", Size: 5}}}
	if err := Write(ctx, s, rec); err != nil {
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

package run

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
			if r, err := ReadRecord(ctx, s, id); err == nil {
				t.Fatalf("record read: %+v %+v", r, r.Files)
			}
		})
	}
	s := mem.New("mem://t")
	if err := s.Put(ctx, RunsDir+id+recordSuffix, []byte(goodRecord(id))); err == nil {
		if _, err := ReadRecord(ctx, s, id); err == nil {
			t.Fatal("a record that is not gzip was read")
		}
	}
	if err := s.Put(ctx, RunsDir+id+recordSuffix, gz(goodRecord(id)+"\n"+`{"path":"a b/c%20.parquet","size":5,"modificationTime":1}`+"\n")); err != nil {
		t.Fatal(err)
	}
	r, err := ReadRecord(ctx, s, id)
	if err != nil || len(r.Files) != 1 || r.Files[0].Path != "a b/c%20.parquet" || r.Untracked != nil {
		t.Fatalf("good record: %+v, %v", r, err)
	}
	// The untracked files a run found (a header member since issue 29): written and read back.
	r.Untracked = &Untracked{Files: 3, Bytes: 30, NumFolders: 2, Folders: []FolderCount{{Folder: "p=1", Files: 2, Bytes: 20}, {Folder: "", Files: 1, Bytes: 10}}}
	if err := WriteRecord(ctx, s, r); err != nil {
		t.Fatal(err)
	}
	back, err := ReadRecord(ctx, s, id)
	if err != nil || !reflect.DeepEqual(back.Untracked, r.Untracked) {
		t.Fatalf("untracked written %+v, read %+v (%v)", r.Untracked, back.Untracked, err)
	}
	for _, bad := range []string{"", "../x", "20261201T153000Z-1a2b3c4d/../x"} {
		if _, err := ReadRecord(ctx, s, bad); err == nil {
			t.Errorf("ReadRecord(%q) accepted", bad)
		}
	}
}

// The run list reads headers only, shows an unreadable record as such, and ignores names
// that are not records.
func TestList(t *testing.T) {
	ctx := context.Background()
	s := mem.New("mem://t")
	if runs, err := ListRecords(ctx, s); err != nil || len(runs) != 0 {
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
	runs, err := ListRecords(ctx, s)
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
	runs, err := ListRecords(ctx, s)
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

package run

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestPurgeNote (issue 36, item 1): the note a purge keeps beside a run's record is read back
// by ListRecords, SummaryOf and Runs, and the run's state then says it cannot be undone.
func TestPurgeNote(t *testing.T) {
	ctx := context.Background()
	s := mem.New("mem://t")
	const a, b = "20261201T153000Z-1a2b3c4d", "20261202T153000Z-1a2b3c4d"
	for _, id := range []string{a, b} {
		rec := strings.Replace(goodRecord(id), `"recovery"`, `"trash":"_deltavacuum/trash/`+id+`/","recovery"`, 1)
		if err := s.Put(ctx, RunsDir+id+recordSuffix, gz(rec)); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	if err := WritePurgeNote(ctx, s, &PurgeNote{Run: a, At: at, Trash: "_deltavacuum/trash/" + a + "/", Done: true, NumFiles: 1, Bytes: 5}); err != nil {
		t.Fatal(err)
	}
	n, err := ReadPurgeNote(ctx, s, a)
	if err != nil || !n.At.Equal(at) || n.NumFiles != 1 || !n.Done {
		t.Fatalf("read back: %+v, %v", n, err)
	}
	if _, err := ReadPurgeNote(ctx, s, b); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("a run never purged: %v, want ErrNotExist", err)
	}
	runs, err := Runs(ctx, s, at, 0)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs: %+v, %v", runs, err)
	}
	// Newest first, as the service's pages list them.
	if runs[0].ID != b || runs[1].ID != a {
		t.Fatalf("order: %s, %s; want %s first", runs[0].ID, runs[1].ID, b)
	}
	if runs[0].Purged != nil || runs[0].Undo.Possible != vacuum.UndoYes {
		t.Errorf("the run not purged: %+v", runs[0].Undo)
	}
	if runs[1].Purged == nil || runs[1].Undo.Possible != vacuum.UndoNo || !strings.Contains(runs[1].Undo.Why, "its trash was purged on 2026-12-03T09:00:00Z") {
		t.Errorf("the purged run: purged %+v, undo %+v", runs[1].Purged, runs[1].Undo)
	}
	sum, err := SummaryOf(ctx, s, a)
	if err != nil || sum.Purged == nil || !sum.Purged.At.Equal(at) {
		t.Errorf("SummaryOf: %+v, %v", sum.Purged, err)
	}
}

// TestPurgeNoteHostile: a note that is damaged, planted or names another run is not trusted for
// what it says, and never taken for "not purged": the run is shown purged (at the note's
// time), so no front end offers an undo of a trash that may be gone.
func TestPurgeNoteHostile(t *testing.T) {
	ctx := context.Background()
	const id = "20261201T153000Z-1a2b3c4d"
	for name, body := range map[string]string{
		"garbage":           "not json",
		"another run":       `{"run":"20261202T153000Z-1a2b3c4d","at":"2026-12-03T09:00:00Z","trash":"_t/","done":true,"numFiles":1,"bytes":1,"numLeft":0}`,
		"negative count":    `{"run":"` + id + `","at":"2026-12-03T09:00:00Z","trash":"_t/","done":true,"numFiles":-1,"bytes":1,"numLeft":0}`,
		"left below zero":   `{"run":"` + id + `","at":"2026-12-03T09:00:00Z","trash":"_t/","done":true,"numFiles":1,"bytes":1,"numLeft":-5}`,
		"unknown member":    `{"run":"` + id + `","at":"2026-12-03T09:00:00Z","trash":"_t/","done":true,"numFiles":1,"bytes":1,"numLeft":9,"undoable":true}`,
		"duplicate members": `{"run":"` + id + `","run":"` + id + `","at":"2026-12-03T09:00:00Z","trash":"_t/","done":true,"numFiles":1,"bytes":1,"numLeft":9}`,
		"empty":             "",
	} {
		t.Run(name, func(t *testing.T) {
			s := mem.New("mem://t")
			rec := strings.Replace(goodRecord(id), `"recovery"`, `"trash":"_t/`+id+`/","recovery"`, 1)
			if err := s.Put(ctx, RunsDir+id+recordSuffix, gz(rec)); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, RunsDir+id+purgeSuffix, []byte(body)); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadPurgeNote(ctx, s, id); err == nil || errors.Is(err, storage.ErrNotExist) {
				t.Errorf("ReadPurgeNote accepted it: %v", err)
			}
			runs, err := Runs(ctx, s, time.Now(), 0)
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs: %+v, %v", runs, err)
			}
			r := runs[0]
			if r.Purged == nil || r.Purged.NumLeft != 0 || r.Undo.Possible != vacuum.UndoNo || !strings.Contains(r.Undo.Why, "its trash was purged") {
				t.Errorf("purged %+v, undo %+v: a damaged note must not make the run undoable", r.Purged, r.Undo)
			}
			if r.Purged.At.IsZero() {
				t.Errorf("no time for the purge: the note's own time is known")
			}
		})
	}
	for _, bad := range []string{"", "../x", "20261201T153000Z-1a2b3c4d/../x"} {
		if err := WritePurgeNote(ctx, mem.New("mem://t"), &PurgeNote{Run: bad}); err == nil {
			t.Errorf("WritePurgeNote(%q) accepted", bad)
		}
		if _, err := ReadPurgeNote(ctx, mem.New("mem://t"), bad); err == nil {
			t.Errorf("ReadPurgeNote(%q) accepted", bad)
		}
	}
}

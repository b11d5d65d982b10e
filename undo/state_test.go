package undo

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// plainStore is a store that can restore nothing and cannot tell what it keeps (it is no
// storage.Restorer and no storage.RecoveryProber).
type plainStore struct{ storage.Store }

// TestUnfinishedUndoCountsWhatIsThere (issue 36, item 2): the undo of an interrupted run on a
// store that brings nothing back called every planned file "not restorable", those the run never
// reached and that are still at their path too. They are present.
func TestUnfinishedUndoCountsWhatIsThere(t *testing.T) {
	ctx := context.Background()
	s := plainStore{mem.New("mem://t")}
	snap := tableSnap(t, s)
	started := time.Now().Add(-time.Hour)
	id := run.NewID(started)
	rec := &run.Record{ID: id, Table: s.Location(), Status: run.StatusRunning, StartedAt: started, Mode: "FULL", NumFiles: 3,
		Recovery: storage.Recovery{Kind: storage.RecoveryUnknown, Detail: "cannot tell"},
		Files:    []run.Entry{{Path: "deleted.parquet", Size: 3}, {Path: "left-1.parquet", Size: 3}, {Path: "p/left-2.parquet", Size: 3}}}
	if err := run.WriteRecord(ctx, s, rec); err != nil {
		t.Fatal(err)
	}
	_ = s.Put(ctx, "left-1.parquet", []byte("abc"))
	_ = s.Put(ctx, "p/left-2.parquet", []byte("abc"))
	for _, dry := range []bool{true, false} {
		rep, err := Undo(ctx, s, id, Options{Unfinished: true, DryRun: dry, Snapshot: snap})
		if rep == nil || rep.NumPresent != 2 || rep.NumLost != 1 || rep.NumRestored != 0 {
			t.Fatalf("undo --unfinished (dry run %v): %+v, %v; want 2 present, 1 not restorable", dry, rep, err)
		}
		if !dry && !errors.Is(err, ErrIncomplete) {
			t.Errorf("undo: %v, want ErrIncomplete (one file cannot come back)", err)
		}
	}
}

// TestRefusedUndoWritesNothing (issue 36, items 1 and 3): an undo the run's state says can bring
// nothing back (its trash purged) is refused before any file is looked at: no report, no move,
// the one reason in the error.
func TestRefusedUndoWritesNothing(t *testing.T) {
	ctx := context.Background()
	s := mem.New("mem://t")
	snap := tableSnap(t, s)
	now := time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC)
	id := writeTrashed(t, s, "_t/", now.Add(-8*24*time.Hour), "a.parquet", "b.parquet")
	rep, err := Purge(ctx, s, snap, "_t/", 0, now, false)
	if err != nil || rep.NumFiles != 2 {
		t.Fatalf("purge: %+v, %v", rep, err)
	}
	n, err := run.ReadPurgeNote(ctx, s, id)
	if err != nil || !n.Done || n.NumFiles != 2 || n.Bytes != 10 || n.NumLeft != 0 || !n.At.Equal(now) {
		t.Fatalf("the purge note: %+v, %v", n, err)
	}
	// A file of the run comes back by hand: the state still says purged (the note is the
	// answer), and the undo is refused rather than half done.
	_ = s.Put(ctx, "_t/"+id+"/a.parquet", []byte("12345"))
	for _, dry := range []bool{true, false} {
		u, err := Undo(ctx, s, id, Options{DryRun: dry, Snapshot: snap})
		var ne *NotUndoableError
		if u != nil || !errors.As(err, &ne) || !strings.Contains(err.Error(), "its trash was purged on 2026-12-10T00:00:00Z") {
			t.Fatalf("undo of a purged run (dry run %v): %+v, %v", dry, u, err)
		}
	}
	if _, err := run.ReadUndoReport(ctx, s, id); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("the refused undo wrote a report: %v", err)
	}
	if _, err := s.Stat(ctx, "a.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("the refused undo moved a file: %v", err)
	}
}

// TestPurgeNoteSaysWhatIsLeft: a purge that cannot delete every file of a run says how many are
// left in its note, and the run can then still be undone for those.
func TestPurgeNoteSaysWhatIsLeft(t *testing.T) {
	ctx := context.Background()
	s := &failingDelete{Store: mem.New("mem://t"), fail: "b.parquet"}
	snap := tableSnap(t, s)
	now := time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC)
	id := writeTrashed(t, s, "_t/", now.Add(-8*24*time.Hour), "a.parquet", "b.parquet")
	if _, err := Purge(ctx, s, snap, "_t/", 0, now, false); err == nil {
		t.Fatal("a purge with a failed delete reported success")
	}
	n, err := run.ReadPurgeNote(ctx, s, id)
	if err != nil || !n.Done || n.NumFiles != 1 || n.NumLeft != 1 {
		t.Fatalf("the purge note: %+v, %v", n, err)
	}
	sum, err := run.SummaryOf(ctx, s, id)
	if err != nil {
		t.Fatal(err)
	}
	if u := run.InfoOf(sum, false).Undo; u.Possible != "yes" || !strings.Contains(u.Why, "1 file of it stayed in the trash") {
		t.Errorf("undo: %+v", u)
	}
	rep, err := Undo(ctx, s, id, Options{Snapshot: snap})
	if rep == nil || rep.NumRestored != 1 || rep.NumLost != 1 || !errors.Is(err, ErrIncomplete) {
		t.Errorf("undo: %+v, %v; want the file left in the trash back", rep, err)
	}
}

// failingDelete fails the delete of the keys ending in fail.
type failingDelete struct {
	*mem.Store
	fail string
}

func (s *failingDelete) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	var ok []string
	var out []storage.DeleteResult
	for _, k := range keys {
		if strings.HasSuffix(k, s.fail) {
			out = append(out, storage.DeleteResult{Key: k, Err: errors.New("refused")})
		} else {
			ok = append(ok, k)
		}
	}
	res, err := s.Store.Delete(ctx, ok)
	return append(res, out...), err
}

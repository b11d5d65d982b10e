package undo

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// TestRunningAndUnfinishedUndo: Running tells a live RUNNING record (fresh heartbeat, or a
// recent start without one) from a stale one; an undo --unfinished of a live run is refused
// (by the same rule), of a stale one accepted; an undone RUNNING record is no longer reported.
func TestRunningAndUnfinishedUndo(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		started, beat time.Duration // before now; beat < 0: none
		stale         bool
	}{
		{"fresh heartbeat of an old run", 5 * time.Hour, time.Minute, false},
		{"stale heartbeat", 5 * time.Hour, DefaultStaleAfter, true},
		{"no heartbeat and a recent start", time.Minute, -1, false},
		{"no heartbeat and an old start", time.Hour, -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mem.New("mem://t")
			started := now.Add(-tc.started)
			rec := &Record{ID: NewID(started), Table: "mem://t", Status: StatusRunning, StartedAt: started, Mode: "FULL", RetentionHours: 168,
				Files: []Entry{{Path: "a.parquet", Size: 1}}}
			if err := Write(ctx, s, rec); err != nil {
				t.Fatal(err)
			}
			if tc.beat >= 0 {
				if err := WriteHeartbeat(ctx, s, rec.ID, now.Add(-tc.beat)); err != nil {
					t.Fatal(err)
				}
			}
			runs, err := Running(ctx, s, now, 0)
			if err != nil || len(runs) != 1 || runs[0].ID != rec.ID || runs[0].Stale != tc.stale {
				t.Fatalf("Running: %+v %v, want %s stale=%v", runs, err, rec.ID, tc.stale)
			}
			_, err = Undo(ctx, s, rec.ID, Options{Unfinished: true, Now: now})
			live := err != nil && strings.Contains(err.Error(), "still running")
			// A record without a heartbeat is live by its start, for the undo as for Running
			// (a run of a version without heartbeats may still be deleting).
			if wantLive := !tc.stale; live != wantLive {
				t.Errorf("undo --unfinished: %v, want refused=%v", err, wantLive)
			}
			if !live {
				if runs, _ := Running(ctx, s, now, 0); len(runs) != 0 {
					t.Errorf("an undone RUNNING record is still reported: %+v", runs)
				}
			}
		})
	}
}

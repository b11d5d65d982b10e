package run

import (
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestRunState: the one state of a run every front end shows, from its record, its last undo
// and whether a live process holds the table for it.
func TestRunState(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	none := storage.Recovery{Kind: storage.RecoveryNone, Detail: "local disk"}
	versioned := storage.Recovery{Kind: storage.RecoveryVersioning, Detail: "versioning on"}
	sum := func(status string, rc storage.Recovery, trash string, u *UndoOutcome) Summary {
		s := Summary{Record: Record{ID: "20261201T120000Z-0000000a", Status: status, Recovery: rc, Trash: trash, NumFiles: 4, Bytes: 40}, LastUndo: u}
		s.UndoComplete = u.Complete()
		return s
	}
	for _, tc := range []struct {
		name     string
		s        Summary
		live     bool
		state    string
		undo     string // Undoability.Possible
		says     []string
		saysNot  []string
		interrup bool
	}{
		{"running", sum(StatusRunning, none, "", nil), true, StateRunning, vacuum.UndoNo, []string{"live process"}, nil, false},
		{"interrupted", sum(StatusRunning, versioned, "", nil), false, StateFailed, vacuum.UndoYes, []string{"interrupted", "--unfinished --run 20261201T120000Z-0000000a"}, nil, true},
		{"completed on local disk", sum(StatusCompleted, none, "", nil), false, StateCompleted, vacuum.UndoNo, []string{"4 files"}, nil, false},
		{"completed into a trash", sum(StatusCompleted, none, "_t/20261201T120000Z-0000000a/", nil), false, StateCompleted, vacuum.UndoYes, nil, nil, false},
		{"failed", sum(StatusFailed, versioned, "", nil), false, StateFailed, vacuum.UndoYes, []string{"FAILED"}, nil, false},
		{"undone", sum(StatusCompleted, versioned, "", &UndoOutcome{At: at, NumRestored: 3, NumPresent: 1}), false, StateUndone, vacuum.UndoNo, []string{"all 4 files back"}, nil, false},
		{"undo restored nothing: not restorable", sum(StatusCompleted, none, "", &UndoOutcome{At: at, NumLost: 4}), false, StatePartiallyUndone, vacuum.UndoNo,
			[]string{"0 of 4 files back", "4 files cannot come back", "kept nothing"}, []string{"retry", "again"}, false},
		{"undo failed for some", sum(StatusCompleted, versioned, "", &UndoOutcome{At: at, NumRestored: 2, NumFailed: 1, NumLost: 1}), false, StatePartiallyUndone, vacuum.UndoYes,
			[]string{"2 of 4 files back", "1 file cannot come back", "1 file failed: undo again to retry"}, nil, false},
		{"trash emptied by hand", sum(StatusCompleted, none, "_t/20261201T120000Z-0000000a/", &UndoOutcome{At: at, NumRestored: 1, NumLost: 3}), false, StatePartiallyUndone, vacuum.UndoNo,
			[]string{"1 of 4 files back", "no longer in the trash"}, []string{"retry"}, false},
		{"unreadable", Summary{Record: Record{ID: "20261201T120000Z-0000000a"}, Err: "line 1: bad"}, false, StateUnreadable, "", []string{"line 1: bad"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ri := InfoOf(tc.s, tc.live)
			if ri.State != tc.state || ri.Interrupted != tc.interrup {
				t.Errorf("state %q (interrupted %v), want %q (%v): %s", ri.State, ri.Interrupted, tc.state, tc.interrup, ri.StateDetail)
			}
			got := ""
			if ri.Undo != nil {
				got = ri.Undo.Possible
			}
			if got != tc.undo {
				t.Errorf("undo possible %q, want %q", got, tc.undo)
			}
			for _, s := range tc.says {
				if !strings.Contains(ri.StateDetail, s) {
					t.Errorf("detail %q does not say %q", ri.StateDetail, s)
				}
			}
			for _, s := range tc.saysNot {
				if strings.Contains(ri.StateDetail, s) {
					t.Errorf("detail %q says %q", ri.StateDetail, s)
				}
			}
		})
	}
}

// TestRunStateUndoNow (issue 36, items 1 to 4): what an undo can bring back now is part of the
// one state, so that no front end offers an undo that brings nothing back: not after an undo
// brought every file back, not after a purge of the run's trash (by the CLI, the library or the
// service's window: each leaves its note), not for an interrupted run whose store keeps nothing
// (that one is told to run VACUUM again, not to undo), not for a run that deleted nothing.
func TestRunStateUndoNow(t *testing.T) {
	const id = "20261201T120000Z-0000000a"
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	none := storage.Recovery{Kind: storage.RecoveryNone, Detail: "local disk: a delete frees the space at once and keeps nothing"}
	versioned := storage.Recovery{Kind: storage.RecoveryVersioning, Detail: "versioning on"}
	trash := "_deltavacuum/trash/" + id + "/"
	sum := func(status string, rc storage.Recovery, trash string, files int64, u *UndoOutcome, p *PurgeNote) Summary {
		s := Summary{Record: Record{ID: id, Status: status, Recovery: rc, Trash: trash, NumFiles: files, Bytes: 10 * files}, LastUndo: u, Purged: p}
		s.UndoComplete = u.Complete()
		return s
	}
	purged := &PurgeNote{Run: id, At: at.Add(time.Hour), Trash: trash, Done: true, NumFiles: 4, Bytes: 40}
	for _, tc := range []struct {
		name          string
		s             Summary
		state, undo   string
		why, detail   []string
		notInDetail   []string
		interruptedOK bool
	}{
		{"purged", sum(StatusCompleted, none, trash, 4, nil, purged), StateCompleted, vacuum.UndoNo,
			[]string{"cannot be undone: its trash was purged on 2026-12-01T13:00:00Z"}, []string{"moved 4 files", "its trash was purged on 2026-12-01T13:00:00Z"}, nil, false},
		{"purge under way", sum(StatusCompleted, none, trash, 4, nil, &PurgeNote{Run: id, At: at, Trash: trash, NumLeft: 4}), StateCompleted, vacuum.UndoNo,
			[]string{"its trash was purged on"}, nil, nil, false},
		{"purge note unreadable", sum(StatusCompleted, none, trash, 4, nil, &PurgeNote{Run: id}), StateCompleted, vacuum.UndoNo,
			[]string{"cannot be undone: its trash was purged"}, nil, nil, false},
		{"purge left some", sum(StatusCompleted, none, trash, 4, nil, &PurgeNote{Run: id, At: at, Trash: trash, Done: true, NumFiles: 3, NumLeft: 1}), StateCompleted, vacuum.UndoYes,
			[]string{"1 file of it stayed in the trash"}, nil, nil, false},
		{"purged after a partial undo", sum(StatusCompleted, none, trash, 4, &UndoOutcome{At: at, Via: ViaTrash, NumRestored: 2, NumFailed: 2}, purged), StatePartiallyUndone, vacuum.UndoNo,
			[]string{"its trash was purged"}, []string{"2 of 4 files back", "its trash was purged"}, []string{"undo again"}, false},
		{"undone", sum(StatusCompleted, none, trash, 4, &UndoOutcome{At: at, Via: ViaTrash, NumRestored: 4}, nil), StateUndone, vacuum.UndoNo,
			[]string{"cannot be undone again", "brought every file back"}, []string{"all 4 files back"}, nil, false},
		{"undone, then its trash purged", sum(StatusCompleted, none, trash, 4, &UndoOutcome{At: at, Via: ViaTrash, NumRestored: 4}, purged), StateUndone, vacuum.UndoNo,
			[]string{"cannot be undone again"}, []string{"all 4 files back"}, []string{"purged"}, false},
		{"some failed to come back", sum(StatusCompleted, versioned, "", 4, &UndoOutcome{At: at, Via: ViaRecovery, NumRestored: 3, NumFailed: 1}, nil), StatePartiallyUndone, vacuum.UndoYes,
			[]string{"1 file failed to come back", "--run " + id}, []string{"undo again to retry"}, nil, false},
		{"interrupted on local disk", sum(StatusRunning, none, "", 90000, nil, nil), StateFailed, vacuum.UndoNo,
			[]string{"cannot be undone: what it deleted is gone (local disk", "run VACUUM again to finish"},
			[]string{"interrupted", "what it deleted is gone", "run VACUUM again to finish"}, []string{"--unfinished", "brings back"}, true},
		{"interrupted into a trash", sum(StatusRunning, none, trash, 90000, nil, nil), StateFailed, vacuum.UndoYes,
			[]string{"trash"}, []string{"--unfinished --run " + id, "brings back what it deleted"}, []string{"gone"}, true},
		{"interrupted on a versioned store", sum(StatusRunning, versioned, "", 90000, nil, nil), StateFailed, vacuum.UndoYes,
			nil, []string{"--unfinished --run " + id}, nil, true},
		{"deleted nothing", sum(StatusCompleted, versioned, "", 0, nil, nil), StateCompleted, vacuum.UndoNo,
			[]string{"it deleted no files"}, []string{"deleted 0 files"}, nil, false},
		{"deleted one", sum(StatusCompleted, versioned, "", 1, nil, nil), StateCompleted, vacuum.UndoYes,
			nil, []string{"deleted 1 file (10 bytes)"}, []string{"1 files"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ri := InfoOf(tc.s, false)
			if ri.State != tc.state || ri.Interrupted != tc.interruptedOK {
				t.Errorf("state %q (interrupted %v), want %q (%v): %s", ri.State, ri.Interrupted, tc.state, tc.interruptedOK, ri.StateDetail)
			}
			if ri.Undo == nil || ri.Undo.Possible != tc.undo {
				t.Fatalf("undo %+v, want possible %q", ri.Undo, tc.undo)
			}
			for _, w := range tc.why {
				if !strings.Contains(ri.Undo.Why, w) {
					t.Errorf("undo's why %q does not say %q", ri.Undo.Why, w)
				}
			}
			for _, w := range tc.detail {
				if !strings.Contains(ri.StateDetail, w) {
					t.Errorf("detail %q does not say %q", ri.StateDetail, w)
				}
			}
			for _, w := range tc.notInDetail {
				if strings.Contains(ri.StateDetail, w) {
					t.Errorf("detail %q says %q", ri.StateDetail, w)
				}
			}
		})
	}
}

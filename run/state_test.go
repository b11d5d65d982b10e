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
		{"undone", sum(StatusCompleted, versioned, "", &UndoOutcome{At: at, NumRestored: 3, NumPresent: 1}), false, StateUndone, vacuum.UndoYes, []string{"all 4 files back"}, nil, false},
		{"undo restored nothing: not restorable", sum(StatusCompleted, none, "", &UndoOutcome{At: at, NumLost: 4}), false, StatePartiallyUndone, vacuum.UndoNo,
			[]string{"0 of 4 files back", "4 files cannot come back", "kept nothing"}, []string{"retry", "again"}, false},
		{"undo failed for some", sum(StatusCompleted, versioned, "", &UndoOutcome{At: at, NumRestored: 2, NumFailed: 1, NumLost: 1}), false, StatePartiallyUndone, vacuum.UndoYes,
			[]string{"2 of 4 files back", "1 file cannot come back", "1 file failed: undo again to retry"}, nil, false},
		{"trash purged", sum(StatusCompleted, none, "_t/20261201T120000Z-0000000a/", &UndoOutcome{At: at, NumRestored: 1, NumLost: 3}), false, StatePartiallyUndone, vacuum.UndoYes,
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

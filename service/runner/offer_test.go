package runner

import (
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

var t0 = time.Now().UTC().Truncate(time.Second)

// TestUndoOfferOf: every state and undoability against the offer, one row each.
func TestUndoOfferOf(t *testing.T) {
	yes := &vacuum.Undoability{Possible: vacuum.UndoYes, Via: "trash"}
	no := &vacuum.Undoability{Possible: vacuum.UndoNo}
	unknown := &vacuum.Undoability{Possible: vacuum.UndoUnknown, Via: "store recovery"}
	for _, c := range []struct {
		name           string
		d              RunDoc
		action, reason string
	}{
		{"planned", RunDoc{State: run.StatePlanned}, "", OfferRunning},
		{"running", RunDoc{State: run.StateRunning, recorded: true, Undo: yes, deleted: 3}, "", OfferRunning},
		{"unreadable", RunDoc{State: run.StateUnreadable, recorded: true}, "", OfferUnreadable},
		{"failed without a record", RunDoc{State: run.StateFailed}, "", OfferNoRecord},
		{"completed", RunDoc{State: run.StateCompleted, recorded: true, Undo: yes, deleted: 3}, "undo", OfferPossible},
		{"completed, unknown store", RunDoc{State: run.StateCompleted, recorded: true, Undo: unknown, deleted: 3}, "undo", OfferUnknown},
		{"completed, nothing kept", RunDoc{State: run.StateCompleted, recorded: true, Undo: no, deleted: 3}, "", OfferNothingKept},
		{"completed, nothing deleted", RunDoc{State: run.StateCompleted, recorded: true, Undo: no, Trash: "_t/x/"}, "", OfferNothingDeleted},
		{"completed, nothing deleted, nothing kept", RunDoc{State: run.StateCompleted, recorded: true, Undo: no, recovery: storage.Recovery{Kind: storage.RecoveryNone}}, "", OfferNothingKept},
		{"failed", RunDoc{State: run.StateFailed, recorded: true, Undo: yes, deleted: 1}, "undo", OfferPossible},
		{"interrupted", RunDoc{State: run.StateFailed, Interrupted: true, recorded: true, Undo: yes, deleted: 1}, "undo", OfferInterrupted},
		{"undone", RunDoc{State: run.StateUndone, recorded: true, Undo: yes, deleted: 3, LastUndo: &run.UndoOutcome{NumRestored: 3}}, "", OfferUndone},
		{"partially undone, failed", RunDoc{State: run.StatePartiallyUndone, recorded: true, Undo: yes, deleted: 3, LastUndo: &run.UndoOutcome{NumRestored: 2, NumFailed: 1}}, "undo again", OfferRetry},
		{"partially undone, failed and lost", RunDoc{State: run.StatePartiallyUndone, recorded: true, Undo: yes, deleted: 3, LastUndo: &run.UndoOutcome{NumRestored: 1, NumFailed: 1, NumLost: 1}}, "undo again", OfferRetry},
		{"partially undone, lost", RunDoc{State: run.StatePartiallyUndone, recorded: true, Undo: no, Trash: "_t/x/", deleted: 3, LastUndo: &run.UndoOutcome{NumRestored: 2, NumLost: 1}}, "", OfferRestLost},
		// Issue 36: the offer follows the run's one state (run.InfoOf), which knows of a purge
		// of the trash (by the CLI, the library or this service's window alike) and of an
		// interrupted run whose store keeps nothing.
		{"purged", RunDoc{State: run.StateCompleted, recorded: true, Undo: no, Trash: "_t/x/", deleted: 3, Purged: &run.PurgeNote{At: t0, Done: true}}, "", OfferPurged},
		{"purged after failures", RunDoc{State: run.StatePartiallyUndone, recorded: true, Undo: no, Trash: "_t/x/", deleted: 3,
			LastUndo: &run.UndoOutcome{NumRestored: 2, NumFailed: 1}, Purged: &run.PurgeNote{At: t0, Done: true}}, "", OfferPurged},
		{"purge left some", RunDoc{State: run.StateCompleted, recorded: true, Undo: yes, Trash: "_t/x/", deleted: 3, Purged: &run.PurgeNote{At: t0, Done: true, NumLeft: 1}}, "undo", OfferPossible},
		{"interrupted, nothing kept", RunDoc{State: run.StateFailed, Interrupted: true, recorded: true, Undo: no, deleted: 1, recovery: storage.Recovery{Kind: storage.RecoveryNone}}, "", OfferNothingKept},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := undoOfferOf(c.d)
			if o.Action != c.action || o.Reason != c.reason || o.Why != "" {
				t.Errorf("got %+v, want action %q reason %q (and no words: the HTTP side has them)", o, c.action, c.reason)
			}
		})
	}
}

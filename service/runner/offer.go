package runner

import (
	"time"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// UndoOffer is what an undo of a run can do now, from its state: the run page offers Undo
// only when Action is set, and otherwise says why not.
type UndoOffer struct {
	// Action is "undo", "undo again" (some files failed to come back: a retry can bring
	// them), or "" when an undo can bring nothing back now.
	Action string `json:"action,omitempty"`
	// Unfinished: the run was interrupted (its record says RUNNING): the undo brings back
	// what of its planned files is missing (deltavacuum undo --unfinished).
	Unfinished bool `json:"unfinished,omitempty"`
	// Reason names why: one of the Offer reasons. Why says it in words: the HTTP side, which
	// has the words (the runner has none), sets it.
	Reason string `json:"reason,omitempty"`
	Why    string `json:"why,omitempty"`
}

// The reasons of an undo offer (UndoOffer.Reason).
const (
	OfferRunning        = "running"
	OfferUnreadable     = "unreadable"
	OfferNoRecord       = "no-record"
	OfferUndone         = "undone"
	OfferNothingKept    = "nothing-kept"
	OfferRestLost       = "rest-lost"
	OfferNothingDeleted = "nothing-deleted"
	OfferRetry          = "retry"
	OfferPurged         = "purged"
	OfferUnknown        = "unknown"
	OfferPossible       = "possible"
	OfferInterrupted    = "interrupted"
)

// undoOfferOf is what an undo of the run d can do now, from the run's one state (run.InfoOf:
// d.Undo is what an undo can bring back now, less what an undo brought back and a purge of its
// trash deleted). Undo again only when some files failed to come back (a retry can bring
// them); never for an undone run, a run in progress, one that deleted nothing, one whose trash
// was purged, or one whose deleted files nothing kept (the store keeps no versions and there was
// no trash).
func undoOfferOf(d RunDoc) UndoOffer {
	o := UndoOffer{}
	cannot := d.Undo != nil && d.Undo.Possible == vacuum.UndoNo
	switch {
	case d.State == run.StatePlanned || d.State == run.StateRunning:
		o.Reason = OfferRunning
	case d.State == run.StateUnreadable:
		o.Reason = OfferUnreadable
	case !d.recorded:
		o.Reason = OfferNoRecord
	case d.State == run.StateUndone:
		o.Reason = OfferUndone
	case cannot && d.Purged != nil:
		o.Reason = OfferPurged
	case cannot && d.State == run.StatePartiallyUndone:
		o.Reason = OfferRestLost
	case cannot && vacuum.NewUndoability(d.recovery, d.Trash, true).Possible == vacuum.UndoNo:
		o.Reason = OfferNothingKept // the store keeps nothing and there was no trash
	case cannot && d.deleted == 0:
		o.Reason = OfferNothingDeleted
	case cannot:
		o.Reason = OfferNothingKept
	case d.State == run.StatePartiallyUndone && d.LastUndo != nil && d.LastUndo.NumFailed > 0:
		o.Action, o.Reason = "undo again", OfferRetry
	case d.Interrupted:
		o.Action, o.Unfinished, o.Reason = "undo", true, OfferInterrupted
	case d.Undo != nil && d.Undo.Possible == vacuum.UndoUnknown:
		o.Action, o.Reason = "undo", OfferUnknown
	default:
		o.Action, o.Reason = "undo", OfferPossible
	}
	return o
}

// PurgedAt is when the run's trash was purged (nil: never, or not known when).
func (d RunDoc) PurgedAt() *time.Time {
	if d.Purged == nil || d.Purged.At.IsZero() {
		return nil
	}
	t := d.Purged.At
	return &t
}

// Recovery is what the store keeps of what the run deleted, as its run record says.
func (d RunDoc) Recovery() storage.Recovery { return d.recovery }

// Cancelled says why the service asked the run to stop ("" : it did not): CancelledByRequest
// for a cancel through the API (Fabric's Cancelled).
func (d RunDoc) Cancelled() string { return d.asked.Cancelled }

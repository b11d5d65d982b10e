package service

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// RunDoc is a run as the API and the pages show it: the service's own record of it (its
// status RUNNING, COMPLETED or FAILED is the service's bookkeeping: which runs it started and
// saw end) and the run's one state, owned by package run (run.InfoOf, docs/undo.md) and read
// from the table's run record, as the CLI's runs and Python read it. State is planned while
// the service has accepted the run and the table holds no record of it yet.
type RunDoc struct {
	state.Run
	// State is planned, running, completed, failed, partially undone, undone or unreadable.
	State string `json:"state"`
	// StateDetail says the state in words (package run's words, as deltavacuum runs has them).
	StateDetail string `json:"stateDetail"`
	// Interrupted: a failed run whose record says RUNNING while no process holds it.
	Interrupted bool `json:"interrupted,omitempty"`
	// Undo is whether an undo can bring back what the run deletes, and how
	// (vacuum.NewUndoability); nil when the table keeps no record of the run.
	Undo *vacuum.Undoability `json:"undo,omitempty"`
	// LastUndo is what the last undo of the run did.
	LastUndo *run.UndoOutcome `json:"lastUndo,omitempty"`
	// Trash is the folder the run moved its files into instead of deleting them ("" when it
	// deleted them).
	Trash string `json:"trash,omitempty"`
	// Purged is what a purge of its trash did (the service's undo window, or deltavacuum trash
	// purge): the run's note, read by package run (run.Summary.Purged).
	Purged *run.PurgeNote `json:"purged,omitempty"`
	// UndoOffer is what an undo of the run can do now (undoOfferOf).
	UndoOffer UndoOffer `json:"undoOffer"`

	recorded bool             // the table keeps a record of the run
	deleted  int64            // the files the record says the run deleted (or, unfinished, planned)
	recovery storage.Recovery // what the store keeps of what the run deleted (the record's)
}

// recordOf is the id of the table's run record of sr: the one the run wrote, else the run's
// own id (a run of this service takes its lock, and writes its record, under its own id; an
// interrupted run's end never recorded it).
func recordOf(sr state.Run) string {
	if sr.RecordID != "" {
		return sr.RecordID
	}
	if run.ValidID(sr.ID) {
		return sr.ID
	}
	return ""
}

// doc returns sr with its state. The state is read from the table's run record: a run that
// holds the table in this service now is the one live run it can have.
func (r *runner) doc(ctx context.Context, sr state.Run) RunDoc {
	d := RunDoc{Run: sr}
	r.mu.Lock()
	ar := r.holds.active[sr.ID]
	var cached *run.Summary
	if ar != nil {
		cached = ar.summary
	}
	r.mu.Unlock()
	var sum run.Summary
	switch {
	case cached != nil:
		sum = *cached
	default:
		var err error
		sum, err = r.summary(ctx, sr)
		if errors.Is(err, storage.ErrNotExist) && sr.RecordID == "" {
			// No record was written (the service keeps the id of the one a run wrote).
			d.unrecorded()
			d.UndoOffer = undoOfferOf(d)
			return d
		}
		if err != nil {
			// A record written and gone (the table removed?) is unreadable, not "none".
			sum = run.Summary{Record: run.Record{ID: recordOf(sr)}, Err: err.Error()}
		}
		if ar != nil && sum.Err == "" && sum.Status == run.StatusRunning {
			r.mu.Lock()
			ar.summary = &sum // RUNNING until the run's end rewrites it: read once
			r.mu.Unlock()
		}
	}
	d.recorded = true
	ri := run.InfoOf(sum, ar != nil)
	d.State, d.StateDetail, d.Interrupted, d.Undo, d.LastUndo = ri.State, ri.StateDetail, ri.Interrupted, ri.Undo, sum.LastUndo
	if ar != nil && (d.State == run.StateCompleted || d.State == run.StateFailed) {
		// The table's record has the run's end and this service has not recorded it yet, nor
		// released the table: running until then, so that whoever sees it ended (a pipeline
		// polling its Fabric job) may start the next run at once.
		d.State, d.StateDetail = run.StateRunning, "ending: "+d.StateDetail
	}
	d.Trash, d.recovery, d.deleted, d.Purged = sum.Trash, sum.Recovery, sum.NumFiles, sum.Purged
	if sum.Err == "" && d.RecordID == "" {
		d.RecordID = sum.ID
	}
	d.UndoOffer = undoOfferOf(d)
	return d
}

// unrecorded sets the state of a run the table keeps no record of: planned while it is in
// progress here (accepted, not recorded yet), else the service's own status; it deleted
// nothing (a run writes its record before its first delete).
func (d *RunDoc) unrecorded() {
	switch {
	case d.Status == state.StatusRunning:
		d.State, d.StateDetail = run.StatePlanned, "accepted: planning; the table holds no record of it yet"
	case d.Status == state.StatusCompleted:
		d.State, d.StateDetail = run.StateCompleted, "completed without a run record"
	default:
		d.State, d.StateDetail = run.StateFailed, "ended FAILED before it recorded anything beside the table: it deleted nothing"
		if d.Error != "" {
			d.StateDetail += ": " + d.Error
		}
	}
}

// summary reads the summary of sr's run record from its table: ErrNotExist (wrapped) when
// the table keeps none.
func (r *runner) summary(ctx context.Context, sr state.Run) (run.Summary, error) {
	id := recordOf(sr)
	if id == "" {
		return run.Summary{}, fmt.Errorf("run %s: %w", sr.ID, storage.ErrNotExist)
	}
	t, ok := r.tables.lookup(sr.Table)
	if !ok {
		return run.Summary{}, fmt.Errorf("its table %s is no longer in the configuration", sr.Table)
	}
	dt, err := r.tables.open(ctx, t)
	if err != nil {
		return run.Summary{}, err
	}
	return run.SummaryOf(ctx, dt.Store, id)
}

// lastUndo reads the report of the last undo of run sr from its table.
func (r *runner) lastUndo(ctx context.Context, sr state.Run) (*run.UndoReport, error) {
	t, ok := r.tables.lookup(sr.Table)
	if !ok {
		return nil, of(errNotFound, fmt.Errorf("its table %s is no longer in the configuration", sr.Table))
	}
	dt, err := r.tables.open(ctx, t)
	if err != nil {
		return nil, of(errTable, err)
	}
	rep, err := run.ReadUndoReport(ctx, dt.Store, recordOf(sr))
	return rep, of(errTable, err)
}

// maxStateReads bounds the run records read at once for a list of runs.
const maxStateReads = 8

// docs returns the runs with their states, in their order; the records are read
// concurrently, at most maxStateReads at once.
func (r *runner) docs(ctx context.Context, runs []state.Run) []RunDoc {
	out := make([]RunDoc, len(runs))
	sem := make(chan struct{}, maxStateReads)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = r.doc(ctx, runs[i])
		}()
	}
	wg.Wait()
	return out
}

// runDoc returns run id with its state (state.ErrNotFound when the service has no such run;
// errNotFound saying so for a start that waits in the queue: it is no run yet).
func (r *runner) runDoc(ctx context.Context, id string) (RunDoc, error) {
	if q, ok := r.queued(id); ok {
		return RunDoc{}, notStartedError(q)
	}
	sr, err := r.st.Run(ctx, id)
	if err != nil {
		return RunDoc{}, err
	}
	return r.doc(ctx, *sr), nil
}

// UndoOffer is what an undo of a run can do now, from its state: the run page offers Undo
// only when Action is set, and otherwise says why not.
type UndoOffer struct {
	// Action is "undo", "undo again" (some files failed to come back: a retry can bring
	// them), or "" when an undo can bring nothing back now.
	Action string `json:"action,omitempty"`
	// Unfinished: the run was interrupted (its record says RUNNING): the undo brings back
	// what of its planned files is missing (deltavacuum undo --unfinished).
	Unfinished bool `json:"unfinished,omitempty"`
	// Reason names why (a message of the catalogue, messages.go: undo.<reason>); Why says it.
	Reason string `json:"reason,omitempty"`
	Why    string `json:"why,omitempty"`
}

// The reasons of an undo offer.
const (
	offerRunning        = "running"
	offerUnreadable     = "unreadable"
	offerNoRecord       = "no-record"
	offerUndone         = "undone"
	offerNothingKept    = "nothing-kept"
	offerRestLost       = "rest-lost"
	offerNothingDeleted = "nothing-deleted"
	offerRetry          = "retry"
	offerPurged         = "purged"
	offerUnknown        = "unknown"
	offerPossible       = "possible"
	offerInterrupted    = "interrupted"
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
		o.Reason = offerRunning
	case d.State == run.StateUnreadable:
		o.Reason = offerUnreadable
	case !d.recorded:
		o.Reason = offerNoRecord
	case d.State == run.StateUndone:
		o.Reason = offerUndone
	case cannot && d.Purged != nil:
		o.Reason = offerPurged
	case cannot && d.State == run.StatePartiallyUndone:
		o.Reason = offerRestLost
	case cannot && vacuum.NewUndoability(d.recovery, d.Trash, true).Possible == vacuum.UndoNo:
		o.Reason = offerNothingKept // the store keeps nothing and there was no trash
	case cannot && d.deleted == 0:
		o.Reason = offerNothingDeleted
	case cannot:
		o.Reason = offerNothingKept
	case d.State == run.StatePartiallyUndone && d.LastUndo != nil && d.LastUndo.NumFailed > 0:
		o.Action, o.Reason = "undo again", offerRetry
	case d.Interrupted:
		o.Action, o.Unfinished, o.Reason = "undo", true, offerInterrupted
	case d.Undo != nil && d.Undo.Possible == vacuum.UndoUnknown:
		o.Action, o.Reason = "undo", offerUnknown
	default:
		o.Action, o.Reason = "undo", offerPossible
	}
	o.Why = offerWhy(o, d)
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

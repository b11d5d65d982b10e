package runner

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

// Run is a run as the API, the pages, the metrics, Fabric's job API and the webhook show it:
// what the service asked (the state database, which keeps nothing else of it) and what became
// of it, read from the table's run record through package run, as the CLI's runs and Python
// read it: a run undone, purged or changed behind the service's back shows so at once. Its JSON
// is the API's of the builds before (docs/openapi.yaml), with requester added.
type Run struct {
	ID    string `json:"id"`
	Table string `json:"table"`
	// Trigger is "schedule" or "api" (a request: the API, the page or Fabric's job API);
	// Requester says which (state.BySchedule, ByAPI, ByPage, ByFabric).
	Trigger   string `json:"trigger"`
	Requester string `json:"requester"`
	// Mode is the mode the run ran in (its record's: FULL after a LITE the log could not
	// serve), or the one asked while the table holds no record of it.
	Mode   string `json:"mode"`
	DryRun bool   `json:"dryRun"`
	// Status is RUNNING while the run is in progress in this service, COMPLETED when its record
	// says COMPLETED, and FAILED otherwise: refused before it wrote its record, its record says
	// FAILED, interrupted (its record says RUNNING and no process runs it), or its record cannot
	// be read (State says which).
	Status string `json:"status"`
	// Started is when the service was asked for the run; Ended when its record says it ended (or
	// when it was refused).
	Started time.Time  `json:"started"`
	Ended   *time.Time `json:"ended,omitempty"`
	// Error is why a FAILED run failed, in package run's words (or the refusal's), after why the
	// service asked it to stop, if it did.
	Error   string  `json:"error,omitempty"`
	Figures Figures `json:"figures"`
	// RecordID is the id of the run record under the table's _deltavacuum/runs/, once written.
	RecordID string `json:"recordId,omitempty"`
}

// Figures are a run's figures: its run record's, and what the service asked of it. A run
// record keeps no count of failed deletes, no warnings, and, once the run has ended, no count of
// the files it planned: those are not here either (the service's log has the run's warnings).
type Figures struct {
	Mode           string  `json:"mode"`
	RetentionHours float64 `json:"retentionHours"`
	// NumFilesToDelete and SizeOfDataToDelete are the files the run planned (without their
	// checksum companions): its record lists them until the run ends, and an interrupted run's
	// for good. Absent once the run has recorded its end.
	NumFilesToDelete   *int64 `json:"numFilesToDelete,omitempty"`
	SizeOfDataToDelete *int64 `json:"sizeOfDataToDelete,omitempty"`
	// NumDeletedFiles, SizeOfDeletedData and NumDeletedDirectories are what the run deleted (or
	// moved to its trash), once it has recorded its end.
	NumDeletedFiles       int64  `json:"numDeletedFiles"`
	SizeOfDeletedData     int64  `json:"sizeOfDeletedData"`
	NumDeletedDirectories int64  `json:"numDeletedDirectories"`
	StartVersion          *int64 `json:"startVersion,omitempty"`
	// NumChecksumCompanions counts the checksum companions deleted with the files (not among
	// them), from the run's record read whole (Runner.Companions): set for one run (GET
	// /api/runs/{id}), not in a list of runs.
	NumChecksumCompanions int64 `json:"numChecksumCompanions,omitempty"`
	// OneOffRetention: the run was asked for a one-off retention, not the policy's: a preview's
	// retentionHours, or a Fabric job's retentionPeriod, as OneOffFrom says (OneOffPreview,
	// OneOffFabric; absent in runs of earlier builds).
	OneOffRetention bool   `json:"oneOffRetention,omitempty"`
	OneOffFrom      string `json:"oneOffFrom,omitempty"`
	// PlanDigest is the previewed plan the run was asked to execute; PlanChanged says the table
	// had moved and the run deleted nothing.
	PlanDigest  string `json:"planDigest,omitempty"`
	PlanChanged bool   `json:"planChanged,omitempty"`
	// Untracked are the untracked files of the run's plan (its record's; none in LITE).
	Untracked *run.Untracked `json:"untracked,omitempty"`
}

// RunDoc is a run with its state, owned by package run (run.InfoOf, docs/undo.md): State is
// planned while the service has accepted the run and the table holds no record of it yet.
type RunDoc struct {
	Run
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

	asked    state.Run        // what the service keeps of the run
	recorded bool             // the table keeps a record of the run
	deleted  int64            // the files the record says the run deleted (or, unfinished, planned)
	recovery storage.Recovery // what the store keeps of what the run deleted (the record's)
}

// recordOf is the id of the table's run record of sr: the one the run wrote, else the run's
// own id (a run of this service takes its lock, and writes its record, under its own id; an
// interrupted run's end never linked it).
func recordOf(sr state.Run) string {
	if sr.RecordID != "" {
		return sr.RecordID
	}
	if run.ValidID(sr.ID) {
		return sr.ID
	}
	return ""
}

// doc returns sr with its state, read from the table's run record; a run that holds the table
// in this service now is the one live run it can have.
func (r *Runner) doc(ctx context.Context, sr state.Run) RunDoc {
	r.mu.Lock()
	ar := r.holds.active[sr.ID]
	r.mu.Unlock()
	return r.docOf(ctx, sr, ar)
}

// docOf returns sr with its state; ar is the run in progress in this service (nil: none).
func (r *Runner) docOf(ctx context.Context, sr state.Run, ar *activeRun) RunDoc {
	d := RunDoc{asked: sr, Run: askedRun(sr)}
	var cached *run.Summary
	if ar != nil {
		r.mu.Lock()
		cached = ar.summary
		r.mu.Unlock()
	}
	var sum run.Summary
	switch {
	case cached != nil:
		sum = *cached
	default:
		var err error
		sum, err = r.summary(ctx, sr)
		if errors.Is(err, storage.ErrNotExist) && sr.RecordID == "" {
			// No record was written (the service keeps the id of the one a run wrote).
			d.unrecorded(ar != nil)
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
		// The table's record has the run's end and this service has not seen to it yet, nor
		// released the table: running until then, so that whoever sees it ended (a pipeline
		// polling its Fabric job) may start the next run at once.
		d.State, d.StateDetail = run.StateRunning, "ending: "+d.StateDetail
	}
	d.Trash, d.recovery, d.deleted, d.Purged = sum.Trash, sum.Recovery, sum.NumFiles, sum.Purged
	d.fromRecord(sum, ri, ar != nil)
	d.UndoOffer = undoOfferOf(d)
	return d
}

// askedRun is the run sr as the service asked for it, before anything is read of its record.
func askedRun(sr state.Run) Run {
	f := Figures{Mode: sr.Mode, PlanDigest: sr.PlanDigest, PlanChanged: sr.PlanChanged}
	if sr.RetainHours != nil {
		f.OneOffRetention, f.OneOffFrom, f.RetentionHours = true, sr.OneOffFrom, *sr.RetainHours
	}
	return Run{ID: sr.ID, Table: sr.Table, Trigger: sr.Trigger(), Requester: sr.Requester, Mode: sr.Mode, DryRun: sr.DryRun,
		Started: sr.Asked, RecordID: sr.RecordID, Figures: f}
}

// fromRecord sets the run's status, end, error and figures from its record, sum (ri its state;
// active: the run is in progress in this service).
func (d *RunDoc) fromRecord(sum run.Summary, ri run.RunInfo, active bool) {
	if sum.Err == "" {
		d.RecordID = sum.ID
		if sum.Mode != "" {
			d.Mode, d.Figures.Mode = sum.Mode, sum.Mode
		}
		f := &d.Figures
		f.RetentionHours, f.StartVersion, f.Untracked = sum.RetentionHours, sum.StartVersion, sum.Untracked
		if sum.Complete {
			f.NumDeletedFiles, f.SizeOfDeletedData, f.NumDeletedDirectories = sum.NumFiles, sum.Bytes, sum.NumDirectories
		} else {
			n, b := sum.NumFiles, sum.Bytes
			f.NumFilesToDelete, f.SizeOfDataToDelete = &n, &b
		}
	}
	switch {
	case active:
		d.Status = run.StatusRunning
	case sum.Err == "" && sum.Status == run.StatusCompleted:
		d.Status, d.Ended = run.StatusCompleted, sum.FinishedAt
	case sum.Err != "":
		d.Status, d.Error = run.StatusFailed, d.cancelledWhy(ri.StateDetail)
	default:
		// Why it failed, in package run's words: as its record says it, before any undo or
		// purge of its trash (the state says those).
		bare := sum
		bare.LastUndo, bare.Undone, bare.UndoComplete, bare.Purged = nil, nil, false, nil
		d.Status, d.Ended, d.Error = run.StatusFailed, sum.FinishedAt, d.cancelledWhy(run.InfoOf(bare, false).StateDetail)
	}
}

// unrecorded sets the state of a run the table keeps no record of: planned while it is in
// progress here (accepted, not recorded yet), else failed, with its refusal; it deleted nothing
// (a run writes its record before its first delete).
func (d *RunDoc) unrecorded(active bool) {
	switch {
	case active:
		d.Status = run.StatusRunning
		d.State, d.StateDetail = run.StatePlanned, "accepted: planning; the table holds no record of it yet"
		return
	case d.asked.Refusal != "":
		d.Ended, d.Error = d.asked.Refused, d.cancelledWhy(d.asked.Refusal)
	default:
		d.Error = d.cancelledWhy("interrupted: the service stopped before the run recorded anything beside the table")
	}
	d.Status, d.State = run.StatusFailed, run.StateFailed
	d.StateDetail = "ended FAILED before it recorded anything beside the table: it deleted nothing: " + d.Error
}

// cancelledWhy is msg after why the service asked the run to stop, if it did.
func (d *RunDoc) cancelledWhy(msg string) string {
	if d.asked.Cancelled == "" {
		return msg
	}
	return d.asked.Cancelled + ": " + msg
}

// summary reads the summary of sr's run record from its table: ErrNotExist (wrapped) when
// the table keeps none.
func (r *Runner) summary(ctx context.Context, sr state.Run) (run.Summary, error) {
	id := recordOf(sr)
	if id == "" {
		return run.Summary{}, fmt.Errorf("run %s: %w", sr.ID, storage.ErrNotExist)
	}
	t, ok := r.tables.Lookup(sr.Table)
	if !ok {
		return run.Summary{}, fmt.Errorf("its table %s is no longer in the configuration", sr.Table)
	}
	dt, err := r.tables.Open(ctx, t)
	if err != nil {
		return run.Summary{}, err
	}
	return run.SummaryOf(ctx, dt.Store, id)
}

// maxStateReads bounds the run records read at once for a list of runs.
const maxStateReads = 8

// Docs returns the runs with their states, in their order; the records are read concurrently,
// at most maxStateReads at once.
func (r *Runner) Docs(ctx context.Context, runs []state.Run) []RunDoc {
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

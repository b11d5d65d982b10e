package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/undo"
)

// CancelledByRequest is why the service asks a run to stop when it is cancelled through the
// API (Fabric's job API too): a run that then ends FAILED is what Fabric's job instance calls
// Cancelled.
const CancelledByRequest = "cancelled through the API"

// Cancel asks run id, in progress in this service, to stop: the executor stops between
// batches, and the run ends FAILED, with VACUUM END recorded (a run past its last batch ends as
// it went). The cancel is kept in the state database: only the service knows it asked. A run not
// in progress here is ErrConflict; one the state database does not hold, ErrNotFound.
func (r *Runner) Cancel(ctx context.Context, id string) error {
	r.mu.Lock()
	ar, ok := r.holds.active[id]
	asked := ok && ar.cancelled == ""
	if asked {
		ar.cancelled = CancelledByRequest
	}
	r.mu.Unlock()
	if !ok {
		d, err := r.Run(ctx, id)
		if err != nil {
			return Of(ErrNotFound, err)
		}
		return Of(ErrConflict, fmt.Errorf("run %s is not in progress in this service (its status is %s)", id, d.Status))
	}
	if asked {
		r.noteCancel(ctx, id, CancelledByRequest)
	}
	ar.cancel()
	return nil
}

// noteCancel keeps in the state database that the service asked run id to stop, and why.
func (r *Runner) noteCancel(ctx context.Context, id, why string) {
	if err := r.st.SetCancelled(context.WithoutCancel(ctx), id, why); err != nil {
		r.Log.Error("recording the cancel of the run", "run", id, "error", err.Error())
	}
}

// active reports whether run id is in progress in this service.
func (r *Runner) active(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.holds.active[id]
	return ok
}

// Undo brings back what run id deleted, from its trash or the store's recovery (Table.Undo),
// holding the table meanwhile; an interrupted run (its record says RUNNING, and it is not in
// progress here) is undone as deltavacuum undo --unfinished undoes it: the table's lock, which
// the undo takes, shows that no process runs it. A run still running, or without a run
// record, is ErrConflict; a table held here or by another process, ErrBusy. When the undo
// fails its report, if any, is returned with the error. After a real undo the table is
// inspected, as after a run: its figures move with the files.
func (r *Runner) Undo(ctx context.Context, id string, dryRun bool) (*run.UndoReport, error) {
	sr, err := r.st.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	t, ok := r.tables.Lookup(sr.Table)
	if !ok {
		return nil, Of(ErrNotFound, fmt.Errorf("run %s was of table %s, which is no longer in the configuration", sr.ID, sr.Table))
	}
	if r.active(sr.ID) {
		return nil, Of(ErrConflict, fmt.Errorf("run %s is still running: cancel it, then undo", sr.ID))
	}
	rid := recordOf(*sr)
	if !r.hold(t.Cfg.ID, HoldUndo+sr.ID) {
		return nil, fmt.Errorf("table %s: %w in this service", t.Cfg.ID, ErrBusy)
	}
	defer r.release(t.Cfg.ID)
	dt, err := r.tables.Open(ctx, t)
	if err != nil {
		return nil, Of(ErrTable, err)
	}
	sum := run.Summary{}
	if rid != "" {
		sum, err = run.SummaryOf(ctx, dt.Store, rid)
	}
	switch {
	case rid == "" || errors.Is(err, storage.ErrNotExist):
		return nil, Of(ErrConflict, fmt.Errorf("run %s has no run record (it deleted nothing, or failed before writing one): nothing to undo", sr.ID))
	case err != nil:
		return nil, Of(ErrTable, err)
	}
	unfinished := sum.Err == "" && sum.Status == run.StatusRunning
	rep, err := dt.Undo(ctx, rid, undo.Options{DryRun: dryRun, Unfinished: unfinished, Now: r.Now(), StaleAfter: r.staleAfter})
	if !dryRun && rep != nil {
		r.inspectLater(t, "after the undo of "+sr.ID, false)
	}
	if errors.Is(err, run.ErrLocked) {
		return nil, fmt.Errorf("table %s: %w: %w", t.Cfg.ID, ErrBusy, err)
	}
	if errors.Is(err, undo.ErrNotUndoable) {
		return nil, Of(ErrConflict, err) // the run's state says nothing can come back: nothing changed
	}
	if err != nil {
		return rep, Of(ErrTable, err)
	}
	r.Log.Info("undo", "run", sr.ID, "record", rid, "dryRun", dryRun, "unfinished", unfinished)
	return rep, nil
}

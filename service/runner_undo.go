package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/undo"
)

// cancelledByRequest begins the error of a run cancelled through the API (Fabric's job API
// too), which Fabric's job instance calls Cancelled.
const cancelledByRequest = "cancelled through the API"

// cancel asks run id, in progress in this service, to stop: the executor stops between
// batches, and the run ends FAILED, with VACUUM END recorded. A run not in progress here is
// errConflict; one the state database cannot read, errNotFound.
func (r *runner) cancel(ctx context.Context, id string) error {
	r.mu.Lock()
	ar, ok := r.holds.active[id]
	if ok && ar.cancelled == "" {
		ar.cancelled = cancelledByRequest
	}
	r.mu.Unlock()
	if !ok {
		sr, err := r.st.Run(ctx, id)
		if err != nil {
			return of(errNotFound, err)
		}
		return of(errConflict, fmt.Errorf("run %s is not in progress in this service (its status is %s)", id, sr.Status))
	}
	ar.cancel()
	return nil
}

// undo brings back what run id deleted, from its trash or the store's recovery (Table.Undo),
// holding the table meanwhile; an interrupted run (its record says RUNNING, and it is not in
// progress here) is undone as deltavacuum undo --unfinished undoes it: the table's lock, which
// the undo takes, shows that no process runs it. A run still running, or without a run
// record, is errConflict; a table held here or by another process, ErrBusy. When the undo
// fails its report, if any, is returned with the error. After a real undo the table is
// inspected, as after a run: its figures move with the files.
func (r *runner) undo(ctx context.Context, id string, dryRun bool) (*run.UndoReport, error) {
	sr, err := r.st.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	t, ok := r.tables.lookup(sr.Table)
	if !ok {
		return nil, of(errNotFound, fmt.Errorf("run %s was of table %s, which is no longer in the configuration", sr.ID, sr.Table))
	}
	if sr.Status == state.StatusRunning {
		return nil, of(errConflict, fmt.Errorf("run %s is still running: cancel it, then undo", sr.ID))
	}
	rid := recordOf(*sr)
	if !r.hold(t.cfg.ID, holdUndo+sr.ID) {
		return nil, fmt.Errorf("table %s: %w in this service", t.cfg.ID, ErrBusy)
	}
	defer r.release(t.cfg.ID)
	dt, err := r.tables.open(ctx, t)
	if err != nil {
		return nil, of(errTable, err)
	}
	sum := run.Summary{}
	if rid != "" {
		sum, err = run.SummaryOf(ctx, dt.Store, rid)
	}
	switch {
	case rid == "" || errors.Is(err, storage.ErrNotExist):
		return nil, of(errConflict, fmt.Errorf("run %s has no run record (it deleted nothing, or failed before writing one): nothing to undo", sr.ID))
	case err != nil:
		return nil, of(errTable, err)
	}
	unfinished := sum.Err == "" && sum.Status == run.StatusRunning
	rep, err := dt.Undo(ctx, rid, undo.Options{DryRun: dryRun, Unfinished: unfinished, Now: r.now(), StaleAfter: r.staleAfter})
	if !dryRun && rep != nil {
		r.inspectLater(t, "after the undo of "+sr.ID, false)
	}
	if errors.Is(err, run.ErrLocked) {
		return nil, fmt.Errorf("table %s: %w: %w", t.cfg.ID, ErrBusy, err)
	}
	if errors.Is(err, undo.ErrNotUndoable) {
		return nil, of(errConflict, err) // the run's state says nothing can come back: nothing changed
	}
	if err != nil {
		return rep, of(errTable, err)
	}
	r.log.Info("undo", "run", sr.ID, "record", rid, "dryRun", dryRun, "unfinished", unfinished)
	return rep, nil
}

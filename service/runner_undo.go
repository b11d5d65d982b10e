package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/undo"
)

// cancel asks run id, in progress in this service, to stop: the executor stops between
// batches, and the run ends FAILED, with VACUUM END recorded. A run not in progress here is
// errConflict; one the state database cannot read, errNotFound.
func (r *runner) cancel(ctx context.Context, id string) error {
	r.mu.Lock()
	ar, ok := r.holds.active[id]
	if ok && ar.cancelled == "" {
		ar.cancelled = "cancelled through the API"
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
// holding the table meanwhile. A run still running, or without a run record, is errConflict;
// a table held here or by another process, ErrBusy. When the undo fails its report, if any,
// is returned with the error.
func (r *runner) undo(ctx context.Context, id string, dryRun bool) (*undo.Report, error) {
	sr, err := r.st.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	t, ok := r.tables.lookup(sr.Table)
	switch {
	case !ok:
		return nil, of(errNotFound, fmt.Errorf("run %s was of table %s, which is no longer in the configuration", sr.ID, sr.Table))
	case sr.Status == state.StatusRunning:
		return nil, of(errConflict, fmt.Errorf("run %s is still running: cancel it, then undo", sr.ID))
	case sr.RecordID == "":
		return nil, of(errConflict, fmt.Errorf("run %s has no run record (it deleted nothing, or failed before writing one): nothing to undo", sr.ID))
	}
	if !r.hold(t.cfg.ID, "undo of "+sr.ID) {
		return nil, fmt.Errorf("table %s: %w in this service", t.cfg.ID, ErrBusy)
	}
	defer r.release(t.cfg.ID)
	dt, err := r.tables.open(ctx, t)
	if err != nil {
		return nil, of(errTable, err)
	}
	rep, err := dt.Undo(ctx, sr.RecordID, undo.Options{DryRun: dryRun, Now: r.now(), StaleAfter: r.staleAfter})
	if errors.Is(err, run.ErrLocked) {
		return nil, fmt.Errorf("table %s: %w: %w", t.cfg.ID, ErrBusy, err)
	}
	if err != nil {
		return rep, of(errTable, err)
	}
	r.log.Info("undo", "run", sr.ID, "record", sr.RecordID, "dryRun", dryRun)
	return rep, nil
}

package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/session"
)

// startLocked starts the real run req of table t (session.Start: the table checked, its lock
// taken), with the service's clock and stale limit. A table another process holds is ErrBusy.
// The tickets of dead processes it took over are logged and counted, with what to do about
// their runs.
func (r *runner) startLocked(ctx context.Context, t *table, dt *deltavacuum.Table, req session.VacuumRequest) (*session.Started, error) {
	req.StaleRunAfter = r.staleAfter
	started, err := t.session.Start(ctx, dt, req)
	if errors.Is(err, run.ErrLocked) {
		return nil, fmt.Errorf("table %s: %w: %w", t.cfg.ID, ErrBusy, err)
	}
	if err != nil {
		return nil, err
	}
	for _, h := range started.TakenOver() {
		r.m.staleRecords.WithLabelValues(t.cfg.ID).Inc()
		r.log.Warn("lock of a dead process taken over", "table", t.cfg.ID, "ticket", h.Key, "state", h.State, "note", run.TakeoverNote(ctx, dt.Store, h))
	}
	return started, nil
}

package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/run"
)

// lock takes table t's lock (run.Acquire) for purpose, for the run record id ("" for none),
// with the service's clock and stale limit. A table another process holds is ErrBusy. The
// tickets of dead processes it took over are logged and counted, with what to do about their
// runs.
func (r *runner) lock(ctx context.Context, t *table, dt *deltavacuum.Table, purpose, id string) (*run.Lock, error) {
	now, began := r.now(), time.Now()
	lk, err := run.Acquire(ctx, dt.Store, run.LockOptions{Purpose: purpose, Run: id, StaleAfter: r.staleAfter,
		Now: func() time.Time { return now.Add(time.Since(began)) }})
	if errors.Is(err, run.ErrLocked) {
		return nil, fmt.Errorf("%w: %w", ErrBusy, err)
	}
	if err != nil {
		return nil, err
	}
	for _, h := range lk.TakenOver() {
		r.m.staleRecords.WithLabelValues(t.cfg.ID).Inc()
		r.log.Warn("lock of a dead process taken over", "table", t.cfg.ID, "ticket", h.Key, "state", h.State, "note", run.TakeoverNote(dt.Location, h))
	}
	return lk, nil
}

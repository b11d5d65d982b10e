package service

import (
	"context"
	"errors"
	"time"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/undo"
)

// purgeEvery is how often the trash of a table with an undo window is purged.
const purgeEvery = time.Hour

// purgeTrash deletes for good, for each table with trash and an undoWindow (and not
// dryRunOnly), the trash of the runs that started more than the window ago; at most once per
// purgeEvery per table, and never while the table is held (a run, or an undo, which may be
// bringing files back from that trash).
func (r *runner) purgeTrash(ctx context.Context, now time.Time) {
	for _, t := range r.tables.all() {
		p := t.cfg.Policy
		if !p.Trash || p.UndoWindow <= 0 || t.cfg.DryRunOnly {
			continue
		}
		r.mu.Lock()
		last, done := r.upkeep.purged[t.cfg.ID]
		r.mu.Unlock()
		if done && now.Sub(last) < purgeEvery {
			continue
		}
		if !r.hold(t.cfg.ID, holdPurge) {
			continue // busy: the next tick tries again
		}
		r.purgeTable(ctx, t, now)
		r.release(t.cfg.ID)
	}
}

func (r *runner) purgeTable(ctx context.Context, t *table, now time.Time) {
	dt, err := r.tables.open(ctx, t)
	if err != nil {
		r.log.Warn("trash purge: opening the table", "table", t.cfg.ID, "error", r.red.String(err.Error()))
		return
	}
	rep, err := dt.PurgeTrash(ctx, run.DefaultTrash, undo.PurgeOptions{OlderThan: t.cfg.Policy.UndoWindow, Now: now, StaleAfter: r.staleAfter})
	if errors.Is(err, run.ErrLocked) {
		r.log.Info("trash purge: the table is held by another process; the next tick tries again", "table", t.cfg.ID)
		return
	}
	r.mu.Lock()
	r.upkeep.purged[t.cfg.ID] = now
	r.mu.Unlock()
	if rep != nil {
		r.m.purgedFiles.WithLabelValues(t.cfg.ID).Add(float64(rep.NumFiles))
		if len(rep.Runs) > 0 {
			r.log.Info("trash purged", "table", t.cfg.ID, "runs", len(rep.Runs), "files", rep.NumFiles, "bytes", rep.Bytes, "kept", len(rep.Kept))
		}
		if len(rep.Left) > 0 {
			r.log.Warn("trash purge left files no run record names, or that the log names", "table", t.cfg.ID, "left", len(rep.Left), "first", rep.Left[0].Path)
		}
	}
	if err != nil {
		r.log.Warn("trash purge", "table", t.cfg.ID, "error", r.red.String(err.Error()))
	}
}

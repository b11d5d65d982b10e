package runner

import (
	"context"
	"errors"
	"time"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/undo"
)

// purgeEvery is how often the trash of a table with an undo window is purged.
const purgeEvery = time.Hour

// purgeTrash deletes for good, for each table with trash and an undoWindow (and not
// dryRunOnly), the trash of the runs that started more than the window ago; at most once per
// purgeEvery per table, and never while the table is held (a run, or an undo, which may be
// bringing files back from that trash).
func (r *Runner) purgeTrash(ctx context.Context, now time.Time) {
	for _, t := range r.tables.All() {
		p := t.Cfg.Policy
		if !p.Trash || p.UndoWindow <= 0 || t.Cfg.DryRunOnly {
			continue
		}
		r.mu.Lock()
		last, done := r.upkeep.purged[t.Cfg.ID]
		r.mu.Unlock()
		if done && now.Sub(last) < purgeEvery {
			continue
		}
		if !r.hold(t.Cfg.ID, HoldPurge) {
			continue // busy: the next tick tries again
		}
		r.purgeTable(ctx, t, now)
		r.release(t.Cfg.ID)
	}
}

func (r *Runner) purgeTable(ctx context.Context, t *tables.Table, now time.Time) {
	dt, err := r.tables.Open(ctx, t)
	if err != nil {
		r.Log.Warn("trash purge: opening the table", "table", t.Cfg.ID, "error", r.Red.String(err.Error()))
		return
	}
	rep, err := dt.PurgeTrash(ctx, run.DefaultTrash, undo.PurgeOptions{OlderThan: t.Cfg.Policy.UndoWindow, Now: now, StaleAfter: r.staleAfter})
	if errors.Is(err, run.ErrLocked) {
		r.Log.Info("trash purge: the table is held by another process; the next tick tries again", "table", t.Cfg.ID)
		return
	}
	r.mu.Lock()
	r.upkeep.purged[t.Cfg.ID] = now
	r.mu.Unlock()
	if rep != nil {
		r.m.purgedFiles.WithLabelValues(t.Cfg.ID).Add(float64(rep.NumFiles))
		if len(rep.Runs) > 0 {
			r.Log.Info("trash purged", "table", t.Cfg.ID, "runs", len(rep.Runs), "files", rep.NumFiles, "bytes", rep.Bytes, "kept", len(rep.Kept))
		}
		if len(rep.Left) > 0 {
			r.Log.Warn("trash purge left files no run record names, or that the log names", "table", t.Cfg.ID, "left", len(rep.Left), "first", rep.Left[0].Path)
		}
	}
	if err != nil {
		r.Log.Warn("trash purge", "table", t.Cfg.ID, "error", r.Red.String(err.Error()))
	}
}

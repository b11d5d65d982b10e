package deltavacuum

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/undo"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Runs lists the runs recorded beside the table, oldest first, each with its state (run.Runs).
func (t *Table) Runs(ctx context.Context) ([]run.RunInfo, error) {
	return run.Runs(ctx, t.Store, time.Now(), 0)
}

// lock takes the table's lock for purpose (run.Acquire), with the clock now.
func (t *Table) lock(ctx context.Context, purpose string, now time.Time, staleAfter time.Duration) (*run.Lock, error) {
	began := time.Now()
	return run.Acquire(ctx, t.Store, run.LockOptions{Purpose: purpose, StaleAfter: staleAfter, Ticks: t.beatTicks,
		Now: func() time.Time { return now.Add(time.Since(began)) }})
}

// Undo restores what run id deleted (by default the newest run that deleted files and was not
// completely undone: a partial undo is retried, never skipped for an older run). A real undo
// holds the table's lock: no run deletes while files come back.
func (t *Table) Undo(ctx context.Context, id string, opts undo.Options) (rep *undo.Report, err error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if id == "" {
		runs, err := t.Runs(ctx)
		if err != nil {
			return nil, err
		}
		for i := len(runs) - 1; i >= 0 && id == ""; i-- {
			if runs[i].Err == "" && runs[i].NumFiles > 0 && !runs[i].UndoComplete {
				id = runs[i].ID
			}
		}
		if id == "" {
			return nil, fmt.Errorf("%s has no run that deleted files and was not undone (deltavacuum runs lists them)", t.Location)
		}
	}
	if _, err := undo.Read(ctx, t.Store, id); err != nil {
		return nil, err // before the lock: a wrong id changes nothing
	}
	if !opts.DryRun {
		lk, err := t.lock(ctx, run.PurposeUndo, opts.Now, opts.StaleAfter)
		if err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, lk.Release(ctx)) }()
		var stop context.CancelFunc
		ctx, stop = lk.Bind(ctx)
		defer stop()
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	opts.Snapshot = snap
	return undo.Undo(ctx, t.Store, id, opts)
}

// PurgeTrash deletes for good, from the trash folder, what the runs that started more than
// opts.OlderThan ago moved there (by their records). A real purge holds the table's lock.
func (t *Table) PurgeTrash(ctx context.Context, folder string, opts undo.PurgeOptions) (rep *undo.PurgeReport, err error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if !opts.DryRun {
		lk, err := t.lock(ctx, run.PurposePurge, opts.Now, opts.StaleAfter)
		if err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, lk.Release(ctx)) }()
		var stop context.CancelFunc
		ctx, stop = lk.Bind(ctx)
		defer stop()
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	f, err := vacuum.TrashFolder(snap, folder)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Location, err)
	}
	return undo.Purge(ctx, t.Store, snap, f, opts.OlderThan, opts.Now, opts.DryRun)
}

// Unlock releases the table's lock tickets that no live process holds (run.Unlock).
func (t *Table) Unlock(ctx context.Context, opts run.UnlockOptions) (*run.UnlockReport, error) {
	return run.Unlock(ctx, t.Store, opts)
}

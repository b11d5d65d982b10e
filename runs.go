package deltavacuum

import (
	"context"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/undo"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Runs lists the runs recorded beside the table, newest first, each with its state (run.Runs).
func (t *Table) Runs(ctx context.Context) ([]run.RunInfo, error) {
	return run.Runs(ctx, t.Store, time.Now(), 0)
}

// start starts a change of purpose to the table (run.Start: its lock taken), with the clock now.
func (t *Table) start(ctx context.Context, purpose string, now time.Time, staleAfter time.Duration) (*run.Run, error) {
	began := time.Now()
	return run.Start(ctx, t.Store, run.Request{Purpose: purpose, StaleRunAfter: staleAfter, Heartbeats: t.beatTicks,
		Clock: func() time.Time { return now.Add(time.Since(began)) }})
}

// Undo restores what run id deleted (by default the newest run that deleted files and was not
// completely undone: a partial undo is retried, never skipped for an older run). A real undo
// holds the table's lock: no run deletes while files come back.
func (t *Table) Undo(ctx context.Context, id string, opts undo.Options) (rep *run.UndoReport, err error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if id == "" {
		runs, err := t.Runs(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range runs { // newest first
			if r.Err == "" && r.NumFiles > 0 && !r.UndoComplete {
				id = r.ID
				break
			}
		}
		if id == "" {
			return nil, fmt.Errorf("%s has no run that deleted files and was not undone (deltavacuum runs lists them)", t.Location)
		}
	}
	if _, err := run.ReadRecord(ctx, t.Store, id); err != nil {
		return nil, err // before the lock: a wrong id changes nothing
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err // before the lock: not a table, or a broken log, changes nothing
	}
	if err := undo.Check(ctx, t.Store, id, snap); err != nil {
		return nil, err // before the lock: a record not to use, or an undo that can bring nothing back, changes nothing
	}
	if opts.DryRun {
		opts.Snapshot = snap
		return undo.Undo(ctx, t.Store, id, opts)
	}
	r, err := t.start(ctx, run.PurposeUndo, opts.Now, opts.StaleAfter)
	if err != nil {
		return nil, err
	}
	err = r.Do(ctx, func(ctx context.Context) (bool, error) {
		if opts.Snapshot, err = t.Snapshot(ctx); err != nil { // the newest, under the lock
			return false, err
		}
		rep, err = undo.Undo(ctx, t.Store, id, opts)
		return true, err
	})
	return rep, err
}

// PurgeTrash deletes for good, from the trash folder, what the runs that started more than
// opts.OlderThan ago moved there (by their records). A real purge holds the table's lock.
func (t *Table) PurgeTrash(ctx context.Context, folder string, opts undo.PurgeOptions) (rep *undo.PurgeReport, err error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	f, err := vacuum.TrashFolder(snap, folder)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Location, err) // before the lock: a refusal changes nothing
	}
	if opts.DryRun {
		return undo.Purge(ctx, t.Store, snap, f, opts.OlderThan, opts.Now, true)
	}
	r, err := t.start(ctx, run.PurposePurge, opts.Now, opts.StaleAfter)
	if err != nil {
		return nil, err
	}
	err = r.Do(ctx, func(ctx context.Context) (bool, error) {
		if snap, err = t.Snapshot(ctx); err != nil { // the newest, under the lock
			return false, err
		}
		if f, err = vacuum.TrashFolder(snap, folder); err != nil {
			return false, fmt.Errorf("%s: %w", t.Location, err)
		}
		rep, err = undo.Purge(ctx, t.Store, snap, f, opts.OlderThan, opts.Now, false)
		return true, err
	})
	return rep, err
}

// Unlock releases the table's lock tickets that no live process holds (run.Unlock).
func (t *Table) Unlock(ctx context.Context, opts run.UnlockOptions) (*run.UnlockReport, error) {
	return run.Unlock(ctx, t.Store, opts)
}

// Pin pins a version of the table for a reader (run.CreatePin): every snapshot from it to the
// newest is kept by every VACUUM of this tool until the pin ends. A Spark or delta-rs VACUUM
// of the table does not honour it.
func (t *Table) Pin(ctx context.Context, req run.PinRequest) (*run.Pin, error) {
	return run.CreatePin(ctx, t.Store, req)
}

// Pins lists the table's pins at now, each with its state (run.ListPins).
func (t *Table) Pins(ctx context.Context, now time.Time, maxPin time.Duration) ([]run.PinState, error) {
	return run.ListPins(ctx, t.Store, now, maxPin)
}

// Unpin removes pin id of the table (run.Unpin).
func (t *Table) Unpin(ctx context.Context, id string) error { return run.Unpin(ctx, t.Store, id) }

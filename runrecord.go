package deltavacuum

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/undo"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// recovery is what the table's store keeps of deleted objects (one request on object
// stores; nothing on local disk).
func (t *Table) recovery(ctx context.Context) storage.Recovery {
	if p, ok := t.Store.(storage.RecoveryProber); ok {
		return p.Recovery(ctx)
	}
	return storage.Recovery{Kind: storage.RecoveryUnknown, Detail: "this store cannot tell whether it keeps deleted objects"}
}

// runRecorder keeps the run record of one real run: written before the first delete with
// the planned files, and again when the run ends with the files it deleted.
type runRecorder struct {
	t   *Table
	rec undo.Record

	mu      sync.Mutex
	deleted []undo.Entry
	beat    *heartbeat
	// lost stops the run when its heartbeat cannot be renewed (nil: it is not stopped).
	lost func(error)
}

func newRunRecorder(t *Table, plan *vacuum.Plan, rc storage.Recovery, trash string, now time.Time) (*runRecorder, error) {
	id := undo.NewID(now)
	r := &runRecorder{t: t, rec: undo.Record{
		ID: id, Table: t.Location, Status: undo.StatusRunning, StartedAt: now.UTC(),
		Mode: string(plan.Mode), SnapshotVersion: plan.Version, RetentionHours: plan.RetentionHours,
		Recovery: rc,
	}}
	if plan.Shard != nil {
		r.rec.Shard = plan.Shard.String()
	}
	if trash != "" {
		r.rec.Trash = undo.RunTrash(trash, id)
	}
	err := plan.Files.Each(func(f vacuum.File) error {
		r.rec.Files = append(r.rec.Files, entryOf(f.Path, f.Size, f.ModificationTime))
		if f.Checksum != "" {
			r.rec.Files = append(r.rec.Files, undo.Entry{Path: f.Checksum, Size: -1})
		}
		return nil
	})
	r.rec.NumFiles, r.rec.Bytes = plan.NumFilesToDelete, plan.SizeOfDataToDelete
	return r, err
}

func entryOf(path string, size int64, mod time.Time) undo.Entry {
	e := undo.Entry{Path: path, Size: size}
	if !mod.IsZero() {
		e.ModTime = mod.UnixMilli()
	}
	return e
}

// onDeleted is the executor's OnDeleted.
func (r *runRecorder) onDeleted(path string, size int64, mod time.Time) {
	r.mu.Lock()
	r.deleted = append(r.deleted, entryOf(path, size, mod))
	r.mu.Unlock()
}

// begin writes the record of the planned run: a failure stops the run with nothing deleted.
func (r *runRecorder) begin(ctx context.Context) error {
	beat, err := startHeartbeat(ctx, r.t.Store, r.rec.ID, r.rec.StartedAt, r.t.beatTicks, r.lost)
	if err != nil {
		return fmt.Errorf("writing the heartbeat of the run under %s%s: %w; nothing was deleted", r.t.Location, undo.RunsDir, err)
	}
	r.beat = beat
	if err := undo.Write(ctx, r.t.Store, &r.rec); err != nil {
		r.beat.stop(ctx, true)
		return fmt.Errorf("%w; nothing was deleted (turn run records off with --no-run-record if this principal may not write to the table)", err)
	}
	r.rec.Files = nil // written; the end writes the files deleted
	return nil
}

// finish writes the record of the ended run, whatever its status.
func (r *runRecorder) finish(ctx context.Context, res *vacuum.Result, endVersion *int64, now time.Time) error {
	r.mu.Lock()
	files := r.deleted
	r.mu.Unlock()
	fin := now.UTC()
	rec := r.rec
	rec.Files, rec.Complete, rec.FinishedAt = files, true, &fin
	rec.Status = undo.StatusFailed
	if res != nil {
		if res.Status == vacuum.StatusCompleted {
			rec.Status = undo.StatusCompleted
		}
		rec.StartVersion = res.StartVersion
		rec.NumFiles, rec.Bytes, rec.NumDirectories = res.NumDeletedFiles, res.SizeOfDeletedData, res.NumDeletedDirectories
	}
	rec.EndVersion = endVersion
	err := undo.Write(context.WithoutCancel(ctx), r.t.Store, &rec)
	r.beat.stop(ctx, err == nil) // kept when the record still says RUNNING
	return err
}

// checkTrash refuses a trash folder the table's own rule does not hide (a partition column
// of that name): VACUUM would delete what is moved there, and undo would move live files.
func (t *Table) checkTrash(snap *deltalog.Snapshot, folder string) error {
	if !vacuum.HiddenIn(snap, folder) {
		return fmt.Errorf("--trash %s: VACUUM would not take that folder of %s for hidden (a partition column of that name?): choose another", folder, t.Location)
	}
	return nil
}

// trashStore returns the store a trashed run deletes through (its folder checked already).
func (t *Table) trashStore(folder, id string) (storage.Store, error) {
	ts, err := undo.NewTrashStore(t.Store, undo.RunTrash(folder, id))
	if errors.Is(err, storage.ErrUnsupported) {
		return nil, fmt.Errorf("--trash on %s: %w", t.Location, err)
	}
	return ts, err
}

// Runs lists the run records of the table, oldest first.
func (t *Table) Runs(ctx context.Context) ([]undo.Summary, error) { return undo.List(ctx, t.Store) }

// Undo restores what run id deleted (by default the newest run that deleted files and was not
// completely undone: a partial undo is retried, never skipped for an older run).
func (t *Table) Undo(ctx context.Context, id string, opts undo.Options) (*undo.Report, error) {
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
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	opts.Hidden = func(dir string) bool { return vacuum.HiddenIn(snap, dir) }
	return undo.Undo(ctx, t.Store, id, opts)
}

// PurgeTrash deletes for good the trash of the runs that started more than olderThan ago.
func (t *Table) PurgeTrash(ctx context.Context, folder string, olderThan time.Duration, dryRun bool) (*undo.PurgeReport, error) {
	f, err := undo.TrashFolder(folder)
	if err != nil {
		return nil, err
	}
	return undo.Purge(ctx, t.Store, f, olderThan, time.Now(), dryRun)
}

package run

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// recorder keeps the run record of one real run (package undo's format): written before the
// first delete with the planned files, and again when the run ends with the files it deleted,
// which it learns by deleting through its deleter. The files are written from the plan as
// they are read, never held as a list of entries of their own.
type recorder struct {
	store storage.Store
	rec   Record
	plan  *vacuum.Plan

	mu      sync.Mutex
	deleted map[string]struct{}
}

func newRecorder(store storage.Store, id string, plan *vacuum.Plan, rc storage.Recovery, trash string, now time.Time) (*recorder, error) {
	r := &recorder{store: store, plan: plan, deleted: map[string]struct{}{}, rec: Record{
		ID: id, Table: store.Location(), Status: StatusRunning, StartedAt: now.UTC(),
		Mode: string(plan.Mode), SnapshotVersion: plan.Version, RetentionHours: plan.RetentionHours,
		Recovery: rc,
	}}
	if plan.Shard != nil {
		r.rec.Shard = plan.Shard.String()
	}
	if trash != "" {
		r.rec.Trash = vacuum.RunTrash(trash, id)
	}
	r.rec.NumFiles, r.rec.Bytes = plan.NumFilesToDelete, plan.SizeOfDataToDelete
	var err error
	r.rec.Untracked, err = UntrackedOf(plan)
	return r, err
}

// companionEntry is the record's entry of f's checksum companion: its size as listed, or -1
// (any size matches on a restore) when the plan does not know it.
func companionEntry(f vacuum.File) Entry {
	size := f.ChecksumSize
	if size <= 0 {
		size = -1
	}
	return Entry{Path: f.Checksum, Size: size}
}

func entryOf(path string, size int64, mod time.Time) Entry {
	e := Entry{Path: path, Size: size}
	if !mod.IsZero() {
		e.ModTime = mod.UnixMilli()
	}
	return e
}

// write writes rec with the entries of the files of plan that keep(path) accepts (all when
// keep is nil), each with its size and time as planned, and its checksum companion
// (companionEntry). An error reading the plan back is returned as planErr, apart from those of the record.
func (r *recorder) write(ctx context.Context, rec *Record, plan *vacuum.Plan, keep func(path string) bool) (planErr, err error) {
	err = WriteRecordFrom(ctx, r.store, rec, func(add func(Entry) error) error {
		var addErr error
		planErr = plan.Files.Each(func(f vacuum.File) error {
			if keep == nil || keep(f.Path) {
				if addErr = add(entryOf(f.Path, f.Size, f.ModificationTime)); addErr != nil {
					return addErr
				}
			}
			if f.Checksum != "" && (keep == nil || keep(f.Checksum)) {
				if addErr = add(companionEntry(f)); addErr != nil {
					return addErr
				}
			}
			return nil
		})
		if addErr != nil {
			planErr = nil
			return addErr
		}
		return planErr
	})
	if planErr != nil {
		err = nil
	}
	return planErr, err
}

// begin writes the record of the planned run: a failure stops the run with nothing deleted.
func (r *recorder) begin(ctx context.Context) error {
	planErr, err := r.write(ctx, &r.rec, r.plan, nil)
	if planErr != nil {
		return planErr
	}
	if err != nil {
		return fmt.Errorf("%w; nothing was deleted (turn run records off with --no-run-record if this principal may not write to the table)", err)
	}
	return nil
}

// deleter returns del, recording every file it deletes (not those already gone or failed).
func (r *recorder) deleter(del vacuum.Deleter) vacuum.Deleter {
	return &recordingDeleter{del: del, r: r}
}

func (r *recorder) note(res []storage.DeleteResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range res {
		if d.Err == nil && !d.Gone && !strings.HasSuffix(d.Key, "/") {
			r.deleted[d.Key] = struct{}{}
		}
	}
}

// finish writes the record of the ended run, whatever its status: the files of the plan the
// run acted on that its deleter deleted, each with its size and time as planned (a checksum
// companion as companionEntry has it).
func (r *recorder) finish(ctx context.Context, res *vacuum.Result, endVersion *int64, now time.Time) error {
	fin := now.UTC()
	rec := r.rec
	rec.Complete, rec.FinishedAt = true, &fin
	rec.Status = StatusFailed
	r.mu.Lock()
	deleted := r.deleted
	r.mu.Unlock()
	if res != nil {
		if res.Status == vacuum.StatusCompleted {
			rec.Status = StatusCompleted
		}
		rec.StartVersion = res.StartVersion
		rec.NumFiles, rec.Bytes, rec.NumDirectories = res.NumDeletedFiles, res.SizeOfDeletedData, res.NumDeletedDirectories
	}
	rec.EndVersion = endVersion
	plan := &vacuum.Plan{} // no files
	if res != nil && res.Plan != nil && len(deleted) > 0 {
		plan = res.Plan
	}
	planErr, err := r.write(context.WithoutCancel(ctx), &rec, plan, func(path string) bool {
		_, ok := deleted[path]
		return ok
	})
	if planErr != nil {
		return fmt.Errorf("reading the plan back for the run record: %w", planErr)
	}
	return err
}

// recordingDeleter deletes through del and tells the recorder what went.
type recordingDeleter struct {
	del vacuum.Deleter
	r   *recorder
}

func (d *recordingDeleter) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	res, err := d.del.Delete(ctx, keys)
	d.r.note(res)
	return res, err
}

// DeleteIfUnchanged implements storage.ConditionalDeleter when del does; otherwise it deletes
// unconditionally, as the executor does with a deleter that cannot condition its deletes.
func (d *recordingDeleter) DeleteIfUnchanged(ctx context.Context, keys, versions []string) ([]storage.DeleteResult, error) {
	cd, ok := d.del.(storage.ConditionalDeleter)
	if !ok {
		return d.Delete(ctx, keys)
	}
	res, err := cd.DeleteIfUnchanged(ctx, keys, versions)
	d.r.note(res)
	return res, err
}

// DeleteBatchSize and RequestConcurrency pass on del's, which size the executor's batches.
func (d *recordingDeleter) DeleteBatchSize() int {
	if b, ok := d.del.(storage.DeleteBatcher); ok {
		return b.DeleteBatchSize()
	}
	return 1
}

func (d *recordingDeleter) RequestConcurrency() int {
	if c, ok := d.del.(interface{ RequestConcurrency() int }); ok {
		return c.RequestConcurrency()
	}
	return 0
}

package undo

import (
	"context"
	"errors"
	"fmt"
	"github.com/deltavacuum/deltavacuum/run"
	"slices"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// PurgeReport is what a trash purge deleted.
type PurgeReport struct {
	Trash    string    `json:"trash"`
	Cutoff   time.Time `json:"cutoff"`
	DryRun   bool      `json:"dryRun"`
	Runs     []string  `json:"runs"`
	NumFiles int64     `json:"numFiles"`
	Bytes    int64     `json:"bytes"`
	// Kept are the runs of the trash younger than the cutoff.
	Kept []string `json:"kept"`
	// Left are files in the purged runs' trash that were not deleted: no record names them, or
	// the table's log does.
	Left   []Failure `json:"left,omitempty"`
	Failed []Failure `json:"failed,omitempty"`
}

// PurgeOptions control a trash purge.
type PurgeOptions struct {
	// OlderThan: the trash of the runs that started longer ago than this is purged (0: all).
	OlderThan time.Duration
	DryRun    bool
	// Now is the clock (zero: time.Now()); StaleAfter the stale limit of the table's lock,
	// which a real purge holds (0: run.DefaultStaleAfter).
	Now        time.Time
	StaleAfter time.Duration
}

// Failure is a key a purge could not (or would not) delete.
type Failure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Purge deletes, for good, what the runs whose records name a trash in folder moved there, for
// the runs that started before now minus olderThan: for each such record, the trash keys of the
// files it lists (<trash>/<run id>/<path>), then the folders that emptied. Nothing else is
// deleted: a file in the trash no record names is left (and reported), and so is one the log of
// snap (the table's latest snapshot) names. folder must pass vacuum.TrashFolder with snap. The
// caller holds the table's lock (taken by run.Start): no run moves files into the trash meanwhile.
func Purge(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, folder string, olderThan time.Duration, now time.Time, dryRun bool) (*PurgeReport, error) {
	if f, err := vacuum.TrashFolder(snap, folder); err != nil || f != folder {
		return nil, fmt.Errorf("%s: trash purge: %w", store.Location(), errors.Join(err, fmt.Errorf("%q is not the clean form %q", folder, f)))
	}
	if olderThan < 0 {
		return nil, fmt.Errorf("--older-than %s is negative", olderThan)
	}
	rep := &PurgeReport{Trash: folder, Cutoff: now.Add(-olderThan).UTC(), DryRun: dryRun, Runs: []string{}, Kept: []string{}}
	runs, err := run.ListRecords(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("trash purge of %s: %w; nothing was purged", store.Location(), err)
	}
	var due []string
	for _, r := range runs {
		if r.Err != "" || r.Trash != run.RunTrash(folder, r.ID) {
			continue // not a run of this trash (an unreadable record names none)
		}
		if t, ok := run.IDTime(r.ID); ok && t.Before(rep.Cutoff) && r.StartedAt.Before(rep.Cutoff) {
			due = append(due, r.ID)
		} else {
			rep.Kept = append(rep.Kept, r.ID)
		}
	}
	if len(due) == 0 {
		return rep, nil
	}
	referenced, err := vacuum.ReferencedUnder(ctx, store, snap, folder)
	if err != nil {
		return nil, fmt.Errorf("trash purge of %s: reading the log: %w; nothing was purged", store.Location(), err)
	}
	for _, id := range due {
		found, err := purgeRun(ctx, store, id, referenced, rep, now, dryRun)
		if err != nil {
			return rep, err
		}
		if found {
			rep.Runs = append(rep.Runs, id)
		}
	}
	if len(rep.Failed) > 0 {
		return rep, fmt.Errorf("trash purge of %s: %d keys could not be deleted (see the list)", store.Location(), len(rep.Failed))
	}
	return rep, nil
}

// purgeRun deletes the trash of run id: the files its record names that are in its trash.
// found is false when the run has no trash folder any more (purged before). A real purge keeps
// a note beside the run's record (run.WritePurgeNote) before its first delete, and again with
// what it deleted once it is done: from then on the run's state says it cannot be undone, in
// every front end (run.InfoOf). A note that cannot be written first stops the purge of that
// run with nothing deleted.
func purgeRun(ctx context.Context, store storage.Store, id string, referenced map[string]bool, rep *PurgeReport, now time.Time, dryRun bool) (found bool, err error) {
	rec, err := run.ReadRecord(ctx, store, id)
	if err != nil {
		return false, fmt.Errorf("trash purge of %s: %w; the trash of that run was left as it is", store.Location(), err)
	}
	dir := rec.Trash
	named := make(map[string]bool, len(rec.Files))
	for _, e := range rec.Files {
		named[dir+e.Path] = true
	}
	var files, dirs []string
	kept := 0 // files of the run the table's log names: left in the trash
	sizes := map[string]int64{}
	err = store.Walk(ctx, dir, func(o storage.Object) error {
		found = true
		switch {
		case o.IsDir:
			dirs = append(dirs, o.Key)
		case !named[o.Key]:
			rep.Left = append(rep.Left, Failure{Path: o.Key, Error: "no run record names it: left as it is"})
		case referenced[o.Key]:
			rep.Left = append(rep.Left, Failure{Path: o.Key, Error: "the table's log names it: never deleted"})
			kept++
		default:
			files = append(files, o.Key)
			sizes[o.Key] = o.Size
		}
		return nil
	})
	if errors.Is(err, storage.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("listing %s: %w", dir, err)
	}
	if dryRun {
		for _, f := range files {
			rep.NumFiles++
			rep.Bytes += sizes[f]
		}
		return true, nil
	}
	note := &run.PurgeNote{Run: id, At: now.UTC(), Trash: dir, NumLeft: int64(len(files)) + int64(kept)}
	if err := run.WritePurgeNote(ctx, store, note); err != nil {
		return true, fmt.Errorf("trash purge of %s: %w; the trash of run %s was left as it is", store.Location(), err, id)
	}
	defer func() {
		// Written whatever happened since the first note: it says what is gone and what is left.
		note.Done = true
		if werr := run.WritePurgeNote(context.WithoutCancel(ctx), store, note); werr != nil {
			err = errors.Join(err, fmt.Errorf("trash purge of %s: %w (its first note says the trash of run %s is purged)", store.Location(), werr, id))
		}
	}()
	for start := 0; start < len(files); start += 1000 {
		res, err := store.Delete(ctx, files[start:min(start+1000, len(files))])
		for _, r := range res {
			if r.Err != nil {
				rep.Failed = append(rep.Failed, Failure{Path: r.Key, Error: r.Err.Error()})
				continue
			}
			note.NumLeft--
			if !r.Gone {
				rep.NumFiles++
				rep.Bytes += sizes[r.Key]
				note.NumFiles++
				note.Bytes += sizes[r.Key]
			}
		}
		if err != nil {
			return true, err
		}
	}
	slices.Reverse(dirs) // children before parents
	if len(dirs) == 0 || dirs[len(dirs)-1] != dir {
		dirs = append(dirs, dir) // the run's own folder, last
	}
	for _, d := range dirs {
		if !strings.HasPrefix(d, dir) {
			continue
		}
		// One at a time, children first: a folder empties only once those below it are gone.
		res, err := store.Delete(ctx, []string{d})
		for _, r := range res {
			if r.Err != nil && !errors.Is(r.Err, storage.ErrNotEmpty) {
				rep.Failed = append(rep.Failed, Failure{Path: r.Key, Error: r.Err.Error()})
			}
		}
		if err != nil {
			return true, err
		}
	}
	return true, nil
}

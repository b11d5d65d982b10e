package undo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
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
	Kept   []string  `json:"kept"`
	Failed []Failure `json:"failed,omitempty"`
}

// Failure is a key a purge could not delete.
type Failure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Purge deletes, for good, the trash of every run in folder that started before now minus
// olderThan: the files a trashed run moved there, then its emptied folders. Nothing outside
// folder is touched; a folder below it that is not named as a run id is left alone, and so is
// the trash of a run whose record says RUNNING with a heartbeat fresher than DefaultStaleAfter.
func Purge(ctx context.Context, store storage.Store, folder string, olderThan time.Duration, now time.Time, dryRun bool) (*PurgeReport, error) {
	if err := CheckTrashFolder(folder); err != nil {
		return nil, err
	}
	if olderThan < 0 {
		return nil, fmt.Errorf("--older-than %s is negative", olderThan)
	}
	rep := &PurgeReport{Trash: folder, Cutoff: now.Add(-olderThan).UTC(), DryRun: dryRun, Runs: []string{}, Kept: []string{}}
	// A run still in progress (its record RUNNING, its heartbeat fresh: a run longer than the
	// window, in another process) is moving files into its trash: that trash is kept.
	running, err := Running(ctx, store, now, DefaultStaleAfter)
	if err != nil {
		return nil, fmt.Errorf("trash purge of %s: reading the run records: %w; nothing was purged", store.Location(), err)
	}
	live := map[string]bool{}
	for _, r := range running {
		live[r.ID] = !r.Stale
	}
	var runs []string
	err = store.Walk(ctx, folder, func(o storage.Object) error {
		if o.Key == folder {
			return nil
		}
		if !o.IsDir {
			return nil
		}
		id := strings.TrimSuffix(strings.TrimPrefix(o.Key, folder), "/")
		t, ok := IDTime(id)
		switch {
		case !ok:
		case live[id]:
			rep.Kept = append(rep.Kept, id)
		case t.Before(rep.Cutoff):
			runs = append(runs, id)
		default:
			rep.Kept = append(rep.Kept, id)
		}
		return storage.SkipDir
	})
	if errors.Is(err, storage.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the trash %s of %s: %w", folder, store.Location(), err)
	}
	for _, id := range runs {
		if err := purgeRun(ctx, store, RunTrash(folder, id), rep, dryRun); err != nil {
			return rep, err
		}
		rep.Runs = append(rep.Runs, id)
	}
	if len(rep.Failed) > 0 {
		return rep, fmt.Errorf("trash purge of %s: %d keys could not be deleted (see the list)", store.Location(), len(rep.Failed))
	}
	return rep, nil
}

func purgeRun(ctx context.Context, store storage.Store, dir string, rep *PurgeReport, dryRun bool) error {
	var files, dirs []string
	var sizes = map[string]int64{}
	err := store.Walk(ctx, dir, func(o storage.Object) error {
		if o.IsDir {
			dirs = append(dirs, o.Key)
		} else {
			files = append(files, o.Key)
			sizes[o.Key] = o.Size
		}
		return nil
	})
	if err != nil && !errors.Is(err, storage.ErrNotExist) {
		return fmt.Errorf("listing %s: %w", dir, err)
	}
	if dryRun {
		for _, f := range files {
			rep.NumFiles++
			rep.Bytes += sizes[f]
		}
		return nil
	}
	slices.Reverse(dirs) // children before parents
	if len(dirs) == 0 || dirs[len(dirs)-1] != dir {
		dirs = append(dirs, dir) // the run's own folder, last
	}
	for start := 0; start < len(files); start += 1000 {
		res, err := store.Delete(ctx, files[start:min(start+1000, len(files))])
		for _, r := range res {
			if r.Err != nil {
				rep.Failed = append(rep.Failed, Failure{Path: r.Key, Error: r.Err.Error()})
			} else if !r.Gone {
				rep.NumFiles++
				rep.Bytes += sizes[r.Key]
			}
		}
		if err != nil {
			return err
		}
	}
	res, err := store.Delete(ctx, dirs)
	for _, r := range res {
		if r.Err != nil && !errors.Is(r.Err, storage.ErrNotEmpty) {
			rep.Failed = append(rep.Failed, Failure{Path: r.Key, Error: r.Err.Error()})
		}
	}
	return err
}

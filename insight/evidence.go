package insight

import (
	"context"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// logFacts is what the snapshot's actions say of one key.
type logFacts struct {
	live          bool
	addedIn       int64
	inCheckpoint  bool
	removedIn     *int64
	removedAt     time.Time
	removedInCkpt bool
	dvOf          string
}

func (f *logFacts) fill(e *Evidence) {
	if f == nil {
		return
	}
	if f.live {
		v := f.addedIn
		e.AddedInVersion, e.InCheckpoint = &v, f.inCheckpoint
	}
	if f.removedIn != nil {
		at := f.removedAt.UTC()
		e.RemovedInVersion, e.RemovedAt = f.removedIn, &at
	}
	e.DeletionVectorOf = f.dvOf
}

func (f *logFacts) addedText() string {
	if f == nil || !f.live {
		return "named by a live add"
	}
	if f.inCheckpoint {
		return fmt.Sprintf("added in version %d or before (a row of the checkpoint of version %d)", f.addedIn, f.addedIn)
	}
	return fmt.Sprintf("added in version %d", f.addedIn)
}

func (f *logFacts) removedText() string {
	if f == nil || f.removedIn == nil {
		return "removed inside the retention"
	}
	at := f.removedAt.UTC().Format(time.RFC3339)
	if f.removedInCkpt {
		return fmt.Sprintf("removed in version %d or before (a row of the checkpoint) at %s", *f.removedIn, at)
	}
	return fmt.Sprintf("removed in version %d at %s", *f.removedIn, at)
}

// logEvidence reads the snapshot's actions naming the wanted keys.
func logEvidence(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, want map[string][]int) (map[string]*logFacts, error) {
	out := map[string]*logFacts{}
	get := func(k string) *logFacts {
		f := out[k]
		if f == nil {
			f = &logFacts{}
			out[k] = f
		}
		return f
	}
	err := snap.Files(ctx, store, func(f deltalog.File) error {
		for _, k := range append([]string{f.Key}, f.OtherKeys...) {
			if _, ok := want[k]; !ok || k == "" {
				continue
			}
			facts := get(k)
			if !f.Removed {
				facts.live, facts.addedIn, facts.inCheckpoint = true, f.Version, f.FromCheckpoint
				continue
			}
			if facts.removedIn == nil || f.DeletionTimestamp > facts.removedAt.UnixMilli() {
				v := f.Version
				facts.removedIn, facts.removedAt, facts.removedInCkpt = &v, time.UnixMilli(f.DeletionTimestamp), f.FromCheckpoint
			}
		}
		if _, ok := want[f.DVKey]; ok && f.DVKey != "" {
			facts := get(f.DVKey)
			if facts.dvOf == "" || !f.Removed {
				facts.dvOf = f.Key
			}
			if f.Removed && (facts.removedIn == nil || f.DeletionTimestamp > facts.removedAt.UnixMilli()) {
				v := f.Version
				facts.removedIn, facts.removedAt, facts.removedInCkpt = &v, time.UnixMilli(f.DeletionTimestamp), f.FromCheckpoint
			}
		}
		return nil
	})
	return out, err
}

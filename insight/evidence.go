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
	live         bool
	addedIn      int64
	inCheckpoint bool
	removed      *deltalog.File // the newest remove naming it
	dvOf         string
}

// removedAt is the deletionTimestamp of the newest remove naming it.
func (f *logFacts) removedAt() time.Time { return time.UnixMilli(f.removed.DeletionTimestamp).UTC() }

// remove records r, a remove naming the key, when it is the newest.
func (f *logFacts) remove(r deltalog.File) {
	if f.removed == nil || r.DeletionTimestamp > f.removed.DeletionTimestamp {
		r.OtherKeys = nil // the reader's: only the version, the time and where it was are kept
		f.removed = &r
	}
}

func (f *logFacts) fill(e *Evidence) {
	if f == nil {
		return
	}
	if f.live {
		v := f.addedIn
		e.AddedInVersion, e.InCheckpoint = &v, f.inCheckpoint
	}
	if f.removed != nil {
		v, at := f.removed.Version, f.removedAt()
		e.RemovedInVersion, e.RemovedAt = &v, &at
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
	if f == nil || f.removed == nil {
		return "removed inside the retention"
	}
	at := f.removedAt().Format(time.RFC3339)
	if f.removed.FromCheckpoint {
		return fmt.Sprintf("removed in version %d or before (a row of the checkpoint) at %s", f.removed.Version, at)
	}
	return fmt.Sprintf("removed in version %d at %s", f.removed.Version, at)
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
			facts.remove(f)
		}
		if _, ok := want[f.DVKey]; ok && f.DVKey != "" {
			facts := get(f.DVKey)
			if facts.dvOf == "" || !f.Removed {
				facts.dvOf = f.Key
			}
			if f.Removed {
				facts.remove(f)
			}
		}
		return nil
	})
	return out, err
}

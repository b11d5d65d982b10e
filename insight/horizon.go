package insight

import (
	"context"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// horizons answers how far time travel reaches after a vacuum: version v can be read when
// every file of it survives. A file removed in version r was live in the versions before r,
// so deleting it makes every version before r unreadable: after a vacuum, the oldest version
// from which every later one reads is the newest removal version among the files it deletes,
// or the oldest version the log rebuilds, whichever is later.
type horizons struct {
	oldest   int64
	removed  map[string]int64 // key (file or deletion vector) -> newest commit removing it
	commitAt map[int64]time.Time
}

// newHorizons takes the versions of the removes from every commit in the log (those after the
// checkpoint as the snapshot parsed them). A remove recorded only in a checkpoint was made in
// a commit no longer in the log, before the oldest version the log rebuilds.
func newHorizons(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, oldest int64) (*horizons, error) {
	h := &horizons{oldest: oldest, removed: map[string]int64{}, commitAt: map[int64]time.Time{}}
	err := snap.LogFileRefs(ctx, store, func(r deltalog.LogRef) error {
		if r.CDC {
			return nil
		}
		for _, k := range []string{r.Key, r.DVKey} {
			if k != "" && r.Version > h.removed[k] {
				h.removed[k] = r.Version
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	times, err := snap.CommitTimestamps(ctx, store)
	if err != nil {
		return nil, err
	}
	for _, t := range times {
		h.commitAt[t.Version] = t.Timestamp
	}
	return h, nil
}

// removedIn returns, for each entry, the newest commit of the log removing its key (-1 when
// none does), looked up once for all the cutoffs asked.
func (h *horizons) removedIn(entries []entry) []int64 {
	out := make([]int64, len(entries))
	for i := range entries {
		out[i] = -1
		if r, ok := h.removed[entries[i].v.Object.Key]; ok {
			out[i] = r
		}
	}
	return out
}

// after returns the oldest version time travel reads after a vacuum with the cutoff, and its
// commit time when its commit file is in the log; removed is removedIn(entries).
func (h *horizons) after(entries []entry, removed []int64, cutoff time.Time) (int64, *time.Time) {
	v := h.oldest
	for i := range entries {
		if removed[i] > v && entries[i].v.DeletableAt(cutoff) {
			v = removed[i]
		}
	}
	if t, ok := h.commitAt[v]; ok {
		t = t.UTC()
		return v, &t
	}
	return v, nil
}

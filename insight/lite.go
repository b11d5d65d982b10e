package insight

import (
	"context"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// inspectLite estimates from the log alone, listing nothing: the live files and the
// tombstones of the snapshot, with the sizes the log records. It cannot see untracked,
// hidden or change-data files, whether a tombstoned file is still on disk, nor modification
// times (every file counts as old), so its reclaimable bytes are those of the expired
// tombstones, an upper bound of what their files still take where the log records sizes.
func inspectLite(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, s settings) (*Report, error) {
	table, err := snap.DeletedFileRetention()
	if err != nil {
		return nil, err
	}
	run := table
	if s.RetainHours != nil {
		run = retentionOf(*s.RetainHours)
	}
	cutoff := s.Now.Add(-run)
	acc := newAccount(snap, s.smallMax)
	live := map[string]bool{}
	tombs := map[string]*vacuum.Verdict{}
	liveDV := map[string]bool{}
	noSize := 0
	err = snap.Files(ctx, store, func(f deltalog.File) error {
		if !f.Removed {
			if f.Key != "" {
				live[f.Key] = true
				acc.observe(vacuum.Verdict{Object: storage.Object{Key: f.Key, Size: f.Size}, Rule: vacuum.RuleLive})
			}
			if f.DVKey != "" && !liveDV[f.DVKey] {
				liveDV[f.DVKey] = true
				acc.files.DeletionVectors.Files++ // the log does not record a DV file's size
			}
			return nil
		}
		if f.Key != "" && f.Size == 0 {
			noSize++
		}
		for _, key := range []string{f.Key, f.DVKey} {
			if key == "" {
				continue
			}
			t, ok := tombs[key]
			if !ok {
				size := f.Size
				if key != f.Key {
					size = 0 // a deletion-vector file: the log does not record its size
				}
				t = &vacuum.Verdict{Object: storage.Object{Key: key, Size: size}, Reason: vacuum.ReasonTombstone, NewestRemoval: -1}
				tombs[key] = t
			}
			t.NewestRemoval = max(t.NewestRemoval, f.DeletionTimestamp)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	plan := &vacuum.Plan{Table: snap.Location, Version: snap.Version, Source: "log", RetentionHours: run.Hours(),
		TableRetentionHours: table.Hours(), Cutoff: cutoff.UTC(), Files: vacuum.NewFileList()}
	for key, t := range tombs {
		if live[key] || liveDV[key] {
			continue // the data file of another (path, deletion vector) that is live
		}
		t.Rule = vacuum.RuleUnreferenced
		if t.NewestRemoval >= cutoff.UnixMilli() {
			t.Rule = vacuum.RuleRetained
		} else {
			_ = plan.Files.Append(vacuum.File{Path: key, Size: t.Object.Size, Reason: vacuum.ReasonTombstone}) // in memory: never fails
			plan.NumFilesToDelete++
			plan.SizeOfDataToDelete += t.Object.Size
		}
		acc.entries = append(acc.entries, entry{v: *t})
	}
	acc.settle(nil)
	for _, c := range snap.Segment.AllCommits {
		acc.logNames = append(acc.logNames, c)
		acc.files.DeltaLog.Commits.add(c.Size)
	}
	for _, c := range snap.Segment.Checkpoint {
		acc.logNames = append(acc.logNames, c)
		acc.files.DeltaLog.Checkpoints.add(c.Size)
	}
	r, err := acc.report(ctx, store, snap, plan, s)
	if err != nil {
		return nil, err
	}
	r.Notes = append(r.Notes, "estimate from the log alone (--lite): nothing was listed; untracked, hidden and change-data files are not counted, "+
		"tombstoned files count as present and old, sizes are those the log records, and deletion-vector files are counted without their sizes")
	if noSize > 0 {
		r.Notes = append(r.Notes, "some removes record no size and count as 0 bytes")
	}
	return r, nil
}

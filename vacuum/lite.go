package vacuum

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// planLite takes the candidates from the log (section 9): the remove actions (and their
// deletion-vector files) and cdc actions of the commits after the last vacuum up to the
// newest commit at or before the cutoff (liteWindow), minus what the rules of liteKeeps keep.
// It lists nothing outside _delta_log/ and never deletes directories or untracked files.
func (p *Planner) planLite(ctx context.Context, plan *Plan, times []deltalog.CommitTime) (*Plan, error) {
	plan.Source = "log"
	if plan.LatestCommitOutsideRetention == nil {
		return plan, nil // no commit is old enough: nothing to do
	}
	last := *plan.LatestCommitOutsideRetention
	lastVacuum, err := deltalog.ReadLastVacuumInfo(ctx, p.store)
	if err != nil {
		return nil, err
	}
	start, err := liteWindow(p.snap.Location, p.snap.Version, p.opts.Version != nil, lastVacuum, times[0].Version)
	if err != nil {
		return nil, err
	}
	plan.EligibleStartVersion, plan.EligibleEndVersion = &start, &last
	if start > last {
		return plan, nil
	}
	cutoffMs := p.cutoff.UnixMilli()
	commitTime := make(map[int64]time.Time, len(times))
	for _, c := range times {
		commitTime[c.Version] = c.Timestamp
	}
	index := map[uint64]int{} // candidate -> its place in plan.Files
	// Hadoop's local file system writes a .<name>.crc beside each file, and Spark's LITE
	// deletes it with the file. Without a listing, look for it only on local disk, where a
	// stat is a cheap system call; object stores have no such companions.
	localDisk := strings.HasPrefix(p.snap.Location, "file:")
	add := func(key string, size int64, reason Reason, at time.Time) error {
		if key == "" || !p.opts.Shard.Owns(key) {
			return nil
		}
		h := p.hash(key)
		if p.liteKeeps(key, h) != "" {
			return nil
		}
		eligible := p.eligible(h, at)
		if i, ok := index[h]; ok {
			plan.Files.raiseEligible(i, eligible)
			return nil
		}
		index[h] = plan.Files.Len()
		f := File{Path: key, Size: size, Reason: reason, eligible: eligible}
		if localDisk {
			// A stat is a cheap system call here: a file written again under a removed
			// name since (a writer with fixed names, a RESTORE copying it back) is younger
			// than the cutoff, and FULL's age rule keeps it [safer]. (On object stores it
			// would be one request per candidate; LITE trusts the log there, as the
			// reference does.)
			if o, err := p.store.Stat(ctx, key); err == nil && !p.oldEnough(o.ModTime) {
				delete(index, h)
				return nil
			}
			if crc := checksumCompanion(key); p.companionExists(ctx, crc) {
				f.Checksum = crc
			}
		}
		if err := plan.Files.Append(f); err != nil {
			return err
		}
		plan.NumFilesToDelete++
		plan.SizeOfDataToDelete += size
		return nil
	}
	next := start
	for _, c := range p.snap.Segment.AllCommits {
		if c.Version < start || c.Version > last {
			continue
		}
		if c.Version != next {
			return nil, fmt.Errorf("table %s: %w: version %d is missing from the log, so LITE cannot know what it removed; run VACUUM FULL", p.snap.Location, deltalog.ErrMissingVersion, next)
		}
		next++
		err := p.snap.CommitFileRefs(ctx, p.store, c, func(r deltalog.LogRef) error {
			if r.CDC {
				return add(r.Key, r.Size, ReasonChangeData, commitTime[r.Version])
			}
			if !tombstoneExpired(r.DeletionTimestamp, cutoffMs) {
				return nil
			}
			removed := time.UnixMilli(r.DeletionTimestamp)
			if err := add(r.Key, r.Size, ReasonTombstone, removed); err != nil {
				return err
			}
			return add(r.DVKey, 0, ReasonTombstone, removed)
		})
		if err != nil {
			_ = plan.Close()
			return nil, err
		}
	}
	return plan, nil
}

// companionExists reports whether a checksum companion that goes with its file is on local
// disk: there, and not protected by the log itself (rules_checksum.go).
func (p *Planner) companionExists(ctx context.Context, crc string) bool {
	_, err := p.store.Stat(ctx, crc)
	return err == nil && !p.protected(crc)
}

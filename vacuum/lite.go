package vacuum

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// planLite takes the candidates from the log (section 9): the remove actions (and their
// deletion-vector files) and cdc actions of the commits after the last vacuum up to the
// newest commit at or before the cutoff, minus the protected set. It lists nothing outside
// _delta_log/ and never deletes directories or untracked files.
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
	if lastVacuum != nil && p.opts.Version != nil && *lastVacuum > p.snap.Version {
		return nil, fmt.Errorf("table %s: %s says VACUUM covered the log up to version %d, after the pinned version %d: pin version %d or later for VACUUM LITE",
			p.snap.Location, deltalog.LastVacuumInfoKey, *lastVacuum, p.snap.Version, *lastVacuum)
	}
	if lastVacuum != nil && (*lastVacuum > p.snap.Version || *lastVacuum < -1) {
		// A vacuum can only have covered commits that exist. A version beyond the log (the
		// file was copied from another table, or the log restored from an older copy) would
		// make every LITE run a silent no-op.
		return nil, fmt.Errorf("table %s: %s is corrupt: it says VACUUM covered the log up to version %d, but the log ends at version %d. Run VACUUM FULL once: it deletes what LITE would and rewrites the file",
			p.snap.Location, deltalog.LastVacuumInfoKey, *lastVacuum, p.snap.Version)
	}
	earliest := times[0].Version
	// The reference also refuses at lastVacuum == earliest-1, which is safe: every commit
	// after the last vacuum is still in the log [safer].
	if earliest > 0 && (lastVacuum == nil || *lastVacuum < earliest-1) {
		covered := "no earlier VACUUM is recorded in _delta_log/_last_vacuum_info"
		if lastVacuum != nil {
			covered = fmt.Sprintf("the last VACUUM covered commits up to %d", *lastVacuum)
		}
		return nil, fmt.Errorf("table %s: %w The log starts at version %d and %s, so files removed by the commits cleaned up in between are named nowhere. Run VACUUM FULL once (it records how far it got); later LITE runs continue from there",
			p.snap.Location, ErrCannotVacuumLite, earliest, covered)
	}
	start := earliest
	if lastVacuum != nil && *lastVacuum+1 > start {
		start = *lastVacuum + 1
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
		if key == "" || p.hidden.hiddenPath(key) || !p.opts.Shard.Owns(key) {
			return nil
		}
		h := p.hash(key)
		if p.keep.has(h) || p.keptByFold(key) || p.keepDir.has(p.hash(key+"/")) {
			return nil // protected; or a protected path passes through it (a folder that is a link)
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
			if o, err := p.store.Stat(ctx, key); err == nil && !o.ModTime.Before(p.cutoff) {
				delete(index, h)
				return nil
			}
			crc := storage.Dir(key) + "." + storage.Base(key) + ".crc"
			if _, err := p.store.Stat(ctx, crc); err == nil && !p.protected(crc) {
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
			if r.DeletionTimestamp >= cutoffMs {
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

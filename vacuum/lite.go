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
// newest commit at or before the cutoff (liteWindow), minus what the rules of liteKeeps keep.
// It lists nothing outside _delta_log/ and never deletes directories or untracked files.
func (p *Planner) planLite(ctx context.Context, plan *Plan, times []deltalog.CommitTime) (*Plan, error) {
	plan.Source = "log"
	p.observeLogFiles()
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
	// removed is the deletionTimestamp of the remove naming the candidate, -1 for a cdc file.
	add := func(key string, size int64, reason Reason, at time.Time, removed int64) error {
		if key == "" || !p.opts.Shard.Owns(key) {
			return nil
		}
		h := p.hash(key)
		if rule := p.liteKeeps(key, h); rule != "" {
			if rule == RuleRead {
				if _, ok := index[h]; !ok {
					index[h] = -1 // kept: told once
					p.keepForReaders(plan, storage.Object{Key: key, Size: size}, reason, p.readBy(key, h))
				}
				return nil
			}
			p.observeCandidate(storage.Object{Key: key, Size: size}, h, rule, reason, removed)
			return nil
		}
		eligible := p.eligible(h, at)
		if i, ok := index[h]; ok {
			if i >= 0 {
				plan.Files.raiseEligible(i, eligible)
			}
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
				p.observeCandidate(storage.Object{Key: key, Size: size, ModTime: o.ModTime}, h, RuleTooNew, reason, removed)
				return nil
			}
			if crc := checksumCompanion(key); p.companionExists(ctx, crc, &f.ChecksumSize) {
				f.Checksum = crc
				plan.NumChecksumFiles++
				plan.SizeOfChecksumFiles += f.ChecksumSize
			}
		}
		if err := plan.Files.Append(f); err != nil {
			return err
		}
		plan.NumFilesToDelete++
		plan.SizeOfDataToDelete += size
		p.observeCandidate(storage.Object{Key: key, Size: size}, h, RuleUnreferenced, reason, removed)
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
				return add(r.Key, r.Size, ReasonChangeData, commitTime[r.Version], -1)
			}
			if !tombstoneExpired(r.DeletionTimestamp, cutoffMs) {
				return nil
			}
			removed := time.UnixMilli(r.DeletionTimestamp)
			if err := add(r.Key, r.Size, ReasonTombstone, removed, r.DeletionTimestamp); err != nil {
				return err
			}
			return add(r.DVKey, 0, ReasonTombstone, removed, r.DeletionTimestamp)
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
func (p *Planner) companionExists(ctx context.Context, crc string, size *int64) bool {
	o, err := p.store.Stat(ctx, crc)
	if err != nil || p.protected(crc) {
		return false
	}
	*size = o.Size
	return true
}

// logFiles are, for an observer of LITE (Options.ObserveLog), the files and deletion vectors
// the snapshot protects, noted once each as the log is read (noted, emptied once it is read)
// and told to the observer when LITE plans; told then holds the hashes of the keys told, so
// that a candidate is told once and not again when the snapshot protects it.
type logFiles struct {
	files []logFile
	noted keySet
	told  keySet
}

type logFile struct {
	key  string
	size int64
	h    uint64
}

// note records a key (hash h) the snapshot's file action f protects: its file or its deletion
// vector (whose size the log does not record), not the other readings of its path.
func (l *logFiles) note(h uint64, key string, f deltalog.File) {
	if (key != f.Key && key != f.DVKey) || !l.noted.add(h) {
		return
	}
	size := f.Size
	if key != f.Key {
		size = 0
	}
	l.files = append(l.files, logFile{key: key, size: size, h: h})
}

// observeLogFiles tells the observer of LITE the files the snapshot protects, with the rule
// that protects each.
func (p *Planner) observeLogFiles() {
	l := p.logFiles
	if l == nil {
		return
	}
	l.noted = keySet{}
	l.told = newKeySet()
	for _, f := range l.files {
		l.told.add(f.h)
		at, _ := p.keep.find(f.h)
		p.observe(storage.Object{Key: f.key, Size: f.size}, f.h, at, RuleLive, "")
	}
}

// observeCandidate tells the observer of LITE the verdict on a candidate, once (removed: the
// deletionTimestamp of the remove naming it, -1 for a cdc file).
func (p *Planner) observeCandidate(o storage.Object, h uint64, rule Rule, reason Reason, removed int64) {
	l := p.logFiles
	if l == nil || !l.told.add(h) {
		return
	}
	if rule == RuleLive {
		at, _ := p.keep.find(h)
		p.observe(o, h, at, RuleLive, "") // a reading of a path the snapshot's files do not spell
		return
	}
	v := Verdict{Object: o, Rule: rule, NewestRemoval: -1}
	if rule != RuleHidden {
		v.NewestRemoval = removed
		if ts, ok := p.expired.newest(h); ok {
			v.NewestRemoval = max(v.NewestRemoval, ts)
		}
	}
	if rule == RuleUnreferenced || rule == RuleTooNew {
		v.Reason = reason
	}
	p.opts.Observe(v)
}

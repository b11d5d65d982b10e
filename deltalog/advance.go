package deltalog

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Advance returns the snapshot of the latest version, read on from s: _delta_log/ is listed
// once and only the commits after s.Version are read, each applied to s (its file actions,
// protocol, metaData and commitInfo); the checkpoint s was read from is not read again, and a
// newer one is not needed, since the commits it sums up are still there. Only when the log
// no longer holds every commit after s.Version (a log cleanup removed them once a newer
// checkpoint replaced them) is the latest snapshot read in full from the listing
// (LoadSegment); full then says so. s itself is not changed.
//
// A log whose latest version is older than s is refused: it was replaced, or restored from
// an older copy, since s was read.
func (s *Snapshot) Advance(ctx context.Context, store storage.Store) (snap *Snapshot, full bool, err error) {
	seg, err := ListLog(ctx, store)
	if err != nil {
		return nil, false, err
	}
	if seg.Version < s.Version {
		return nil, false, fmt.Errorf("%w: %s: the log now ends at version %d, older than version %d read before: it was replaced or restored from an older copy since; run again", ErrCorrupt, s.Location, seg.Version, s.Version)
	}
	if was, ok := s.Segment.commitFile(s.Version); ok {
		if now, ok := seg.commitFile(s.Version); ok && !sameCommitFile(was, now) {
			// Commits are never rewritten: the table was deleted and written again at this
			// location, or its log restored from another copy, since s was read. The commits
			// after s.Version are the new log's, and applied to s they would leave out every
			// file the new log added up to that version.
			return nil, false, fmt.Errorf("%w: %s: commit %d is not the file read before (%d bytes, modified %s; now %d bytes, modified %s): the log was replaced or restored from another copy since; run again",
				ErrCorrupt, s.Location, s.Version, was.Size, was.ModTime.UTC().Format(time.RFC3339), now.Size, now.ModTime.UTC().Format(time.RFC3339))
		}
	}
	var after []LogFile
	next := s.Version + 1
	for _, c := range seg.AllCommits {
		if c.Version < next {
			continue
		}
		if c.Version != next {
			break
		}
		after = append(after, c)
		next++
	}
	if next <= seg.Version {
		// Commit next is gone: cleaned up behind a newer checkpoint (ListLog refuses a gap
		// after the checkpoint it chose, so that one starts past it).
		n, err := LoadSegment(ctx, store, seg)
		return n, true, err
	}
	n := s
	for _, lf := range after {
		if n, err = n.apply(ctx, store, lf); err != nil {
			return nil, false, err
		}
	}
	if n == s {
		c := *s
		n = &c
	}
	// Which commit files the log holds now, and what else it says, is the new listing's: a
	// cleanup may have removed commits older than s's (CommitTimestamps, LITE).
	seg2 := *n.Segment
	seg2.AllCommits = seg.AllCommits
	seg2.StagedCommits, seg2.UnbackfilledCommits = seg.StagedCommits, seg.UnbackfilledCommits
	n.Segment = &seg2
	return n, false, nil
}

// commitFile returns the commit file of version v that the segment lists, if it does.
func (seg *Segment) commitFile(v int64) (LogFile, bool) {
	i, ok := slices.BinarySearchFunc(seg.AllCommits, v, func(c LogFile, v int64) int { return cmp.Compare(c.Version, v) })
	if !ok {
		return LogFile{}, false
	}
	return seg.AllCommits[i], true
}

// sameCommitFile reports whether two listings of one commit version name the same file: its
// key, its size and, where both listings give one, its modification time within a second
// (a HEAD request may give whole seconds where a listing gives milliseconds).
func sameCommitFile(a, b LogFile) bool {
	if a.Key != b.Key || a.Size != b.Size {
		return false
	}
	if a.ModTime.IsZero() || b.ModTime.IsZero() {
		return true
	}
	d := a.ModTime.Sub(b.ModTime)
	return d > -time.Second && d < time.Second
}

// next returns the snapshot one version later: s with the commit of version s.Version+1
// applied. It looks for that commit directly (one request, not a listing): another writer
// has just taken the version.
func (s *Snapshot) next(ctx context.Context, store storage.Store) (*Snapshot, error) {
	v := s.Version + 1
	key := CommitKey(v)
	o, err := store.Stat(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("reading version %d of %s after another writer committed it: %w", v, s.Location, err)
	}
	return s.apply(ctx, store, LogFile{Key: key, Kind: KindCommit, Version: v, Size: o.Size, ModTime: o.ModTime})
}

// apply returns s with commit lf, of version s.Version+1, read and applied (its file actions,
// protocol, metaData and commitInfo). s itself is not changed.
func (s *Snapshot) apply(ctx context.Context, store storage.Store, lf LogFile) (*Snapshot, error) {
	if lf.Version != s.Version+1 {
		return nil, fmt.Errorf("%w: %s: version %d does not follow version %d", ErrMissingVersion, s.Location, lf.Version, s.Version)
	}
	c, p, m, err := readCommit(ctx, store, lf)
	if err != nil {
		return nil, err
	}
	n := *s
	n.Version = lf.Version
	n.commits = append(slices.Clip(s.commits), c)
	seg := *s.Segment
	seg.Version = lf.Version
	seg.Commits = append(slices.Clip(seg.Commits), lf)
	seg.AllCommits = append(slices.Clip(seg.AllCommits), lf)
	n.Segment = &seg
	if p != nil {
		n.Protocol, n.ProtocolVersion = *p, lf.Version
	}
	if m != nil {
		n.Metadata, n.MetadataVersion = *m, lf.Version
	}
	return &n, nil
}

// LoadFrom returns the latest snapshot of the table in store: from advanced (Advance) when
// the caller has one of this table already, read in full (Load) when from is nil. A snapshot
// of another table is refused.
func LoadFrom(ctx context.Context, store storage.Store, from *Snapshot) (*Snapshot, error) {
	if from == nil {
		return Load(ctx, store)
	}
	if from.Location != store.Location() {
		return nil, fmt.Errorf("table %s: the snapshot given to start from is of another table (%s); nothing was read", store.Location(), from.Location)
	}
	snap, _, err := from.Advance(ctx, store)
	return snap, err
}

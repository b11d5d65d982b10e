package deltalog

import (
	"cmp"
	"context"
	"errors"
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
	return s.with(lf, c, p, m), nil
}

// applyWritten is apply of the commit lf this process has just written as data: decoded from
// those bytes, not read back from the store.
func (s *Snapshot) applyWritten(ctx context.Context, lf LogFile, data []byte) (*Snapshot, error) {
	if lf.Version != s.Version+1 {
		return nil, fmt.Errorf("%w: %s: version %d does not follow version %d", ErrMissingVersion, s.Location, lf.Version, s.Version)
	}
	c, p, m, err := writtenCommit(ctx, s.Location, lf, data)
	if err != nil {
		return nil, err
	}
	return s.with(lf, c, p, m), nil
}

// with returns s with commit c (of file lf, its protocol p and metaData m) applied.
func (s *Snapshot) with(lf LogFile, c commit, p *Protocol, m *Metadata) *Snapshot {
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
	return &n
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

// AdvanceTail is Advance where the store lists a directory from a name on (storage.DirLister:
// the object stores): _delta_log/ is listed from s.Version's 21-digit name on (listTail),
// which shows the commit s was read at (the same file, or the log was replaced: refused as
// by Advance), every commit after it, and every commit file of those versions and the next
// named with 21 digits or fewer leading zeros than 20 (refused as ListLog refuses them). On
// a log of many versions this is a page where Advance lists them all. What it cannot settle
// (the commit of s.Version gone, a gap after it) it leaves to Advance, which lists the log
// whole; so does a store that cannot start a listing at a name.
//
// A commit named with 22 digits or more sorts among older versions' files and is not seen:
// the listing a snapshot was first read from (ListLog) refuses one anywhere in the log; one
// written since is the window of docs/design.md. The protocol (PROTOCOL.md, "Last
// Checkpoint File") and Spark (listFrom) find the commits after a version by a listing from
// its 20-digit name, which sees fewer spellings than this one.
func (s *Snapshot) AdvanceTail(ctx context.Context, store storage.Store) (*Snapshot, bool, error) {
	dl, ok := store.(storage.DirLister)
	if !ok {
		return s.Advance(ctx, store)
	}
	tail, err := listTail(ctx, dl, s.Version)
	if errors.Is(err, errors.ErrUnsupported) {
		return s.Advance(ctx, store)
	}
	if err != nil {
		return nil, false, fmt.Errorf("listing the log of %s: %w", s.Location, err)
	}
	for i := 1; i < len(tail.commits); i++ {
		if a, b := tail.commits[i-1], tail.commits[i]; a.Version == b.Version {
			return nil, false, fmt.Errorf("%w: %s: two commit files claim version %d (%s and %s); remove the one that is not the table's", ErrCorrupt, s.Location, a.Version, a.Key, b.Key)
		}
	}
	for _, c := range tail.commits {
		if storage.Base(c.Key) != commitName(c.Version) {
			return nil, false, errMisnamed(s.Location, c.Key, c.Version)
		}
	}
	seg := &Segment{AllCommits: tail.commits}
	was, wasListed := s.Segment.commitFile(s.Version)
	now, nowListed := seg.commitFile(s.Version)
	if !wasListed || !nowListed {
		return s.Advance(ctx, store) // cleaned up, replaced, or read from a checkpoint alone: decide on the whole log
	}
	if !sameCommitFile(was, now) {
		return nil, false, fmt.Errorf("%w: %s: commit %d is not the file read before (%d bytes, modified %s; now %d bytes, modified %s): the log was replaced or restored from another copy since; run again",
			ErrCorrupt, s.Location, s.Version, was.Size, was.ModTime.UTC().Format(time.RFC3339), now.Size, now.ModTime.UTC().Format(time.RFC3339))
	}
	n := s
	next := s.Version + 1
	for _, c := range tail.commits {
		if c.Version < next {
			continue
		}
		if c.Version != next {
			break
		}
		if n, err = n.apply(ctx, store, c); err != nil {
			return nil, false, err
		}
		next++
	}
	if next <= tail.newest {
		return s.Advance(ctx, store) // a gap: the whole log says what it is
	}
	if tail.wide {
		// The 21-digit names of the versions read and of the next one, which the listing
		// did not reach.
		for w := s.Version + 1; w <= next; w++ {
			key := Padded21CommitKey(w)
			switch _, err := store.Stat(ctx, key); {
			case err == nil:
				return nil, false, errMisnamed(s.Location, key, w)
			case !errors.Is(err, storage.ErrNotExist):
				return nil, false, fmt.Errorf("listing the log of %s: %w", s.Location, err)
			}
		}
	}
	if n == s {
		c := *s
		n = &c
	}
	seg2 := *n.Segment
	if err := tail.subdirs(ctx, store, &seg2); err != nil {
		return nil, false, err
	}
	n.Segment = &seg2
	return n, false, nil
}

// errMisnamed is the refusal of a commit file of version v at key, named otherwise than Delta
// writers name it.
func errMisnamed(location, key string, v int64) error {
	return fmt.Errorf("%w: %s: the commit file %s is not named as Delta writers name version %d (%s); rename it, or remove it if it duplicates that commit", ErrCorrupt, location, key, v, commitName(v))
}

// logTail is what a listing of _delta_log/ from a version's name on showed.
type logTail struct {
	commits        []LogFile // in version order
	newest         int64     // the newest version a commit or checkpoint is named for
	staged, coords bool      // _staged_commits/ and _commits/ are listed
	// wide: the listing started at the 20-digit name, and did not see the 21-digit names.
	wide bool
}

// listTail lists _delta_log/ from version v's 21-digit name on (its 20-digit name for
// version 0, whose 21-digit name sorts after it), to the end: the commits of v and after, and
// every commit file named otherwise (21 digits, fewer leading zeros) of a version from v on,
// which AdvanceTail refuses. The files of older versions named between the two spellings (a
// version of one digit fewer) are skipped; when they fill the first page (a long log just past
// a power of ten), the listing starts again at the 20-digit name, and the 21-digit names of
// the versions after v are asked for one by one (wide).
func listTail(ctx context.Context, dl storage.DirLister, v int64) (*logTail, error) {
	t := &logTail{newest: -1}
	from, from20 := TailStart(v)
	last := ""
	for page := 0; ; page++ {
		more, err := dl.ListDir(ctx, LogDir, from, 0, func(o storage.Object) error {
			name := o.Name()
			if name <= last && last != "" {
				return nil // the name the page started at, seen on the page before
			}
			last = name
			if o.IsDir {
				switch o.Key {
				case LogDir + "_staged_commits/":
					t.staged = true
				case LogDir + "_commits/":
					t.coords = true
				}
				return nil
			}
			lf := ParseLogName(name)
			lf.Key, lf.Size, lf.ModTime = o.Key, o.Size, o.ModTime
			switch lf.Kind {
			case KindCommit:
				if o.IsLink {
					return fmt.Errorf("%w: %s is not a commit file", ErrCorrupt, o.Key)
				}
				if lf.Version < v && name == commitName(lf.Version) {
					return nil // an older version's, between the two spellings
				}
				t.commits = append(t.commits, lf)
				t.newest = max(t.newest, lf.Version)
			case KindClassicCheckpoint, KindMultiPartCheckpoint, KindUUIDCheckpoint:
				if lf.Version >= v {
					t.newest = max(t.newest, lf.Version)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if !more || last == "" {
			break
		}
		if page == 0 && last < from20 {
			t.wide = true
			from, last = from20, ""
			continue
		}
		from = last + "\x00" // the first name after last
	}
	slices.SortStableFunc(t.commits, func(a, b LogFile) int { return cmp.Compare(a.Version, b.Version) })
	return t, nil
}

// subdirs looks into the staged and coordinated commits' folders the listing showed, as
// ListLog does, and says what they hold in seg.
func (t *logTail) subdirs(ctx context.Context, store storage.Store, seg *Segment) error {
	seg.StagedCommits, seg.UnbackfilledCommits = false, false
	if t.staged {
		staged, err := hasStagedCommits(ctx, store)
		if err != nil {
			return err
		}
		seg.StagedCommits = staged
	}
	if t.coords {
		unbackfilled, err := hasUnbackfilledCommits(ctx, store, seg.Version, -1)
		if err != nil {
			return err
		}
		seg.UnbackfilledCommits = unbackfilled
	}
	return nil
}

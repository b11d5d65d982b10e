package deltalog

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Segment is what a snapshot is built from: the newest complete checkpoint (if any) and the
// commits after it, plus every commit the listing found (for timestamps and history).
type Segment struct {
	// Version is the latest version of the table.
	Version int64
	// Checkpoint holds the files of the checkpoint used (one file, or every part of a multi-part
	// checkpoint); empty when replay starts from commit 0.
	Checkpoint []LogFile
	// CheckpointVersion is the version of Checkpoint, -1 without one.
	CheckpointVersion int64
	// Commits are the commits after the checkpoint, in version order, without gaps.
	Commits []LogFile
	// AllCommits are all commit files present in the log, in version order (there may be gaps
	// before the checkpoint, where old commits were cleaned up).
	AllCommits []LogFile
	// StagedCommits is true when _delta_log/_staged_commits/ holds files.
	StagedCommits bool
	// UnbackfilledCommits is true when _delta_log/_commits/ (coordinated commits) holds a
	// commit newer than the latest version in _delta_log/.
	UnbackfilledCommits bool
}

// ListLog lists _delta_log/ and returns the segment for the latest version. It refuses a table
// without a log, a gap in the commits after the checkpoint, and a log that starts after 0
// without a checkpoint to start from.
func ListLog(ctx context.Context, store storage.Store) (*Segment, error) {
	return listLog(ctx, store, -1)
}

// ListLogAt is ListLog for a version at most maxVersion (for reading an older snapshot).
func ListLogAt(ctx context.Context, store storage.Store, maxVersion int64) (*Segment, error) {
	return listLog(ctx, store, maxVersion)
}

func listLog(ctx context.Context, store storage.Store, maxVersion int64) (*Segment, error) {
	seg := &Segment{Version: -1, CheckpointVersion: -1}
	checkpoints := map[int64][]LogFile{}
	stagedDir, commitsDir := false, false
	err := store.Walk(ctx, LogDir, func(o storage.Object) error {
		if o.IsDir {
			switch o.Key {
			case LogDir + "_staged_commits/":
				stagedDir = true
			case LogDir + "_commits/":
				commitsDir = true
			}
			return storage.SkipDir
		}
		lf := ParseLogName(o.Name())
		lf.Key, lf.Size, lf.ModTime = o.Key, o.Size, o.ModTime
		if maxVersion >= 0 && lf.Version > maxVersion && lf.Kind != KindLastCheckpoint {
			return nil
		}
		switch lf.Kind {
		case KindCommit:
			seg.AllCommits = append(seg.AllCommits, lf)
		case KindClassicCheckpoint, KindMultiPartCheckpoint, KindUUIDCheckpoint:
			checkpoints[lf.Version] = append(checkpoints[lf.Version], lf)
		}
		return nil
	})
	if errors.Is(err, storage.ErrNotExist) {
		return nil, &NotTableError{Location: store.Location(), Detail: "it has no _delta_log directory"}
	}
	if err != nil {
		return nil, fmt.Errorf("listing the log of %s: %w", store.Location(), err)
	}
	if stagedDir {
		err := store.Walk(ctx, LogDir+"_staged_commits/", func(o storage.Object) error {
			if !o.IsDir {
				seg.StagedCommits = true
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) && !errors.Is(err, storage.ErrNotExist) {
			return nil, fmt.Errorf("listing the staged commits of %s: %w", store.Location(), err)
		}
	}
	sort.Slice(seg.AllCommits, func(i, j int) bool { return seg.AllCommits[i].Version < seg.AllCommits[j].Version })
	for i := 1; i < len(seg.AllCommits); i++ {
		if a, b := seg.AllCommits[i-1], seg.AllCommits[i]; a.Version == b.Version {
			// 1.json beside 00000000000000000001.json: Spark's \d+\.json reads both as
			// version 1. Which one is the table's cannot be known.
			return nil, fmt.Errorf("%w: %s: two commit files claim version %d (%s and %s); remove the one that is not the table's", ErrCorrupt, store.Location(), a.Version, a.Key, b.Key)
		}
	}
	for _, c := range seg.AllCommits {
		seg.Version = max(seg.Version, c.Version)
	}
	for v := range checkpoints {
		seg.Version = max(seg.Version, v)
	}
	if commitsDir {
		// Unbackfilled coordinated commits are named <version>.<uuid>.json.
		err := store.Walk(ctx, LogDir+"_commits/", func(o storage.Object) error {
			if o.IsDir {
				return storage.SkipDir
			}
			name, _, _ := strings.Cut(o.Name(), ".")
			if v, ok := parseVersion(name); ok && v > seg.Version && (maxVersion < 0 || v <= maxVersion) {
				seg.UnbackfilledCommits = true
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) && !errors.Is(err, storage.ErrNotExist) {
			return nil, fmt.Errorf("listing the coordinated commits of %s: %w", store.Location(), err)
		}
	}
	if seg.Version < 0 {
		return nil, &NotTableError{Location: store.Location(), Detail: "_delta_log holds no commit and no checkpoint"}
	}
	// The newest complete checkpoint.
	var versions []int64
	for v := range checkpoints {
		versions = append(versions, v)
	}
	sort.Slice(versions, func(i, j int) bool { return versions[i] > versions[j] })
	for _, v := range versions {
		if cp := completeCheckpoint(checkpoints[v]); cp != nil {
			seg.Checkpoint, seg.CheckpointVersion = cp, v
			break
		}
	}
	next := seg.CheckpointVersion + 1
	for _, c := range seg.AllCommits {
		if c.Version < next {
			continue
		}
		if c.Version != next {
			return nil, missing(store, next, seg)
		}
		seg.Commits = append(seg.Commits, c)
		next++
	}
	if next <= seg.Version {
		return nil, missing(store, next, seg)
	}
	return seg, nil
}

var errStop = errors.New("stop")

func missing(store storage.Store, v int64, seg *Segment) error {
	if seg.CheckpointVersion < 0 && v == 0 {
		return fmt.Errorf("%w: %s: commit 0 is missing and there is no checkpoint to start from (the log was cleaned up or copied incompletely); the table state cannot be known", ErrMissingVersion, store.Location())
	}
	return fmt.Errorf("%w: %s: version %d is missing from _delta_log (latest is %d); the table state cannot be known, so nothing is deleted", ErrMissingVersion, store.Location(), v, seg.Version)
}

// completeCheckpoint picks a usable checkpoint among the files of one version: a classic or
// UUID-named file, or a multi-part set with every part present.
func completeCheckpoint(files []LogFile) []LogFile {
	sort.Slice(files, func(i, j int) bool { return files[i].Key < files[j].Key })
	// Prefer V2 (UUID) checkpoints, then classic, then multi-part.
	for _, kind := range []FileKind{KindUUIDCheckpoint, KindClassicCheckpoint} {
		for _, f := range files {
			if f.Kind == kind {
				return []LogFile{f}
			}
		}
	}
	byParts := map[int]map[int]LogFile{}
	for _, f := range files {
		if f.Kind != KindMultiPartCheckpoint {
			continue
		}
		if byParts[f.Parts] == nil {
			byParts[f.Parts] = map[int]LogFile{}
		}
		byParts[f.Parts][f.Part] = f
	}
	var counts []int
	for n := range byParts {
		counts = append(counts, n)
	}
	sort.Ints(counts)
	for _, n := range counts {
		if len(byParts[n]) != n {
			continue
		}
		parts := make([]LogFile, 0, n)
		for p := 1; p <= n; p++ {
			parts = append(parts, byParts[n][p])
		}
		return parts
	}
	return nil
}

// isSidecarKey reports whether a key lies in _delta_log/_sidecars/.
func isSidecarKey(key string) bool { return strings.HasPrefix(key, LogDir+"_sidecars/") }

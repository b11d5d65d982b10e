package deltalog

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Segment is what a snapshot is built from: the newest usable checkpoint (if any) and the
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
	// Others are the names of the other files the listing found in _delta_log/ (a
	// converter's conversion log, say), at most maxOthers of them, sorted as listed.
	Others []string
}

// maxOthers bounds Segment.Others: a log full of stray files costs no memory.
const maxOthers = 1000

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

// walkLevel walks the directory prefix without its subdirectories, which fn skips: on a store
// whose listing holds many directories a page, their contents are not even listed.
func walkLevel(ctx context.Context, store storage.Store, prefix string, fn func(storage.Object) error) error {
	if pw, ok := store.(storage.PrunedWalker); ok {
		return pw.WalkPruned(ctx, prefix, func(string) bool { return true }, fn)
	}
	return store.Walk(ctx, prefix, fn)
}

func listLog(ctx context.Context, store storage.Store, maxVersion int64) (*Segment, error) {
	seg := &Segment{Version: -1, CheckpointVersion: -1}
	checkpoints := map[int64][]LogFile{}
	var unusable []unusableCheckpoint // the checkpoints that cannot be used, for a refusal
	var oddCommits []LogFile          // commits not named by their 20-digit version
	stagedDir, commitsDir := false, false
	err := walkLevel(ctx, store, LogDir, func(o storage.Object) error {
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
			if o.Name() != commitName(lf.Version) {
				oddCommits = append(oddCommits, lf)
			}
			seg.AllCommits = append(seg.AllCommits, lf)
		case KindClassicCheckpoint, KindMultiPartCheckpoint, KindUUIDCheckpoint:
			if lf.Size == 0 {
				// A checkpoint file of 0 bytes holds nothing, not even the protocol: a writer
				// that crashed after creating it, a failed copy. Spark drops such files before
				// choosing a checkpoint ("Checkpoint files of 0 size are invalid but Spark will
				// ignore them silently", Checkpoints.scala); so does this reader, for every
				// kind: the version is then read from the commits or an older checkpoint, and
				// an empty part leaves its multi-part set incomplete. Its name still says that
				// its version was committed (a checkpoint is written after its commit), so the
				// version counts toward the latest: should its commit be missing too, the gap is
				// refused rather than the table read at an older version.
				unusable = append(unusable, unusableCheckpoint{lf.Version, lf.Key + " is empty (0 bytes)", false})
				seg.Version = max(seg.Version, lf.Version)
				return nil
			}
			checkpoints[lf.Version] = append(checkpoints[lf.Version], lf)
		case KindUnknownFile:
			if len(seg.Others) < maxOthers {
				seg.Others = append(seg.Others, o.Name())
			}
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
		if seg.StagedCommits, err = hasStagedCommits(ctx, store); err != nil {
			return nil, err
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
	if len(oddCommits) > 0 {
		// Spark's \d+\.json reads 7.json, or 21 digits, as a version, but every writer names a
		// commit by its version in 20 digits, the only name a put-if-absent of the next commit
		// contends for (and the name the re-check during a run looks for): another spelling
		// is a broken or foreign writer's, a commit under it could be missed, and so the log is
		// refused.
		c := oddCommits[0]
		return nil, errMisnamed(store.Location(), c.Key, c.Version)
	}
	for _, c := range seg.AllCommits {
		seg.Version = max(seg.Version, c.Version)
	}
	for v := range checkpoints {
		seg.Version = max(seg.Version, v)
	}
	if commitsDir {
		if seg.UnbackfilledCommits, err = hasUnbackfilledCommits(ctx, store, seg.Version, maxVersion); err != nil {
			return nil, err
		}
	}
	if seg.Version < 0 {
		return nil, &NotTableError{Location: store.Location(), Detail: "_delta_log holds no commit and no checkpoint"}
	}
	// The newest usable checkpoint (completeCheckpoint).
	var versions []int64
	for v := range checkpoints {
		versions = append(versions, v)
	}
	sort.Slice(versions, func(i, j int) bool { return versions[i] > versions[j] })
	for _, v := range versions {
		cp, rejected := completeCheckpoint(checkpoints[v])
		unusable = append(unusable, rejected...)
		if cp != nil {
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
			return nil, missing(store, next, seg, unusable)
		}
		seg.Commits = append(seg.Commits, c)
		next++
	}
	if next <= seg.Version {
		return nil, missing(store, next, seg, unusable)
	}
	return seg, nil
}

// unusableCheckpoint is a checkpoint the listing found but could not use, kept to explain a
// refusal: when the commits it would have replaced are gone, it is the reason the table state
// cannot be known.
type unusableCheckpoint struct {
	version int64
	why     string
	// ambiguous marks files that contradict each other (two claims on one part or one
	// classic checkpoint): a corrupt log, not just an unfinished checkpoint.
	ambiguous bool
}

var errStop = errors.New("stop")

func missing(store storage.Store, v int64, seg *Segment, unusable []unusableCheckpoint) error {
	var err error
	if seg.CheckpointVersion < 0 && v == 0 {
		err = fmt.Errorf("%w: %s: commit 0 is missing and there is no checkpoint to start from (the log was cleaned up or copied incompletely); the table state cannot be known", ErrMissingVersion, store.Location())
	} else {
		err = fmt.Errorf("%w: %s: version %d is missing from _delta_log (latest is %d); the table state cannot be known, so nothing is deleted", ErrMissingVersion, store.Location(), v, seg.Version)
	}
	// The checkpoints newer than the gap that could not be used are why the gap matters.
	var why []string
	ambiguous := false
	for _, u := range unusable {
		if u.version >= v {
			why = append(why, u.why)
			ambiguous = ambiguous || u.ambiguous
		}
	}
	if len(why) == 0 {
		return err
	}
	err = fmt.Errorf("%w; the checkpoints that would replace the missing commits cannot be used: %s", err, strings.Join(why, "; "))
	if ambiguous {
		err = fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return err
}

// completeCheckpoint picks a usable checkpoint among the files of one version, and says why
// the others cannot be used. The files are grouped by checkpoint instance, as Spark does
// (Checkpoints.getLatestCompleteCheckpointFromList): each UUID-named file is an instance of
// its own; the classic name is one instance, which must be claimed by exactly one file; a
// multi-part checkpoint of n parts is one instance, which must be exactly n files, parts 1 to
// n once each. Two files claiming one classic checkpoint or one part (1.checkpoint.parquet
// beside 00000000000000000001.checkpoint.parquet, .1.2.parquet beside
// .0000000001.0000000002.parquet) contradict each other, and which one is the table's cannot
// be known: that instance is not used, never one of its files picked silently. A multi-part
// set with a part missing is an unfinished checkpoint, which readers must ignore (PROTOCOL.md).
// Among the usable instances V2 (UUID) is preferred, then classic, then multi-part with the
// fewest parts.
func completeCheckpoint(files []LogFile) ([]LogFile, []unusableCheckpoint) {
	sort.Slice(files, func(i, j int) bool { return files[i].Key < files[j].Key })
	var rejected []unusableCheckpoint
	var uuid, classic []LogFile
	byParts := map[int][]LogFile{}
	for _, f := range files {
		switch f.Kind {
		case KindUUIDCheckpoint:
			uuid = append(uuid, f)
		case KindClassicCheckpoint:
			classic = append(classic, f)
		case KindMultiPartCheckpoint:
			byParts[f.Parts] = append(byParts[f.Parts], f)
		}
	}
	var chosen []LogFile
	if len(uuid) > 0 {
		chosen = uuid[:1]
	}
	switch {
	case len(classic) > 1:
		rejected = append(rejected, unusableCheckpoint{classic[0].Version,
			fmt.Sprintf("%d files claim the classic checkpoint of version %d (%s)", len(classic), classic[0].Version, keysOf(classic)), true})
	case len(classic) == 1 && chosen == nil:
		chosen = classic
	}
	var counts []int
	for n := range byParts {
		counts = append(counts, n)
	}
	sort.Ints(counts)
	for _, n := range counts {
		set := byParts[n]
		byPart := make(map[int][]LogFile, n)
		for _, f := range set {
			byPart[f.Part] = append(byPart[f.Part], f)
		}
		var twice, absent []string
		for p := 1; p <= n; p++ {
			switch len(byPart[p]) {
			case 0:
				absent = append(absent, strconv.Itoa(p))
			case 1:
			default:
				twice = append(twice, fmt.Sprintf("part %d by %s", p, keysOf(byPart[p])))
			}
		}
		v := set[0].Version
		switch {
		case len(twice) > 0:
			rejected = append(rejected, unusableCheckpoint{v,
				fmt.Sprintf("the %d-part checkpoint of version %d has %d files for %d parts, two claiming one part (%s)", n, v, len(set), n, strings.Join(twice, "; ")), true})
		case len(absent) > 0:
			rejected = append(rejected, unusableCheckpoint{v,
				fmt.Sprintf("the %d-part checkpoint of version %d lacks part %s", n, v, strings.Join(absent, ", ")), false})
		case chosen == nil:
			chosen = make([]LogFile, 0, n)
			for p := 1; p <= n; p++ {
				chosen = append(chosen, byPart[p][0])
			}
		}
	}
	return chosen, rejected
}

// keysOf lists the keys of files, for a message.
func keysOf(files []LogFile) string {
	keys := make([]string, len(files))
	for i, f := range files {
		keys[i] = f.Key
	}
	return strings.Join(keys, " and ")
}

// hasStagedCommits reports whether _delta_log/_staged_commits/ holds a file.
func hasStagedCommits(ctx context.Context, store storage.Store) (bool, error) {
	found := false
	err := store.Walk(ctx, LogDir+"_staged_commits/", func(o storage.Object) error {
		if !o.IsDir {
			found = true
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) && !errors.Is(err, storage.ErrNotExist) {
		return false, fmt.Errorf("listing the staged commits of %s: %w", store.Location(), err)
	}
	return found, nil
}

// hasUnbackfilledCommits reports whether _delta_log/_commits/ (coordinated commits, named
// <version>.<uuid>.json) holds a commit newer than version (and at most maxVersion, when
// that is not negative).
func hasUnbackfilledCommits(ctx context.Context, store storage.Store, version, maxVersion int64) (bool, error) {
	found := false
	err := store.Walk(ctx, LogDir+"_commits/", func(o storage.Object) error {
		if o.IsDir {
			return storage.SkipDir
		}
		name, _, _ := strings.Cut(o.Name(), ".")
		if v, ok := parseVersion(name); ok && v > version && (maxVersion < 0 || v <= maxVersion) {
			found = true
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) && !errors.Is(err, storage.ErrNotExist) {
		return false, fmt.Errorf("listing the coordinated commits of %s: %w", store.Location(), err)
	}
	return found, nil
}

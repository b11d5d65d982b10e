package vacuum

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// Shard is one part of a table that N workers vacuum together (--shard I/N): each plans and
// deletes only the top-level entries of the table that ShardOf assigns to Index, at one pinned
// snapshot version (Options.Version), so that the N plans together are the plan of one run.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// MaxShardCount is the largest number of shards: the completions limit of a Kubernetes
// Indexed Job. More workers than that only multiply the log replays (each worker reads the
// whole snapshot).
const MaxShardCount = 100000

// String is the shard as --shard takes it: "I/N".
func (s Shard) String() string { return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count) }

// Check refuses a shard that no set of workers can cover the table with.
func (s Shard) Check() error {
	switch {
	case s.Count < 1:
		return fmt.Errorf("shard %s: the number of shards must be at least 1", s)
	case s.Count > MaxShardCount:
		return fmt.Errorf("shard %s: at most %d shards", s, MaxShardCount)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("shard %s: the index must be from 0 to %d (shards are numbered from 0, as JOB_COMPLETION_INDEX is)", s, s.Count-1)
	}
	return nil
}

// ParseShard reads "I/N" (two decimal integers, 0 <= I < N <= MaxShardCount).
func ParseShard(text string) (Shard, error) {
	is, ns, ok := strings.Cut(text, "/")
	bad := func(why string) (Shard, error) {
		return Shard{}, fmt.Errorf("shard %q: %s; write INDEX/COUNT, such as 0/4 for the first of 4 workers", text, why)
	}
	if !ok || strings.Contains(ns, "/") {
		return bad("not of the form INDEX/COUNT")
	}
	if !digits(is) {
		return bad("the index is not a whole number (an unset $JOB_COMPLETION_INDEX?)")
	}
	if !digits(ns) {
		return bad("the count is not a whole number")
	}
	i, ierr := strconv.Atoi(is)
	n, nerr := strconv.Atoi(ns)
	if ierr != nil || nerr != nil || n > MaxShardCount {
		return bad(fmt.Sprintf("at most %d shards", MaxShardCount))
	}
	s := Shard{Index: i, Count: n}
	return s, s.Check()
}

// digits reports whether s is one or more ASCII digits (no sign, no space).
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ShardOf returns the shard, of count, that the table-relative key belongs to. It is a pure
// function of the key's first component (the top-level folder, or a root file's own name), so
// that a top-level folder (a partition) belongs wholly to one shard, with its empty folders,
// nested tables and checksum companions:
//
//   - the component is folded (fold: Unicode case folding of the NFC form; for ASCII, lower
//     case), so that two spellings one file system takes for one name go to one shard, where
//     the planner keeps a file whose folded key is a protected one;
//   - the folded component of a Hadoop checksum companion ".x.crc" is x, so that it goes with
//     x (folded first, so that ".X.crc" and ".x.CRC", one name where cases fold, agree);
//   - the shard is FNV-1a 64 of that component's bytes, modulo count.
//
// The function is part of the format: workers of one run must agree on it, so it does not
// change for ASCII names (once only, for a first component ending in an upper-case ".CRC",
// which went by its whole name before; for other names it follows the Unicode tables of
// golang.org/x/text): run the workers of one run with one deltavacuum version.
func ShardOf(key string, count int) int {
	if count <= 1 {
		return 0
	}
	first, _, _ := strings.Cut(key, "/")
	first = fold(first) // first: ".X.CRC" is ".x.crc", a companion as ".X.crc" is
	if name, ok := checksumOf(first); ok {
		first = name
	}
	return int(fnv1a64(first) % uint64(count))
}

// fnv1a64 is FNV-1a 64 (hash/fnv's New64a) of the bytes of s, without allocating: it runs for
// every key of the snapshot in a sharded run.
func fnv1a64(s string) uint64 {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime64
	}
	return h
}

// Owns reports whether key belongs to the shard; a nil shard (a run of the whole table) owns
// every key, and so does every shard the root ("").
func (s *Shard) Owns(key string) bool {
	return s == nil || key == "" || ShardOf(key, s.Count) == s.Index
}

// ErrShardWithoutVersion refuses a shard without a pinned version.
var ErrShardWithoutVersion = errors.New("a sharded run needs a pinned snapshot version (--version V): every worker must plan on the same snapshot, or the shards together may not be one run. Read the latest version once (deltavacuum history TABLE --limit 1) and pass it to every worker")

// ShardLinkError refuses a sharded run of a table with a symbolic link into itself: the log may
// name live files through the link while the listing sees them under their real names in
// another shard, which cannot tell.
type ShardLinkError struct {
	Table, Link string
}

func (e *ShardLinkError) Error() string {
	return fmt.Sprintf("table %s: %s is a symbolic link to a place inside the table: a sharded run cannot tell whether the log names live files through it "+
		"(the files below it are listed under their real names, maybe in another shard). Nothing was deleted. Vacuum this table without --shard", e.Table, e.Link)
}

// shardWalker is the listing of one shard: the entries of other shards are never given to the
// planner, and their folders are not listed. On local disk (links set), where a symbolic link
// in one shard's folders can give live files of another shard a second name, the other
// shards' folders are then listed too, though not planned, and a symbolic link into the table
// anywhere refuses the run, in every shard alike.
type shardWalker struct {
	w      Walker
	shard  *Shard
	links  bool
	hidden func(name string) bool
	table  string
}

func (s shardWalker) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	var others []string // top-level folders of other shards, for links
	err := s.w.Walk(ctx, prefix, func(o storage.Object) error {
		if s.links && o.IsLink && o.LinkIntoStore {
			return &ShardLinkError{Table: s.table, Link: o.Key}
		}
		if s.shard.Owns(o.Key) {
			return fn(o)
		}
		if o.IsDir {
			if s.links && !s.hidden(o.Name()) {
				others = append(others, o.Key)
			}
			return storage.SkipDir
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, dir := range others {
		if err := s.scanLinks(ctx, dir); err != nil {
			return err
		}
	}
	return nil
}

// maxVanished bounds the listings of one folder of another shard, each cut short by a folder
// that vanished under it.
const maxVanished = 10

// scanLinks lists a folder of another shard for symbolic links into the table. The other
// shard's worker may be deleting in it meanwhile: a folder that vanishes under the listing was
// deleted as empty (a folder that holds a link is not empty; no shard deletes a link into the
// table, each refuses it), so the listing starts again, and a folder gone before any entry
// was listed holds nothing.
func (s shardWalker) scanLinks(ctx context.Context, dir string) error {
	for range maxVanished {
		seen := false
		err := s.w.Walk(ctx, dir, func(o storage.Object) error {
			seen = true
			if o.IsLink && o.LinkIntoStore {
				return &ShardLinkError{Table: s.table, Link: o.Key}
			}
			if o.IsDir && s.hidden(o.Name()) {
				return storage.SkipDir
			}
			return nil
		})
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, storage.ErrNotExist) {
			return err
		}
		if !seen {
			return nil
		}
	}
	return fmt.Errorf("listing %s of table %s for symbolic links: its folders vanished under the listing %d times; nothing was deleted, run again", dir, s.table, maxVanished)
}

// shardWalk wraps the listing of a sharded plan (walker itself when the run is not sharded).
func (p *Planner) shardWalk(walker Walker, isStore bool) Walker {
	if p.opts.Shard == nil {
		return walker
	}
	return shardWalker{w: walker, shard: p.opts.Shard, table: p.snap.Location, hidden: p.hidden.hidden,
		links: isStore && strings.HasPrefix(p.snap.Location, "file:")}
}

// loadSnapshot reads the snapshot a plan is made on: the latest, or version *v.
func loadSnapshot(ctx context.Context, store storage.Store, v *int64) (*deltalog.Snapshot, error) {
	if v == nil {
		return deltalog.Load(ctx, store)
	}
	seg, err := deltalog.ListLogAt(ctx, store, *v)
	if err == nil && seg.Version == *v {
		return deltalog.LoadSegment(ctx, store, seg)
	}
	latest, lerr := deltalog.ListLog(ctx, store)
	if lerr != nil {
		return nil, lerr // not a table, or a log that cannot be read at all
	}
	if latest.Version < *v {
		return nil, fmt.Errorf("table %s: version %d does not exist: the latest version is %d", store.Location(), *v, latest.Version)
	}
	why := fmt.Sprintf("commit %d is not in the log", *v)
	if err != nil {
		why = err.Error()
	}
	return nil, fmt.Errorf("table %s: version %d can no longer be read (the log before the oldest checkpoint was cleaned up, or is incomplete): %s. Pin a version at or after the oldest checkpoint, such as the latest (%d)",
		store.Location(), *v, why, latest.Version)
}

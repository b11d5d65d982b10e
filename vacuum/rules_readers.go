package vacuum

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// The readers' rule (section 15): a reader pins a version V, and needs every snapshot from V
// to the newest. A file a commit after V names (its adds and removes, their deletion vectors,
// its change data) is kept, whatever its age and the retention; a file removed at or before V
// follows the retention as before. Every file live at V is still live or was removed after V,
// so the commits after V name all a reader needs: nothing older is read. A reader may also name
// files it reads outside this table's log (the data files of an Iceberg snapshot whose Delta
// version no converter recorded, the files of a shallow clone) and folders of its own (an
// Iceberg metadata folder), kept whole. The planner applies the rule in FULL, LITE and
// inventory runs alike; the re-check needs nothing more, since a commit made during the run
// only keeps more.

// Kinds of readers.
const (
	ReaderPin       = "pin"       // a pin written by its owner (deltavacuum pin)
	ReaderStreaming = "streaming" // a Structured Streaming query registered for the table
	ReaderIceberg   = "iceberg"   // Iceberg metadata in the table's folder
	ReaderClone     = "clone"     // a shallow clone that names this table's files
)

// Reader is one reader of the table, as its discovery (package run) found or was told of it.
type Reader struct {
	Kind string `json:"kind"`
	// Name says which: a pin's id and reason, a checkpoint's location, a metadata file, a
	// clone's table.
	Name string `json:"name"`
	// Version is the version it pins (it needs every snapshot from it to the newest); nil
	// when it pins none.
	Version *int64 `json:"version,omitempty"`
	// Changes: it reads the changes of Version itself too, not only the snapshots from it (a
	// streaming query whose offset is before or inside that commit's changes: with
	// readChangeFeed it reads the commit's change data, or the files it removed). The files
	// the commit of Version names are kept then, as those of the commits after it.
	Changes bool `json:"readsChangesOfVersion,omitempty"`
	// Until is when it lets go (a pin's end); zero when nothing says.
	Until time.Time `json:"until,omitzero"`
	// Folders are folders of the table (keys ending in '/') it keeps whole: never listed.
	Folders []string `json:"folders,omitempty"`
	// Files, when set, streams the keys (relative to the table root) it reads outside this
	// table's log.
	Files func(ctx context.Context, fn func(key string) error) error `json:"-"`
}

// Describe says who the reader is, for a file it keeps: "the streaming query at … from
// version 812".
func (r Reader) Describe() string {
	what := map[string]string{ReaderPin: "the pin", ReaderStreaming: "the streaming query at", ReaderIceberg: "the Iceberg metadata",
		ReaderClone: "the shallow clone"}[r.Kind]
	if what == "" {
		what = "the reader"
	}
	s := what + " " + r.Name
	if r.Version != nil {
		s += fmt.Sprintf(" from version %d", *r.Version)
	}
	return s
}

// ErrReaderTooOld is matched (errors.Is) by the refusal of a run for a reader that pins a
// version the log no longer holds the commits after, or one beyond the log.
var ErrReaderTooOld = errors.New("a reader's version cannot be honoured")

// maxReaders is how many readers one plan tells apart (a key's readers are a bit set).
const maxReaders = 64

// readerKeys are the keys the readers keep, each with the set of readers that keep it.
type readerKeys struct {
	readers []Reader
	keys    map[uint64]uint64 // key hash -> readers (bit i: readers[i])
	folded  map[uint64]uint64 // folded forms that differ from their key
	folders []string          // keys ending in '/', sorted
	byDir   map[string]int    // folder -> reader
}

// protectReaders reads what the readers of opts keep: the commits after the oldest version
// they pin, each key kept for the readers whose version is older than its commit; the files
// and folders they name. A reader whose version is beyond the log (more than one past the
// newest version: a query reads the next version at most), or whose commits the log no longer
// holds, refuses the run.
func (p *Planner) protectReaders(ctx context.Context) error {
	rs := p.opts.Readers
	if len(rs) == 0 {
		return nil
	}
	if len(rs) > maxReaders {
		return fmt.Errorf("table %s: %d readers, more than the %d one run can tell apart: remove expired pins", p.snap.Location, len(rs), maxReaders)
	}
	k := &readerKeys{readers: rs, keys: map[uint64]uint64{}, folded: map[uint64]uint64{}, byDir: map[string]int{}}
	add := func(key string, mask uint64) {
		if key == "" || !p.opts.Shard.Owns(key) {
			return
		}
		k.keys[p.hash(key)] |= mask
		if f := fold(key); f != key {
			k.folded[p.hash(f)] |= mask
		}
		p.protectAncestors(key)
	}
	oldest, found := int64(0), false // the oldest version whose commit a reader does not read
	latest := p.snap.Version         // the table's latest version, listed again for a shard's reader after its version
	for i, r := range rs {
		for _, dir := range r.Folders {
			if !strings.HasSuffix(dir, "/") || dir == "/" {
				return fmt.Errorf("table %s: %s: folder %q is not a folder key", p.snap.Location, r.Describe(), dir)
			}
			k.folders = append(k.folders, dir)
			k.byDir[dir] = i
		}
		if r.Version == nil {
			continue
		}
		v := *r.Version
		if v > latest+1 && p.opts.Version != nil {
			// A sharded run plans on an older version: a reader after it needs nothing its
			// snapshot and the re-check do not protect already, but one beyond the log lies.
			seg, err := deltalog.ListLog(ctx, p.store)
			if err != nil {
				return err
			}
			latest = max(latest, seg.Version)
		}
		switch {
		case v < 0 || v > latest+1:
			return fmt.Errorf("table %s: %w: %s, but the table's latest version is %d: a reader cannot be there; check it (a pin or checkpoint of another table?)",
				p.snap.Location, ErrReaderTooOld, r.Describe(), latest)
		case r.before() < p.snap.Version && (!found || r.before() < oldest):
			oldest, found = r.before(), true
		}
	}
	sort.Strings(k.folders)
	if found {
		commits := map[int64]deltalog.LogFile{}
		for _, c := range p.snap.Segment.AllCommits {
			commits[c.Version] = c
		}
		for v := oldest + 1; v <= p.snap.Version; v++ {
			mask := uint64(0)
			for i, r := range rs {
				if r.needs(v) {
					mask |= 1 << i
				}
			}
			fn := func(key string) { add(key, mask) }
			if _, _, _, ok, err := p.snap.HeldCommitRefs(v, fn); err != nil {
				return err
			} else if ok {
				continue
			}
			c, ok := commits[v]
			if !ok {
				return fmt.Errorf("table %s: %w: the log no longer holds commit %d, which %s needs (the commits after its version say which files it reads); it can no longer read this table: remove it, or vacuum with a plan that keeps every removed file (RETAIN more hours)",
					p.snap.Location, ErrReaderTooOld, v, readersBefore(rs, v))
			}
			if _, _, err := deltalog.CommitRefs(ctx, p.store, p.snap.Root, c, fn); err != nil {
				return err
			}
		}
	}
	for i, r := range rs {
		if r.Files == nil {
			continue
		}
		if err := r.Files(ctx, func(key string) error { add(key, 1<<i); return nil }); err != nil {
			return fmt.Errorf("table %s: reading what %s reads: %w", p.snap.Location, r.Describe(), err)
		}
	}
	p.readers = k
	return nil
}

// before is the newest version whose commit r does not read: its version, or the one before
// it when it reads the changes of its version (Changes). Only for a reader with a version.
func (r Reader) before() int64 {
	if r.Changes {
		return *r.Version - 1
	}
	return *r.Version
}

// needs reports whether r reads the files the commit of version v names.
func (r Reader) needs(v int64) bool {
	return r.Version != nil && r.before() < v
}

// readersBefore names the readers that read the files the commit of v names.
func readersBefore(rs []Reader, v int64) string {
	var names []string
	for _, r := range rs {
		if r.needs(v) {
			names = append(names, r.Describe())
		}
	}
	return strings.Join(names, ", ")
}

// readBy returns the readers that keep key (hash h), in either spelling (rules_fold.go); 0 when
// none does.
func (p *Planner) readBy(key string, h uint64) uint64 {
	k := p.readers
	if k == nil {
		return 0
	}
	m := k.keys[h]
	fh := h
	if f := fold(key); f != key {
		fh = p.hash(f)
		m |= k.keys[fh]
	}
	return m | k.folded[fh] | k.inFolder(key)
}

// inFolder returns the reader whose folder key is in (a key of the folder itself included).
func (k *readerKeys) inFolder(key string) uint64 {
	for _, dir := range k.folders {
		if strings.HasPrefix(key, dir) || key+"/" == dir {
			return 1 << k.byDir[dir]
		}
	}
	return 0
}

// ReaderKept is a reader a plan honoured, with what it keeps that no other reader does.
type ReaderKept struct {
	Reader
	// NumFilesKept and SizeKept count the files the plan would delete but for this reader
	// alone; NumFilesShared those another reader keeps too.
	NumFilesKept   int64 `json:"numFilesKept"`
	SizeKept       int64 `json:"sizeKept"`
	NumFilesShared int64 `json:"numFilesShared"`
}

// KeptFile is a file the plan would delete but that readers keep.
type KeptFile struct {
	Path             string    `json:"path"`
	Size             int64     `json:"size"`
	ModificationTime time.Time `json:"modificationTime,omitzero"`
	// Reason is what the file would be deleted as.
	Reason Reason `json:"reason"`
	// KeptBy describes the readers that keep it (Reader.Describe), the first of them first.
	KeptBy []string `json:"keptBy"`
}

// readerSummaries are the plan's readers, before anything is counted.
func (p *Planner) readerSummaries() []ReaderKept {
	out := []ReaderKept{}
	if p.readers == nil {
		return out
	}
	for _, r := range p.readers.readers {
		out = append(out, ReaderKept{Reader: r})
	}
	return out
}

// keepForReaders records a file (or a folder's entry) the readers of mask keep, and tells the
// observer.
func (p *Planner) keepForReaders(plan *Plan, o storage.Object, reason Reason, mask uint64) {
	k := p.readers
	f := KeptFile{Path: o.Key, Size: o.Size, ModificationTime: o.ModTime.UTC(), Reason: reason}
	if o.ModTime.IsZero() {
		f.ModificationTime = time.Time{}
	}
	for m := mask; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		f.KeptBy = append(f.KeptBy, k.readers[i].Describe())
		if mask&(mask-1) == 0 {
			plan.Readers[i].NumFilesKept++
			plan.Readers[i].SizeKept += o.Size
		} else {
			plan.Readers[i].NumFilesShared++
		}
	}
	plan.KeptForReaders = append(plan.KeptForReaders, f)
	p.observeRead(o, mask, reason)
}

// observeRead tells the observer that readers keep o.
func (p *Planner) observeRead(o storage.Object, mask uint64, reason Reason) {
	if p.opts.Observe == nil {
		return
	}
	v := Verdict{Object: o, Rule: RuleRead, Reason: reason, NewestRemoval: -1}
	for m := mask; m != 0; m &= m - 1 {
		v.Readers = append(v.Readers, p.readers.readers[bits.TrailingZeros64(m)])
	}
	p.opts.Observe(v)
}

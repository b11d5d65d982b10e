package vacuum

import (
	"context"
	"strings"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// The protected set (section 6): a path is protected when a live add names it, or a
// tombstone inside the retention, or a deletion vector of either; in every reading of the
// path the log allows (deltalog.File.OtherKeys, section 7) and every spelling one file system
// takes for one name (rules_fold.go); and every folder above such a path is protected too.
// FULL, LITE and the inventory keep what it holds; the re-check keeps what newer commits name.

// tombstoneExpired is the tombstone rule: a remove protects its file (and its deletion vector)
// while its deletionTimestamp (ms; a missing one counts as 0) is at or after the cutoff; it
// no longer does once it is before it.
func tombstoneExpired(deletionTimestamp, cutoffMs int64) bool { return deletionTimestamp < cutoffMs }

// protect streams the snapshot's file actions into the protected sets. Every path is decoded
// here, so a bad log path refuses the run before anything is listed.
func (p *Planner) protect(ctx context.Context) error {
	p.keepDir = newKeySet()
	cutoffMs := p.cutoff.UnixMilli()
	// Which keys are protected needs no sizes; only LITE telling an observer of the log's files
	// reports them (the checkpoint's size columns are then read too).
	files := p.snap.FileKeys
	if p.logFiles != nil {
		files = p.snap.Files
	}
	err := files(ctx, p.store, func(f deltalog.File) error {
		live := !f.Removed || !tombstoneExpired(f.DeletionTimestamp, cutoffMs)
		mark := func(key string) {
			if key == "" || !p.opts.Shard.Owns(key) {
				return // another shard's: never listed here (shard.go)
			}
			if !live {
				p.expired.add(p.hash(key), f.DeletionTimestamp)
				return
			}
			h := p.hash(key)
			if p.opts.Observe != nil {
				kind := protectLive
				if f.Removed {
					kind = protectRetained
				}
				if key == f.DVKey && key != f.Key {
					kind++ // the DV variant of either
				}
				p.why.add(h, kind, f.DeletionTimestamp) // and keep is made from it (seal)
				if p.logFiles != nil {
					p.logFiles.note(h, key, f) // LITE tells the observer of the log's files
				}
			} else {
				p.keep.add(h)
			}
			p.protectFolded(key)
			p.protectAncestors(key)
		}
		mark(f.Key)
		mark(f.DVKey)
		for _, key := range f.OtherKeys {
			mark(key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if p.opts.Observe != nil {
		p.keep = p.why.seal()
	} else {
		p.keep.seal()
	}
	p.keepFolded.seal()
	p.expired.seal()
	return nil
}

// protectAncestors protects every folder above a protected key.
func (p *Planner) protectAncestors(key string) {
	for i := strings.LastIndexByte(key, '/'); i > 0; i = strings.LastIndexByte(key[:i], '/') {
		if !p.keepDir.add(p.hash(key[:i+1])) {
			return // this ancestor, and so all above it, already protected
		}
	}
}

// protected reports whether the log protects key itself, in this spelling or a folded one.
func (p *Planner) protected(key string) bool {
	return p.keep.has(p.hash(key)) || p.keptByFold(key)
}

// pathBelow reports whether a protected path passes through the folder key folder (ending in
// '/'): a listed file of that name (folder without its '/') is a symbolic link to a folder, or
// an object store's key that is a prefix too, and deleting it would make every protected file
// below it unreachable; a directory of that name is never empty of what the log needs.
func (p *Planner) pathBelow(folder string) bool { return p.keepDir.has(p.hash(folder)) }

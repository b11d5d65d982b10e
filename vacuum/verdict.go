package vacuum

import (
	"cmp"
	"slices"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Rule names the rule of the planner that decided one listed entry. The plan records only what
// it deletes; an Observer (Options.Observe) is told the rule of every entry, from the same
// decision the plan is made of, so that inspection and explanation never reimplement it.
type Rule string

// The rules, in the order the planner applies them to a listed file.
const (
	// RuleHidden: a component of the name is hidden (section 5); never a candidate, and a
	// hidden directory is not descended into.
	RuleHidden Rule = "hidden"
	// RuleNestedTable: inside a folder with a _delta_log of its own, another table.
	RuleNestedTable Rule = "nested_table"
	// RuleDirectory: a directory; it is deleted only when the run leaves it empty (Plan.Dirs).
	RuleDirectory Rule = "directory"
	// RuleLive: a live add names the file.
	RuleLive Rule = "live"
	// RuleLiveDV: the deletion-vector file of a live add.
	RuleLiveDV Rule = "live_deletion_vector"
	// RuleRetained: a remove inside the retention (deletionTimestamp at or after the cutoff)
	// names the file.
	RuleRetained Rule = "tombstone_in_retention"
	// RuleRetainedDV: the deletion-vector file of a remove inside the retention.
	RuleRetainedDV Rule = "deletion_vector_in_retention"
	// RuleTooNew: not protected, but modified at or after the cutoff.
	RuleTooNew Rule = "not_older_than_cutoff"
	// RuleOtherSpelling: a protected key in another spelling of the same file (rules_fold.go).
	RuleOtherSpelling Rule = "protected_in_other_spelling"
	// RuleProtectedBelow: a protected path passes through it (a symbolic link to a folder, a
	// key that is also a folder).
	RuleProtectedBelow Rule = "protected_path_below"
	// RuleRead: not protected by the log and old enough, but a reader of the table still needs
	// it (section 15; rules_readers.go): kept; the Verdict's Readers say which.
	RuleRead Rule = "read_by_reader"
	// RuleUnreferenced: deleted; the Verdict's Reason says as what.
	RuleUnreferenced Rule = "unreferenced"
)

// Verdict is the planner's decision on one listed entry.
type Verdict struct {
	Object storage.Object
	Rule   Rule
	// Reason is what the file is deleted as, now (RuleUnreferenced) or once its protection
	// or its age no longer keeps it (RuleRetained, RuleRetainedDV, RuleTooNew).
	Reason Reason
	// NewestRemoval is the newest deletionTimestamp (ms) of the removes naming the file,
	// inside the retention or not; -1 when no remove names it.
	NewestRemoval int64
	// Readers are the readers that keep the file (RuleRead), the first of them first.
	Readers []Reader
}

// Deletes reports whether the plan deletes the entry. A nested table found later in the walk
// (a verdict RuleNestedTable for a directory above it) takes it back.
func (v Verdict) Deletes() bool { return v.Rule == RuleUnreferenced }

// DeletableAt reports whether a plan made from the same snapshot and listing with the cutoff
// cutoff would delete the file: the protection of a tombstone ends at its deletionTimestamp,
// and age at the modification time, exactly as the planner tests them. A file kept now by a
// live action, a hidden name, a nested table, another spelling or a path through it is kept
// at every cutoff; one deleted now is deleted at every later cutoff. (Two approximations, both
// rare and both on the side of keeping or of reporting: at an earlier cutoff a file in another
// spelling of a tombstone it alone protects again is reported deletable; at a later one a file
// kept for its spelling or a path through it is reported kept.)
func (v Verdict) DeletableAt(cutoff time.Time) bool {
	switch v.Rule {
	case RuleRetained, RuleRetainedDV, RuleTooNew, RuleUnreferenced:
	default:
		return false
	}
	return tombstoneExpired(v.NewestRemoval, cutoff.UnixMilli()) && olderThan(v.Object.ModTime, cutoff)
}

// DeletableFrom is, for a verdict whose DeletableAt changes with the cutoff (a tombstone inside
// the retention, a file too new, one deleted now), the earliest cutoff that deletes it: just
// after its newest removal and after its modification time. DeletableAt holds at every cutoff
// from it on, so a run at retention r deletes the file from DeletableFrom() + r on.
func (v Verdict) DeletableFrom() time.Time {
	at := time.UnixMilli(v.NewestRemoval + 1)
	if mt := v.Object.ModTime.Add(time.Nanosecond); mt.After(at) || v.NewestRemoval < 0 {
		at = mt
	}
	return at
}

// VerdictBelow is the verdict on an entry below a directory the planner did not enter (rule
// dir: a hidden directory, _delta_log, a nested table): the listing reports it to an observer
// of the listing (insight's), never to the planner, which kept the whole directory.
func VerdictBelow(o storage.Object, dir Rule) Verdict {
	return Verdict{Object: o, Rule: dir, NewestRemoval: -1}
}

// protection is why the log protects a key; lower values win when several apply.
type protection uint8

const (
	protectLive protection = iota
	protectLiveDV
	protectRetained
	protectRetainedDV
)

func (k protection) rule() Rule {
	return [...]Rule{RuleLive, RuleLiveDV, RuleRetained, RuleRetainedDV}[k]
}

// whyList records, for each protected key hash, why it is protected and the newest
// deletionTimestamp of the unexpired removes naming it. It is built only for an observer, and
// then replaces the building of the protected set: sealed, its hashes are that set, in the
// same order, so that the place decide finds a key at is its place here too.
type whyList struct{ s []why }

// why is a key hash with its protection and time packed in 16 bytes: tk = ts<<2 | kind.
type why struct {
	h  uint64
	tk int64
}

func (w why) kind() protection { return protection(w.tk & 3) }
func (w why) ts() int64        { return w.tk >> 2 }

func (l *whyList) add(h uint64, kind protection, ts int64) {
	l.s = append(l.s, why{h, ts<<2 | int64(kind)})
}

// seal sorts by hash and merges the entries of one hash (the strongest protection, the newest
// deletion time), and returns the protected set: the hashes, in the same order.
func (l *whyList) seal() hashList {
	slices.SortFunc(l.s, func(a, b why) int { return cmp.Compare(a.h, b.h) })
	out := l.s[:0]
	for _, w := range l.s {
		if n := len(out); n > 0 && out[n-1].h == w.h {
			last := out[n-1]
			out[n-1].tk = max(last.ts(), w.ts())<<2 | int64(min(last.kind(), w.kind()))
			continue
		}
		out = append(out, w)
	}
	l.s = slices.Clip(out)
	hashes := make([]uint64, len(l.s))
	for i, w := range l.s {
		hashes[i] = w.h
	}
	return hashListOf(hashes)
}

// observe tells the observer, if any, the rule that decided o (h: its key's hash, for files;
// kept: its place in the protected set, or -1).
func (p *Planner) observe(o storage.Object, h uint64, kept int, rule Rule, reason Reason) {
	if p.opts.Observe == nil {
		return
	}
	v := Verdict{Object: o, Rule: rule, Reason: reason, NewestRemoval: -1}
	switch rule {
	case RuleHidden, RuleNestedTable, RuleDirectory:
		p.opts.Observe(v)
		return
	case RuleLive:
		// why holds the same hashes as keep, in the same order (both are sealed sorted sets
		// of the keys protect marks).
		w := p.why.s[kept]
		v.Rule = w.kind().rule()
		if w.kind() < protectRetained {
			p.opts.Observe(v) // kept at every cutoff: no removal time matters
			return
		}
		v.NewestRemoval = w.ts()
	}
	if ts, ok := p.expired.newest(h); ok {
		v.NewestRemoval = max(v.NewestRemoval, ts)
	}
	if v.Reason == "" && (v.Rule == RuleRetained || v.Rule == RuleRetainedDV || v.Rule == RuleTooNew) {
		v.Reason = p.reason(o.Key, h)
		if v.Reason != ReasonChangeData && v.NewestRemoval >= 0 {
			v.Reason = ReasonTombstone // its removes expire before it can go
		}
	}
	p.opts.Observe(v)
}

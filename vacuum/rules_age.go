package vacuum

import "time"

// The age rule (section 8.2): a file, or an empty directory, may be deleted only when its
// modification time is strictly before the cutoff, cutoff = now - retention (section 4). FULL
// applies it to what it lists, LITE to what it finds on local disk, the re-check to the time
// from which a planned file counts as old when a newer metaData raised the retention, an
// observer's verdict to other cutoffs (Verdict.DeletableAt).

// olderThan is the age rule: t is strictly before cutoff.
func olderThan(t, cutoff time.Time) bool { return t.Before(cutoff) }

// oldEnough applies the age rule at the cutoff of the run.
func (p *Planner) oldEnough(t time.Time) bool { return olderThan(t, p.cutoff) }

// since is a time as Unix nanoseconds, 8 bytes where a time.Time takes 24 (a plan holds one
// per candidate); 0 is unknown.
type since int64

func sinceOf(t time.Time) since {
	if t.IsZero() {
		return 0
	}
	return since(t.UnixNano())
}

// youngAt reports whether a file that counts as old from s is too new at cutoff, by the age
// rule, or s is unknown: a file so eligible is kept when the cutoff moves back to it.
func (s since) youngAt(cutoff time.Time) bool {
	return s == 0 || !olderThan(time.Unix(0, int64(s)), cutoff)
}

// eligible is the time from which a file whose key hashes to h counts as old, given its
// modification time (zero in LITE): the newest of that and the deletion times of the expired
// tombstones that name it.
func (p *Planner) eligible(h uint64, modTime time.Time) since {
	s := sinceOf(modTime)
	if ts, ok := p.expired.newest(h); ok {
		return max(s, sinceOf(time.UnixMilli(ts)))
	}
	return s
}

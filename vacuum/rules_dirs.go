package vacuum

import "strings"

// The directory rule (section 8.3): after its files, a listed directory is deleted, bottom-up,
// when this run leaves it empty, the log protects no path below it, it is not hidden (a hidden
// one is never entered) and not the table root (never popped), and it is older than the
// cutoff or this run empties it [safer and beyond]. On object stores, zero-byte keys ending in
// '/' count as directories. LITE deletes no directory.

// dirDeletable applies the rule to a directory the walk has left.
func (p *Planner) dirDeletable(d *dirState) bool {
	// A directory whose own name the log protects as a file is not deleted either (an
	// inventory row that calls a live file a directory).
	return d.children == d.removed && !p.pathBelow(d.key) && !p.protected(strings.TrimSuffix(d.key, "/")) &&
		(d.children > 0 || p.oldEnough(d.modTime))
}

package vacuum

import (
	"fmt"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// LITE's rules (section 9): the window of commits it takes its candidates from, and what keeps
// a candidate. A candidate is a file a remove of the window names (and its deletion vector),
// expired by the tombstone rule, or a cdc file; nothing it does not name is ever deleted, no
// directory, no untracked file.

// liteWindow returns the first commit LITE reads, given the newest commit at or before the
// cutoff (last), the earliest commit still in the log and the version the last vacuum
// covered (_delta_log/_last_vacuum_info; nil when none). It refuses when the log no longer
// reaches back to that vacuum, since files removed by the commits cleaned up in between are
// named nowhere (ErrCannotVacuumLite; the reference also refuses at lastVacuum = earliest-1,
// which is safe [safer]), and a recorded version the log cannot have reached. pinned: the
// plan is on version snapVersion rather than the latest. start > last: nothing to read.
func liteWindow(table string, snapVersion int64, pinned bool, lastVacuum *int64, earliest int64) (start int64, err error) {
	if lastVacuum != nil && pinned && *lastVacuum > snapVersion {
		return 0, fmt.Errorf("table %s: %s says VACUUM covered the log up to version %d, after the pinned version %d: pin version %d or later for VACUUM LITE",
			table, deltalog.LastVacuumInfoKey, *lastVacuum, snapVersion, *lastVacuum)
	}
	if lastVacuum != nil && (*lastVacuum > snapVersion || *lastVacuum < -1) {
		// A vacuum can only have covered commits that exist. A version beyond the log (the
		// file was copied from another table, or the log restored from an older copy) would
		// make every LITE run a silent no-op.
		return 0, fmt.Errorf("table %s: %s is corrupt: it says VACUUM covered the log up to version %d, but the log ends at version %d. Run VACUUM FULL once: it deletes what LITE would and rewrites the file",
			table, deltalog.LastVacuumInfoKey, *lastVacuum, snapVersion)
	}
	if earliest > 0 && (lastVacuum == nil || *lastVacuum < earliest-1) {
		covered := "no earlier VACUUM is recorded in _delta_log/_last_vacuum_info"
		if lastVacuum != nil {
			covered = fmt.Sprintf("the last VACUUM covered commits up to %d", *lastVacuum)
		}
		return 0, fmt.Errorf("table %s: %w The log starts at version %d and %s, so files removed by the commits cleaned up in between are named nowhere. Run VACUUM FULL once (it records how far it got); later LITE runs continue from there",
			table, ErrCannotVacuumLite, earliest, covered)
	}
	start = earliest
	if lastVacuum != nil && *lastVacuum+1 > start {
		start = *lastVacuum + 1
	}
	return start, nil
}

// liteKeeps is the rule that keeps a candidate of LITE (h: the hash of its key), the rules
// FULL applies to a listed file, less those that need a listing: a hidden component, the
// protected set, a protected key in another spelling, a protected path through it; "" when
// none does. (Its age, on local disk only, is looked at after: the walk stats it.)
func (p *Planner) liteKeeps(key string, h uint64) Rule {
	switch {
	case p.hidden.hiddenPath(key):
		return RuleHidden
	case p.keep.has(h):
		return RuleLive // refined by observe
	case p.keptByFold(key):
		return RuleOtherSpelling
	case p.pathBelow(key + "/"):
		return RuleProtectedBelow // a folder that is a link
	case p.readBy(key, h) != 0:
		return RuleRead
	}
	return ""
}

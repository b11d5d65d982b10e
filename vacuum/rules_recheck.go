package vacuum

// The re-check's rules (section 13): between planning and deleting, the executor reads the
// commits made after the planned version (recheck.go) and keeps every planned file or
// directory that they reach, by the planner's own rules applied to what they say: a key they
// name (an add, a remove of any age, a cdc, a deletion vector), in any spelling (rules_fold.go),
// or below a folder (rules_protected.go); the age rule at a cutoff moved back by a raised
// table retention (rules_age.go; nothing grows the plan); the hidden rule of a newer metaData
// (rules_hidden.go). A store that deletes on a version condition keeps an object written
// again since it was listed (DropChanged, execute.go).

// DropReason says why the re-check kept a planned file or directory.
type DropReason string

// Why a re-check of the log kept a planned file or directory.
const (
	// DropReferenced: a commit made after planning names it (an add, a remove, a cdc or a
	// deletion vector): a RESTORE, a late writer.
	DropReferenced DropReason = "referenced"
	// DropRetention: a metaData committed after planning raised the table's retention, and the
	// file is not old enough under it.
	DropRetention DropReason = "retention"
	// DropHidden: a metaData committed after planning made a component of its path hidden
	// (a partition column dropped, UniForm Iceberg enabled).
	DropHidden DropReason = "hidden"
	// DropChanged: the store says the object is no longer the one listed (GCS: another
	// generation): it was written again after planning. Dropped.Version is -1 (no commit).
	DropChanged DropReason = "changed since listing"
)

// Dropped is a planned file or directory the executor kept because of a commit made after
// planning.
type Dropped struct {
	Path   string     `json:"path"`
	Reason DropReason `json:"reason"`
	// Version is the commit that made the executor keep it.
	Version int64 `json:"version"`
}

// keepFile says whether f must be kept because of what the commits read so far say.
func (t *tail) keepFile(f *File) (Dropped, bool) {
	if v, ok := t.refs[f.Path]; ok {
		return Dropped{Path: f.Path, Reason: DropReferenced, Version: v}, true
	}
	if v, ok := t.keepDirs[f.Path+"/"]; ok {
		// A newer commit names a file below it: it is a folder that is a link.
		return Dropped{Path: f.Path, Reason: DropReferenced, Version: v}, true
	}
	if len(t.refsFolded) > 0 {
		if v, ok := t.refsFolded[fold(f.Path)]; ok {
			return Dropped{Path: f.Path, Reason: DropReferenced, Version: v}, true
		}
	}
	if t.raisedAt >= 0 && f.eligible.youngAt(t.cutoff) {
		return Dropped{Path: f.Path, Reason: DropRetention, Version: t.raisedAt}, true
	}
	if t.hiddenAt >= 0 && t.hidden.hiddenPath(f.Path) {
		return Dropped{Path: f.Path, Reason: DropHidden, Version: t.hiddenAt}, true
	}
	return Dropped{}, false
}

// keepDir says whether d must be kept: a newer commit references something below it, or it
// is too new under a raised retention, or it is hidden now.
func (t *tail) keepDir(d *Dir) (Dropped, bool) {
	if v, ok := t.keepDirs[d.Path+"/"]; ok {
		return Dropped{Path: d.Path, Reason: DropReferenced, Version: v}, true
	}
	if v, ok := t.refs[d.Path]; ok {
		// A newer commit names a file of the directory's name.
		return Dropped{Path: d.Path, Reason: DropReferenced, Version: v}, true
	}
	if t.raisedAt >= 0 && d.eligible.youngAt(t.cutoff) {
		return Dropped{Path: d.Path, Reason: DropRetention, Version: t.raisedAt}, true
	}
	if t.hiddenAt >= 0 && t.hidden.hiddenPath(d.Path) {
		return Dropped{Path: d.Path, Reason: DropHidden, Version: t.hiddenAt}, true
	}
	return Dropped{}, false
}

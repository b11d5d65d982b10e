package vacuum

import (
	"strings"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Reason says why a file is deleted.
type Reason string

// The reasons a file is deleted.
const (
	// ReasonTombstone: named by a remove whose deletionTimestamp is before the cutoff.
	ReasonTombstone Reason = "tombstone"
	// ReasonChangeData: a change-data file under _change_data/.
	ReasonChangeData Reason = "change_data"
	// ReasonDeletionVector: a deletion_vector_*.bin file that no action names.
	ReasonDeletionVector Reason = "deletion_vector"
	// ReasonUntracked: a file no action names.
	ReasonUntracked Reason = "untracked"
)

// reason is what a listed file that the log does not protect is deleted as (section 8.2): a
// change-data file, one named by expired tombstones, an orphan deletion vector, or untracked,
// in that order. h is the hash of key. (LITE's candidates get theirs from the action that
// names them: a cdc is change data, a remove a tombstone.)
func (p *Planner) reason(key string, h uint64) Reason {
	switch {
	case strings.HasPrefix(key, "_change_data/"):
		return ReasonChangeData
	case p.expired.has(h):
		return ReasonTombstone
	case isDeletionVectorName(storage.Base(key)):
		return ReasonDeletionVector
	}
	return ReasonUntracked
}

func isDeletionVectorName(name string) bool {
	return strings.HasPrefix(name, "deletion_vector_") && strings.HasSuffix(name, ".bin")
}

package vacuum

import (
	"fmt"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Reclaim says when the storage a run frees stops being billed: at once, or only after the
// store's soft-delete retention, a lifecycle rule on noncurrent versions, or a trash purge.
type Reclaim struct {
	// Store is what the store keeps of what it deletes.
	Store storage.Recovery `json:"store"`
	// Trash is the folder the run moved its files into instead of deleting them.
	Trash string `json:"trash,omitempty"`
	// BytesNow are the bytes freed at once; BytesLater those still stored (and billed) after
	// the run: for Store.Days (soft delete), until a lifecycle rule expires them (versioning),
	// until `deltavacuum trash purge` (a trash), or, when the store could not tell, maybe.
	BytesNow   int64 `json:"bytesReclaimedNow"`
	BytesLater int64 `json:"bytesReclaimedLater"`
	// When says, in words, when BytesLater stop being billed.
	When string `json:"when"`
}

// NewReclaim splits bytes (freed by a run, or planned to be) by what the store keeps.
func NewReclaim(rec storage.Recovery, trash string, bytes int64) *Reclaim {
	r := &Reclaim{Store: rec, Trash: trash}
	switch {
	case trash != "":
		r.BytesLater, r.When = bytes, "when the trash is purged (deltavacuum trash purge)"
	case rec.Kind == storage.RecoveryNone:
		r.BytesNow, r.When = bytes, "now"
	case rec.Kind == storage.RecoverySoftDelete && rec.Days > 0:
		r.BytesLater, r.When = bytes, fmt.Sprintf("after %d days (soft delete)", rec.Days)
	case rec.Kind == storage.RecoverySoftDelete:
		r.BytesLater, r.When = bytes, "after the soft-delete retention"
	case rec.Kind == storage.RecoveryVersioning:
		r.BytesLater, r.When = bytes, "when a lifecycle rule expires the noncurrent versions (never without one)"
	default:
		r.BytesLater, r.When = bytes, "unknown: the store's versioning and soft-delete settings could not be read"
	}
	return r
}

// Warning is the warning to give when the bytes are not freed at once, or "".
func (r *Reclaim) Warning() string {
	if r.BytesLater == 0 {
		return ""
	}
	if r.Trash != "" {
		return fmt.Sprintf("%d bytes were moved to the trash %s, not deleted: they are billed until `deltavacuum trash purge`", r.BytesLater, r.Trash)
	}
	return fmt.Sprintf("the store keeps what this run deletes (%s): %d bytes stay billed, and are reclaimed %s", r.Store.Detail, r.BytesLater, r.When)
}

// Whether what a run deletes can come back (Undoability.Possible).
const (
	UndoYes     = "yes"
	UndoNo      = "no"
	UndoUnknown = "unknown"
)

// Undoability says, before a run and after it, whether deltavacuum undo can bring back what it
// deletes, and how: the one answer the CLI, Python, the service and its pages give.
type Undoability struct {
	// Possible is UndoYes, UndoNo or UndoUnknown (the store's settings could not be read).
	Possible string `json:"possible"`
	// Via is how undo brings files back: "trash" or "store recovery" ("" when it cannot).
	Via string `json:"via,omitempty"`
	// Why says it in words, with what to do when it cannot.
	Why string `json:"why"`
}

// NewUndoability is the undoability of a run that deletes from a store keeping rec of what it
// deletes, into trash ("" for none), with a run record or not.
func NewUndoability(rec storage.Recovery, trash string, recorded bool) *Undoability {
	switch {
	case !recorded:
		return &Undoability{Possible: UndoNo, Why: "cannot be undone: the run keeps no run record (--no-run-record)"}
	case trash != "":
		return &Undoability{Possible: UndoYes, Via: "trash", Why: "its files are moved to the trash " + trash + " until deltavacuum trash purge: deltavacuum undo brings them back"}
	case rec.Restorable():
		how := "versioning"
		if rec.Kind == storage.RecoverySoftDelete {
			how = "soft delete"
			if rec.Days > 0 {
				how = fmt.Sprintf("soft delete, %d days", rec.Days)
			}
		}
		return &Undoability{Possible: UndoYes, Via: "store recovery", Why: "the store keeps deleted files (" + how + "): deltavacuum undo brings them back while it keeps them"}
	case rec.Kind == storage.RecoveryNone:
		return &Undoability{Possible: UndoNo, Why: "cannot be undone: nothing keeps deleted files here (" + rec.Detail + "); use --trash to keep them until you purge them"}
	}
	return &Undoability{Possible: UndoUnknown, Via: "store recovery", Why: "whether the store keeps deleted files could not be read (" + rec.Detail + "): undo may bring nothing back; use --trash to be sure"}
}

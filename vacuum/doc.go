// Package vacuum decides which files of a Delta table VACUUM may delete (the plan) and deletes
// them (the executor). Planning is a function of the snapshot, the listing and a clock; it
// never deletes. The executor deletes only what a plan lists, after re-reading the log tail.
//
// This package must never delete anything under _delta_log/, outside the table root, or any
// file a live add, an unexpired tombstone or their deletion vectors reference. It imports no
// SDK and does no I/O except through storage.Store.
package vacuum

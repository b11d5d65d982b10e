// Package vacuum decides which files of a Delta table VACUUM may delete (the plan) and deletes
// them (the executor). Planning is a function of the snapshot, the listing and a clock; it
// never deletes. The executor deletes only what a plan lists, after re-reading the log tail.
// An observer (Options.Observe) is told the rule that decided each listed entry, so that
// package insight explains and measures plans without a second copy of the rules.
//
// This package must never delete anything under _delta_log/, outside the table root, or any
// file a live add, an unexpired tombstone or their deletion vectors reference. It imports no
// SDK and does no I/O except through storage.Store.
package vacuum

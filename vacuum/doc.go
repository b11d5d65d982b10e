// Package vacuum decides which files of a Delta table VACUUM may delete (the plan) and deletes
// them (the executor). Planning is a function of the snapshot, the listing and a clock; it
// never deletes. The executor deletes only what a plan lists, after re-reading the log tail.
// An observer (Options.Observe) is told the rule that decided each listed entry, so that
// package insight explains and measures plans without a second copy of the rules.
//
// This package must never delete anything under _delta_log/, outside the table root, or any
// file a live add, an unexpired tombstone or their deletion vectors reference. It imports no
// SDK and does no I/O except through storage.Store. No other package decides whether a file
// is deletable (docs/architecture.md: the check that says so).
//
// # The rules
//
// Every rule that decides a deletion is one function, named here with the cases of TestRules
// (rules_test.go) that prove it; each case fails when its rule is broken. A listed entry is
// classified once (classify, classify.go), in this order; LITE, the inventory, the shards, the
// re-check, inspect and explain call the same functions.
//
// Retention (section 4; retention.go):
//   - RETAIN n HOURS is rounded half up to whole hours; NaN, a negative number and more hours
//     than a hundred years (MaxRetentionHours) are refused (RetentionOf): "retention: RETAIN n HOURS is rounded
//     half up to whole hours", "retention: RETAIN below half an hour rounds to 0",
//     "retention: RETAIN below 0 hours is refused", "retention: RETAIN NaN HOURS is refused",
//     "retention: RETAIN beyond a hundred years is refused"; TestRetentionOf.
//   - the table's delta.deletedFileRetentionDuration is the default, and a shorter retention is
//     refused while the safety check is on (retention, RetentionError): "retention: the
//     table's delta.deletedFileRetentionDuration is the default", "retention: a retention
//     below the table's is refused while the safety check is on", "retention: the safety
//     check passes a retention of the table's, rounded".
//   - a one-off retention (the service's previews, a Fabric job's) is refused below the table's
//     own, a hundred years at most, the safety check as RETAIN's (OneOffRetainHours):
//     "retention: a one-off retention below the table's own is refused, not raised".
//   - a policy's retention is never shorter than the table's own (PolicyRetainHours):
//     "retention: a policy's retention is never shorter than the table's own";
//     TestPolicyRetainHours.
//
// Hidden names (section 5; rules_hidden.go, hiddenRule.hidden, hiddenRule.hiddenPath, built
// once by hiddenRuleOf): "hidden: names starting with _ or . at every depth are never
// candidates", "hidden: the folders of a partition column starting with _ are not hidden",
// "hidden: _change_data and _delta_index are not hidden, their hidden files are",
// "hidden: metadata is hidden on UniForm Iceberg tables", "hidden: metadata is visible without
// UniForm Iceberg", "hidden: _delta_log is never touched".
//
// Nested tables [safer] (rules_nested.go): a folder with a _delta_log of its own is another
// table, never entered, what was planned in it taken back (nestedTableLog, takeBackFolder):
// "nested table: a folder with a _delta_log of its own is never entered, whatever sorts
// before it"; with an inventory the store is asked (takeBackNested): "nested table: a folder
// an inventory names that holds a _delta_log is taken back".
//
// The protected set (section 6; rules_protected.go, protect):
//   - a live add's file: "protected: a live add is kept however old", "protected: a file
//     re-added after its remove is live".
//   - a tombstone's file while its deletionTimestamp is at or after the cutoff, a missing one
//     counting as 0 (tombstoneExpired): "tombstone: an expired tombstone's file is deleted",
//     "tombstone: one inside the retention keeps its file, however old", "tombstone: one
//     exactly at the cutoff keeps its file (deletionTimestamp >= cutoff)", "tombstone: one
//     without deletionTimestamp counts as 0, expired".
//   - their deletion vectors (deltalog.File.DVKey): "deletion vector: a live add's is kept (u,
//     no prefix)", "deletion vector: a live add's is kept (u with a prefix), its name elsewhere
//     is an orphan", "deletion vector: a live add's p path inside the root is kept [safer]",
//     "deletion vector: an inline one (i) names no file", "deletion vector: replaced on a live
//     file, the old one is a tombstone, the new one kept", "deletion vector: an unexpired
//     tombstone's is kept".
//   - every reading of a log path (section 7; deltalog.File.OtherKeys): "path: percent-encoded
//     log paths name raw keys, two escapes of one key are one file", "path: a path that can be
//     read several ways protects every reading", "path: every reading of an expired tombstone
//     is a tombstone, never protected", "path: absolute log paths inside the root protect,
//     outside it are ignored".
//   - every spelling one file system takes for one name (rules_fold.go, fold, keptByFold):
//     "spelling: a live file listed in another letter case or normalization is kept".
//   - every folder above a protected path (protectAncestors, pathBelow): "ancestors: a
//     directory above a live file is kept even when the file is missing", "ancestors: a link a
//     protected path passes through is kept, one nothing passes through deleted".
//
// Links into the table (section 7; rules_links.go, checkLinkInto, LinkIntoTableError): a
// symbolic link into the table through which the log names live files refuses the run: "links:
// a link into the table through which the log names live files refuses the run", "links: the
// refusal holds for a link younger than the cutoff", "links: the refusal holds for a hidden link
// (never entered, its target listed where it is)".
//
// Age (section 8.2; rules_age.go, olderThan, oldEnough, since.youngAt): a file is deleted only
// when its modification time is strictly before the cutoff: "age: a file older than the cutoff
// is deleted, one newer or at it is kept".
//
// Reasons (section 8.2; rules_reason.go, reason): "reason: change data, a tombstone, an orphan
// deletion vector, untracked", "reason: cdc files named by the log are change data, deleted
// when old".
//
// Checksum companions (section 5; rules_checksum.go, companionGoes, companionListed,
// candidatePlanned; LITE: companionExists): a hidden .<name>.crc goes with its file, unless the
// log names it: "checksum: a companion goes with its file, in either listing order, and only
// with it", "checksum: a companion the log names itself stays when its file goes".
//
// Directories (section 8.3; rules_dirs.go, dirDeletable): "directories: empty ones older than
// the cutoff go, fresh ones stay, emptied ones go bottom-up", "directories: one the inventory
// lists whose name the log protects as a file stays".
//
// LITE (section 9; rules_lite.go): the window of commits from after the last VACUUM (or the
// earliest commit) to the newest at or before the cutoff, refused when the log no longer
// reaches back (liteWindow; Planner.Plan finds the newest commit): "LITE: the window starts
// after the commit the last VACUUM covered and ends at the newest commit before the cutoff",
// "LITE: a log that no longer reaches back to the last VACUUM is refused"; its candidates, kept
// by the rules above (liteKeeps, tombstoneExpired per remove; on local disk oldEnough and the
// companion): "LITE: the candidates are the removes, their deletion vectors and the cdc files of
// the log, less what it protects", "LITE: a remove names a candidate only once its own
// deletionTimestamp is before the cutoff", "LITE: on local disk, a candidate written again
// since is too new, a companion goes with its file".
//
// Readers (section 15; rules_readers.go, protectReaders, readBy, keepForReaders): a reader
// pinned at V keeps every file a commit after V names, whatever its age, and what it names
// itself: "readers: a file a commit after a reader's version names is kept, whatever its age",
// "readers: a file removed at or before a reader's version follows the retention", "readers: a
// kept file names the readers whose version is older than the commit that names it",
// "readers: a reader's deletion vectors and change data after its version are kept",
// "readers: a reader's files and folders are kept, in every spelling, its folders never
// entered"; a reader the log cannot serve refuses the run (ErrReaderTooOld): "readers: a
// reader whose commits the log no longer holds refuses the run", "readers: a reader beyond the
// log refuses the run"; in every mode: "readers: LITE keeps what a reader needs", "readers: an
// inventory run keeps what a reader needs".
//
// Inventory (section 10): rows outside the table root are ignored (package inventory,
// root.key), then the rules above decide: "inventory: rows outside the table root are ignored".
//
// Shards (shard.go, ShardOf, Shard.Owns): "shard: each shard plans the top-level entries
// ShardOf gives it, a companion with its file; together, the plan of the table".
//
// The re-check (section 13; rules_recheck.go, tail.keepFile, tail.keepDir, DropReason): a key a
// newer commit names, in any spelling or below a folder, is kept (DropReferenced), and so is
// what a raised retention makes too new (DropRetention) or a newer metaData hides (DropHidden):
// "re-check: a file a commit after planning names, in any spelling or below it, is kept",
// "re-check: a retention raised after planning keeps what is not old enough under it",
// "re-check: a metaData after planning that hides a path keeps what lies there", "re-check: a
// metaData after planning that hides an empty folder keeps it". An object
// written again since it was listed is kept on a store that deletes on a condition
// (DropChanged, executor.deleteFiles): "re-check: a file written again since it was listed is
// kept, on a store that deletes on a condition".
//
// The trash (trash.go): a trash folder is a clean hidden folder of the table, outside the log
// and the runs folder (TrashFolder), and nothing on its way is a file (CheckTrashPlace): "trash:
// a trash folder is a clean hidden folder of the table, outside the log and the runs folder",
// "trash: a trash folder whose way holds a file is refused before anything moves".
//
// Coverage (coverage.go, Coverage): what _last_vacuum_info records after a run, for later LITE
// runs: "coverage: a completed run covers the newest commit outside the retention, another run
// nothing".
package vacuum

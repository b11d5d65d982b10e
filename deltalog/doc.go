// Package deltalog reads a Delta table's transaction log into an immutable Snapshot: it
// discovers the log segment (commits, classic, multi-part and V2 checkpoints with their
// sidecars, compacted commits), replays it newest to oldest, and says which files the table
// references, with their deletion vectors and tombstones. It also checks the table's protocol
// against the features this program supports (Features) and writes the commitInfo-only commits
// of a VACUUM run.
//
// It reads through the storage contract only and never deletes anything; deciding what is
// deleted is the planner's (package vacuum). A log that cannot be read as the protocol says
// (a gap, a damaged checkpoint, an unknown feature, a path that escapes the table) is an error
// matching ErrCorrupt, ErrMissingVersion, ErrBadPath or ErrUnsupportedFeatures: it refuses
// rather than guesses.
package deltalog

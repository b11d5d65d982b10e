// Package run owns a real VACUUM run and everything that must hold while it deletes: the lock
// of the table (taken before planning, with the store's own put-if-absent), the run's heartbeat,
// and the release. Every path that changes a table (the CLI, SQL, the library, the service,
// shards, undo and trash purge) takes the table through Acquire.
//
// It never decides what is deleted: that is package vacuum's.
package run

// Package state keeps what `deltavacuum serve` must remember across restarts, in one SQLite
// file in its data directory: the runs it started (status, figures, the id of the table's run
// record), how far each table's schedule is handled, and the inspect figures of each table
// over time.
//
// It is a record, not the authority: whether a run is in progress on a table is also read
// from the table's own run records, which a second service or a CLI run write too. It never
// touches a table.
package state

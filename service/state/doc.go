// Package state keeps what `deltavacuum serve` must remember across restarts and no table can
// tell it, in one SQLite file in its data directory: the runs it asked for (who asked, what was
// asked, when, the id of the table's run record, a refusal before the run wrote that record, a
// cancel it asked for), how far each table's schedule is handled, and the inspect figures of
// each table over time.
//
// It keeps no run's status, figures, error or end: those are the table's run record's (package
// run), which the CLI, Python and the service all read, and a run undone, purged or changed
// behind the service's back shows so at once. It never touches a table.
package state

// Package schedule decides when the scheduled VACUUM runs of `deltavacuum serve` start: cron
// expressions in a time zone, off-peak windows (also across midnight), a jitter fixed per
// table, the misfire policy after downtime, one run at a time per table and a limit across
// tables.
//
// It is pure: it holds no clock and does no I/O; every call is given the time. It never
// decides what a run deletes, only when one starts.
package schedule

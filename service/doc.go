// Package service is `deltavacuum serve`: an HTTP API over the library for pipelines (list,
// inspect, preview, run, cancel, undo), Prometheus metrics, and the scheduled runs of each
// table's policy.
//
// Each part owns its state: the Server (this package) the HTTP side (routes, the guard,
// answers, the pages and their words, messages.go), which only decodes, calls and encodes; the
// runner (package service/runner, which knows no HTTP and no words) a run from the policy to its
// end, the queue, cancel, undo, the trash purge and the inspections, for the handlers and the
// scheduler alike, the state of each run as it is shown (package run's, read from the table's
// run record) and the tables' health; the tables (package service/tables) the configured and
// discovered tables, each opened through its SQL session as the CLI opens its own, the discover
// roots and the stores' rate limits; the state database (service/state) what the service alone
// knows. The runner's errors have kinds, and statusOf (status.go) is the one place a kind
// becomes an HTTP status.
//
// It decides nothing about what is deleted: every run, preview, inspection and undo goes
// through the library (session.Session, Table.Undo), with the retention the policy and the
// table's own property give. It never renders a secret: every response and log line passes
// the redactor, which knows the token and every secret storage option.
package service

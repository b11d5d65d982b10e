// Package service is `deltavacuum serve`: an HTTP API over the library for pipelines (list,
// inspect, preview, run, cancel, undo), Prometheus metrics, and the scheduled runs of each
// table's policy.
//
// It decides nothing about what is deleted: every run, preview, inspection and undo goes
// through the library (session.Session, Table.Undo), with the retention the policy and the
// table's own property give. It never renders a secret: every response and log line passes
// the redactor, which knows the token and every secret storage option.
package service

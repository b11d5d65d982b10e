// Package runner is the one owner of the runs of `deltavacuum serve`: it starts them (from the
// API, the page, Fabric's job API and the schedule alike), holds each table in this process,
// queues the starts that wait for a slot, cancels, undoes and purges, inspects the tables, and
// says each run's state. The HTTP side (package service) decodes a request, calls the runner and
// encodes its answer; the scheduler (scheduler.go) starts runs through the same Start.
//
// What a run deletes is the library's (session.Session.Vacuum). What became of a run (its
// status, figures, end, undo-ability) is its run record's beside the table, read through
// package run as the CLI reads it (view.go, runs.go); the state database (service/state) keeps
// only what the service alone knows: who asked, what, when, a refusal before the run wrote its
// record, a cancel. A retention is checked by the library's rules (vacuum.OneOffRetainHours,
// vacuum.PolicyRetainHours: policy.go).
//
// It imports no net/http and none of the page's words (the depguard rule service-runner,
// TestRunnerKnowsNoHTTP): its errors have kinds (kinds.go), which package service turns into
// status codes and words; an undo offer has a reason (offer.go), which the pages say.
package runner

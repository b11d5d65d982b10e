package service

import "github.com/deltavacuum/deltavacuum/service/runner"

// The kinds of error (runner/kinds.go): the runner's errors have them, and so do the HTTP side's
// own refusals (a body, a parameter, a table that does not exist). statusOf (status.go) is the
// one place a kind becomes a status code.
var (
	// ErrBusy is returned (wrapped) when a run or an undo is in progress on the table: in this
	// service, or, by the table's own lock, anywhere.
	ErrBusy            = runner.ErrBusy
	errDryRunOnly      = runner.ErrDryRunOnly
	errClosed          = runner.ErrClosed
	errNotFound        = runner.ErrNotFound
	errInvalid         = runner.ErrInvalid
	errConflict        = runner.ErrConflict
	errTable           = runner.ErrTable
	errPlan            = runner.ErrPlan
	errTooMany         = runner.ErrTooMany
	errCancelledQueued = runner.ErrCancelledQueued
)

// of returns err as an error of kind, unless it is nil or has a kind already.
func of(kind, err error) error { return runner.Of(kind, err) }

// kindOf returns the kind of err, nil when it has none.
func kindOf(err error) error { return runner.KindOf(err) }

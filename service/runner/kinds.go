package runner

import (
	"errors"

	"github.com/deltavacuum/deltavacuum/service/state"
)

// The kinds of error the runner returns. The HTTP side maps each kind to a status code in one
// place (service/status.go) and to an errorCode of Fabric's in another (fabricCodeOf); the
// runner knows neither.
var (
	// ErrBusy is returned (wrapped) when a run or an undo is in progress on the table: in this
	// service, or, by the table's own lock, anywhere.
	ErrBusy = errors.New("a run is in progress on the table")
	// ErrDryRunOnly: a real run of a table the configuration allows dry runs of only.
	ErrDryRunOnly = errors.New("the table is dryRunOnly in the configuration: POST .../preview shows what a run would delete")
	// ErrClosed: the service is shutting down and starts nothing.
	ErrClosed = errors.New("the service is shutting down")
	// ErrNotFound: no such table or run.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: a request the service does not take (its body, a parameter, a digest, a
	// one-off retention).
	ErrInvalid = errors.New("invalid request")
	// ErrConflict: the run is not in a state that allows it (not in progress here, still
	// running, nothing to undo).
	ErrConflict = errors.New("conflict")
	// ErrTable: opening the table, reading it, or the library's run or undo of it failed.
	ErrTable = errors.New("the table failed")
	// ErrPlan: the dry run of a preview failed.
	ErrPlan = errors.New("the dry run failed")
	// ErrTooMany: a run refused because the service runs as many as it may at once (a start
	// that may wait for a slot waits in the queue instead: Enqueue).
	ErrTooMany = errors.New("too many runs in progress")
	// ErrCancelledQueued: a queued start cancelled before it started.
	ErrCancelledQueued = errors.New("cancelled before it started: nothing ran")
)

// kinds are the kinds, in the order an error is told apart: an error of two kinds is of the
// first. The state database's not found is one too.
var kinds = []error{ErrInvalid, ErrDryRunOnly, ErrNotFound, state.ErrNotFound, ErrBusy,
	ErrConflict, ErrPlan, ErrClosed, ErrTooMany, ErrTable}

// KindOf returns the kind of err, nil when it has none (the service's own failure: the state
// database, mostly).
func KindOf(err error) error {
	for _, k := range kinds {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}

// Of returns err as an error of kind, unless it is nil or has a kind already. Its message is
// err's: the kind adds nothing to what a user reads.
func Of(kind, err error) error {
	if err == nil || KindOf(err) != nil {
		return err
	}
	return &kindError{kind: kind, err: err}
}

type kindError struct{ kind, err error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

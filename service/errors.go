package service

import (
	"errors"

	"github.com/deltavacuum/deltavacuum/service/state"
)

// The kinds of error the runner and the tables return. statusOf (status.go) maps each kind to
// the API's status code, in one place; ErrBusy is the one callers of the package may test.
var (
	// ErrBusy is returned (wrapped) when a run or an undo is in progress on the table: in this
	// service, or, by the table's own run records, anywhere.
	ErrBusy = errors.New("a run is in progress on the table")
	// errDryRunOnly: a real run of a table the configuration allows dry runs of only.
	errDryRunOnly = errors.New("the table is dryRunOnly in the configuration: POST .../preview shows what a run would delete")
	// errClosed: the service is shutting down and starts nothing.
	errClosed = errors.New("the service is shutting down")
	// errNotFound: no such table or run.
	errNotFound = errors.New("not found")
	// errInvalid: a request the service does not take (its body, a parameter, a digest).
	errInvalid = errors.New("invalid request")
	// errConflict: the run is not in a state that allows it (not in progress here, still
	// running, nothing to undo).
	errConflict = errors.New("conflict")
	// errTable: opening the table, reading it, or the library's run or undo of it failed.
	errTable = errors.New("the table failed")
	// errPlan: the dry run of a preview failed.
	errPlan = errors.New("the dry run failed")
	// errTooMany: a run refused because the service runs as many as it may at once.
	errTooMany = errors.New("too many runs in progress")
)

// kinds are the kinds, in the order an error is told apart: an error of two kinds is of the
// first. The state database's own two are kinds too.
var kinds = []error{errInvalid, errDryRunOnly, errNotFound, state.ErrNotFound, ErrBusy, state.ErrTableBusy,
	errConflict, errPlan, errClosed, errTooMany, errTable}

// kindOf returns the kind of err, nil when it has none.
func kindOf(err error) error {
	for _, k := range kinds {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}

// of returns err as an error of kind, unless it is nil or has a kind already. Its message is
// err's: the kind adds nothing to what a user reads.
func of(kind, err error) error {
	if err == nil || kindOf(err) != nil {
		return err
	}
	return &kindError{kind: kind, err: err}
}

type kindError struct{ kind, err error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

package service

import (
	"errors"
	"fmt"
	"testing"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/state"
)

// TestStatusOf: each kind of error is answered with its status code, wrapped or not; an error
// of no kind is the service's own (500); of keeps the message and never changes a kind.
func TestStatusOf(t *testing.T) {
	plain := errors.New("the store said no")
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"invalid", of(errInvalid, plain), 400},
		{"dry run only", fmt.Errorf("table a: %w", errDryRunOnly), 403},
		{"no table", of(errNotFound, plain), 404},
		{"no run", fmt.Errorf("run x: %w", state.ErrNotFound), 404},
		{"busy here", fmt.Errorf("table a: %w in this service", ErrBusy), 409},
		{"busy elsewhere", fmt.Errorf("table a: %w: %w", ErrBusy, run.ErrLocked), 409},
		{"not in progress", of(errConflict, plain), 409},
		{"the dry run failed", of(errPlan, plain), 422},
		{"the table failed", of(errTable, plain), 502},
		{"busy stays busy", of(errTable, fmt.Errorf("%w: %w", ErrBusy, run.ErrLocked)), 409},
		{"closed", errClosed, 503},
		{"closed stays closed", of(errTable, errClosed), 503},
		{"no kind", plain, 500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := statusOf(tc.err); got != tc.want {
				t.Errorf("statusOf(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
	if err := of(errTable, plain); err.Error() != plain.Error() || !errors.Is(err, plain) {
		t.Errorf("of changed the error: %q", err)
	}
	if of(errTable, nil) != nil {
		t.Error("of(kind, nil) is not nil")
	}
}

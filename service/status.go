package service

import (
	"net/http"

	"github.com/deltavacuum/deltavacuum/service/state"
)

// statusOf is the status code of the API (and of the pages) for err, by its kind (errors.go):
// the one place an error of the runner or the tables becomes a status. An error of no kind is
// the service's own failure (the state database, mostly): 500.
func statusOf(err error) int {
	switch kindOf(err) {
	case errInvalid:
		return http.StatusBadRequest
	case errDryRunOnly:
		return http.StatusForbidden
	case errNotFound, state.ErrNotFound:
		return http.StatusNotFound
	case ErrBusy, errConflict:
		return http.StatusConflict
	case errPlan:
		return http.StatusUnprocessableEntity
	case errTable:
		return http.StatusBadGateway
	case errClosed:
		return http.StatusServiceUnavailable
	case errTooMany:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

package service

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/storage"
)

// The pins of a table through the API (run's pins: the same files, the same checks as the
// CLI's pin, pins and unpin).

// PinsAnswer is the answer of GET /api/tables/{id}/pins.
type PinsAnswer struct {
	Table string         `json:"table"`
	Pins  []run.PinState `json:"pins"`
	// MaxPinHours is the longest pin accepted and honoured.
	MaxPinHours float64 `json:"maxPinHours"`
}

func (s *Server) listPins(w http.ResponseWriter, r *http.Request) {
	t := s.tableOf(w, r)
	if t == nil {
		return
	}
	pins, err := s.pinsOf(r, t)
	if err != nil {
		s.fail(w, r, of(errTable, err))
		return
	}
	s.writeJSON(w, http.StatusOK, PinsAnswer{Table: t.Cfg.ID, Pins: pins, MaxPinHours: run.DefaultMaxPin.Hours()})
}

// pinBody is the body of POST /api/tables/{id}/pins: a version or a timestamp, for how many
// hours, and why.
type pinBody struct {
	Version   *int64     `json:"version"`
	Timestamp *time.Time `json:"timestamp"`
	Hours     float64    `json:"hours"`
	Reason    string     `json:"reason"`
}

func (s *Server) createPin(w http.ResponseWriter, r *http.Request) {
	t := s.tableOf(w, r)
	if t == nil {
		return
	}
	var body pinBody
	if err := decode(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	if body.Hours <= 0 || body.Hours > run.DefaultMaxPin.Hours() {
		s.fail(w, r, of(errInvalid, fmt.Errorf("table %s: hours %v: a pin holds for more than 0 and at most %v hours", t.Cfg.ID, body.Hours, run.DefaultMaxPin.Hours())))
		return
	}
	if err := run.CheckReason(body.Reason); err != nil {
		s.fail(w, r, of(errInvalid, fmt.Errorf("table %s: %w", t.Cfg.ID, err)))
		return
	}
	dt := s.openFor(w, r, t)
	if dt == nil {
		return
	}
	pin, err := dt.Pin(r.Context(), run.PinRequest{Version: body.Version, Timestamp: body.Timestamp,
		For: time.Duration(body.Hours * float64(time.Hour)), Reason: body.Reason, Now: s.Now(), StaleAfter: s.runner.StaleAfter()})
	switch {
	case errors.Is(err, run.ErrLocked):
		s.fail(w, r, fmt.Errorf("table %s: %w: %w", t.Cfg.ID, ErrBusy, err))
		return
	case errors.Is(err, run.ErrInvalidPin):
		s.fail(w, r, of(errInvalid, err))
		return
	case err != nil:
		s.fail(w, r, of(errTable, err))
		return
	}
	s.Log.Info("pin", "table", t.Cfg.ID, "pin", pin.ID, "version", pin.Version, "until", pin.Until)
	w.Header().Set("Location", "/api/tables/"+t.Cfg.ID+"/pins/"+pin.ID)
	s.writeJSON(w, http.StatusCreated, pin)
}

func (s *Server) deletePin(w http.ResponseWriter, r *http.Request) {
	t := s.tableOf(w, r)
	if t == nil {
		return
	}
	dt := s.openFor(w, r, t)
	if dt == nil {
		return
	}
	err := dt.Unpin(r.Context(), r.PathValue("pin"))
	switch {
	case errors.Is(err, run.ErrInvalidPin):
		s.fail(w, r, of(errInvalid, err))
	case errors.Is(err, storage.ErrNotExist):
		s.fail(w, r, of(errNotFound, err))
	case err != nil:
		s.fail(w, r, of(errTable, err))
	default:
		s.Log.Info("unpin", "table", t.Cfg.ID, "pin", r.PathValue("pin"))
		w.WriteHeader(http.StatusNoContent)
	}
}

// openFor opens table t for a request on it; when it cannot, the answer says why and it
// returns nil.
func (s *Server) openFor(w http.ResponseWriter, r *http.Request, t *tables.Table) *deltavacuum.Table {
	dt, err := s.tables.Open(r.Context(), t)
	if err != nil {
		s.fail(w, r, of(errTable, err))
		return nil
	}
	return dt
}

package service

import (
	"context"
	"encoding/json"
	"time"

	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/session"
)

// maxPeriodicInspections bounds the periodic inspections in progress across all tables. They
// are outside maxConcurrentRuns: an inspection reads the log and lists the table, it deletes
// nothing and holds no table.
const maxPeriodicInspections = 2

// inspectRetryAfter is how long after a failed periodic inspection the next is tried (or
// inspectEvery, when shorter): a table that cannot be opened is not retried every tick.
const inspectRetryAfter = time.Hour

// inspectTable inspects t at its policy's retention (as GET /api/tables/{id}/inspect does)
// and keeps the figures in the state database (the charts) and the reclaimable gauge.
func (s *Server) inspectTable(ctx context.Context, t *table) (*insight.Report, error) {
	dt, err := s.tables.open(ctx, t)
	if err != nil {
		return nil, err
	}
	snap, err := dt.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	hours, err := retainHours(snap, t.cfg.Policy)
	if err != nil {
		return nil, err
	}
	rep, err := t.session.Inspect(ctx, dt, session.InspectRequest{Options: insight.Options{RetainHours: hours, Now: s.now(), From: snap}})
	if err != nil {
		return nil, err
	}
	if b, err := json.Marshal(rep); err == nil {
		if err := s.st.AddInspection(ctx, state.Inspection{Table: t.cfg.ID, At: rep.Now, Version: rep.Version, Figures: json.RawMessage(s.red.String(string(b)))}); err != nil {
			s.log.Warn("recording the inspection", "table", t.cfg.ID, "error", err.Error())
		}
	}
	s.mu.Lock()
	s.inspected[t.cfg.ID] = rep.Now
	delete(s.inspectFailed, t.cfg.ID)
	s.mu.Unlock()
	s.metrics.reclaimable.WithLabelValues(t.cfg.ID).Set(float64(rep.Reclaimable.Bytes))
	return rep, nil
}

// inspectLater inspects t in the background, why being "after run ID" or "periodic": never
// during shutdown (Shutdown waits for it, and cancels it with the runs), never two at once of
// one table, and a periodic one only while no run or undo holds the table and fewer than
// maxPeriodicInspections are in progress. False when it did not start. An error is logged.
func (s *Server) inspectLater(t *table, why string, periodic bool) bool {
	id := t.cfg.ID
	s.mu.Lock()
	_, busy := s.busy[id]
	switch {
	case s.closed, s.inspecting[id] != "",
		periodic && (busy || s.periodicInspections >= maxPeriodicInspections):
		s.mu.Unlock()
		return false
	}
	s.inspecting[id] = why
	if periodic {
		s.periodicInspections++
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		_, err := s.inspectTable(s.base, t)
		s.mu.Lock()
		delete(s.inspecting, id)
		if periodic {
			s.periodicInspections--
		}
		if err != nil {
			s.inspectFailed[id] = s.now()
		}
		s.mu.Unlock()
		if err != nil {
			s.log.Warn("background inspection failed", "table", id, "why", why, "error", err.Error())
		}
	}()
	return true
}

// inspectDue starts the periodic inspections due at now: of each table whose policy's
// inspectEvery has passed since its last inspection (kept in the state database; none: due)
// and, after a failed one, inspectRetryAfter (or inspectEvery, when shorter) since it failed.
func (s *Server) inspectDue(ctx context.Context, now time.Time) {
	for _, t := range s.tables.all() {
		every := t.cfg.Policy.InspectEvery
		if every <= 0 {
			continue
		}
		last, ok := s.lastInspected(ctx, t.cfg.ID)
		if !ok || now.Sub(last) < every {
			continue
		}
		s.mu.Lock()
		failed, hasFailed := s.inspectFailed[t.cfg.ID]
		s.mu.Unlock()
		if hasFailed && now.Sub(failed) < min(every, inspectRetryAfter) {
			continue
		}
		s.inspectLater(t, "periodic", true)
	}
}

// lastInspected is when table id was last inspected (zero: never); false when the state
// database cannot say.
func (s *Server) lastInspected(ctx context.Context, id string) (time.Time, bool) {
	s.mu.Lock()
	at, known := s.inspected[id]
	s.mu.Unlock()
	if known {
		return at, true
	}
	ins, err := s.st.Inspections(ctx, id, time.Time{}, 1)
	if err != nil {
		s.log.Error("reading the last inspection", "table", id, "error", err.Error())
		return time.Time{}, false
	}
	if len(ins) == 1 {
		at = ins[0].At
	}
	s.mu.Lock()
	if _, set := s.inspected[id]; !set {
		s.inspected[id] = at
	}
	s.mu.Unlock()
	return at, true
}

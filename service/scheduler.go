package service

import (
	"context"
	"errors"
	"time"

	"github.com/deltavacuum/deltavacuum/service/schedule"
)

// StartScheduler sets up the schedules of the tables that have one (a dryRunOnly table is
// never run on a schedule): how far each is handled comes from the state database; a table
// new to it starts now, without catching up on earlier fires.
func (s *Server) StartScheduler(ctx context.Context) error {
	saved, err := s.st.Schedules(ctx)
	if err != nil {
		return err
	}
	handled := map[string]time.Time{}
	var tables []*schedule.Table
	for _, t := range s.tables.all() {
		c := t.cfg
		if c.Schedule == nil || c.DryRunOnly {
			continue
		}
		tables = append(tables, scheduleTable(c))
		if h := saved[c.ID].Handled; !h.IsZero() {
			handled[c.ID] = h
		}
	}
	sched, err := schedule.New(tables, s.cfg.MaxConcurrentRuns, handled, s.now())
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sched != nil {
		return errors.New("service: the scheduler is already started")
	}
	for id := range s.busy {
		sched.Running(id)
	}
	s.sched = sched
	return nil
}

// Tick starts the scheduled runs and the periodic inspections due at the server's clock, and
// records how far each table's schedule is handled. The command calls it every few seconds; tests call it with an
// injected clock.
func (s *Server) Tick(ctx context.Context) {
	now := s.now()
	s.refreshDiscovery(ctx, now)
	s.purgeTrash(ctx, now)
	s.inspectDue(ctx, now)
	all := s.tables.all()
	s.mu.Lock()
	if s.sched == nil || s.closed {
		s.mu.Unlock()
		return
	}
	before := map[string]time.Time{}
	for _, t := range all {
		before[t.cfg.ID] = s.sched.Handled(t.cfg.ID)
	}
	starts, err := s.sched.Tick(now)
	after := map[string]time.Time{}
	for id := range before {
		after[id] = s.sched.Handled(id)
	}
	s.mu.Unlock()
	if err != nil {
		s.log.Error("scheduler", "error", err.Error())
		return
	}
	started := map[string]bool{}
	for _, st := range starts {
		started[st.Table] = true
		t, ok := s.tables.lookup(st.Table)
		if !ok { // no longer discovered: free the slot the scheduler gave it
			s.mu.Lock()
			if s.sched != nil {
				s.sched.Finished(st.Table)
			}
			s.mu.Unlock()
			continue
		}
		if err := s.st.SetHandled(ctx, st.Table, st.Fire); err != nil {
			s.log.Error("recording the schedule", "table", st.Table, "error", err.Error())
		}
		id, err := s.start(ctx, t, "schedule")
		if err != nil {
			// The fire is lost, not retried: the next one decides (docs/service.md).
			s.metrics.misfires.WithLabelValues(st.Table).Inc()
			s.log.Warn("scheduled run not started", "table", st.Table, "fire", st.Fire.UTC(), "error", err.Error())
			s.mu.Lock()
			if _, busy := s.busy[st.Table]; !busy && s.sched != nil {
				s.sched.Finished(st.Table)
			}
			s.mu.Unlock()
			continue
		}
		s.log.Info("scheduled run", "table", st.Table, "fire", st.Fire.UTC(), "run", id)
	}
	for id, h := range after {
		if started[id] || h.Equal(before[id]) {
			continue
		}
		s.metrics.misfires.WithLabelValues(id).Inc()
		s.log.Warn("scheduled fire lost", "table", id, "fire", h.UTC())
		if err := s.st.SetHandled(ctx, id, h); err != nil {
			s.log.Error("recording the schedule", "table", id, "error", err.Error())
		}
	}
}

package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/schedule"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/service/tables"
)

// scheduler starts the tables' scheduled runs through the runner, when service/schedule says
// (cron, window, jitter, the limit of runs at once), and keeps in the state database how far
// each table's schedule is handled. It holds no run logic: a scheduled run is the runner's
// start, as a run through the API is.
type scheduler struct {
	*tables.Env
	st       *state.DB
	limit    int // maxConcurrentRuns
	tables   *tables.Set
	runner   *Runner
	misfires *prometheus.CounterVec

	mu    sync.Mutex          // guards sched; taken after runner.mu, never before
	sched *schedule.Scheduler // nil until started
}

// start sets up the schedules of the tables that have one (a dryRunOnly table is never run on a
// schedule): how far each is handled comes from the state database; a table new to it starts
// now, without catching up on earlier fires.
func (c *scheduler) start(ctx context.Context) error {
	saved, err := c.st.Schedules(ctx)
	if err != nil {
		return err
	}
	handled := map[string]time.Time{}
	var scheduled []*schedule.Table
	for _, t := range c.tables.All() {
		tc := t.Cfg
		if tc.Schedule == nil || tc.DryRunOnly {
			continue
		}
		scheduled = append(scheduled, scheduleTable(tc))
		if h := saved[tc.ID].Handled; !h.IsZero() {
			handled[tc.ID] = h
		}
	}
	sched, err := schedule.New(scheduled, c.limit, handled, c.Now())
	if err != nil {
		return err
	}
	return c.runner.attach(c, func(held []string) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.sched != nil {
			return errors.New("service: the scheduler is already started")
		}
		for _, id := range held {
			sched.Running(id)
		}
		c.sched = sched
		return nil
	})
}

// running and finished are the scheduler's slots (runner.attach): the runner tells it of
// every table it holds and releases.
func (c *scheduler) running(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sched.Running(id)
}

func (c *scheduler) finished(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sched.Finished(id)
}

// tick starts the scheduled runs due at now and records how far each table's schedule is
// handled; a fire lost or not started is counted and logged.
func (c *scheduler) tick(ctx context.Context, now time.Time) {
	all := c.tables.All()
	if c.runner.closing() {
		return
	}
	c.mu.Lock()
	if c.sched == nil {
		c.mu.Unlock()
		return
	}
	before := map[string]time.Time{}
	for _, t := range all {
		before[t.Cfg.ID] = c.sched.Handled(t.Cfg.ID)
	}
	starts, err := c.sched.Tick(now)
	after := map[string]time.Time{}
	for id := range before {
		after[id] = c.sched.Handled(id)
	}
	c.mu.Unlock()
	if err != nil {
		c.Log.Error("scheduler", "error", err.Error())
		return
	}
	started := map[string]bool{}
	for _, st := range starts {
		started[st.Table] = true
		t, ok := c.tables.Lookup(st.Table)
		if !ok { // no longer discovered: free the slot the scheduler gave it
			c.finished(st.Table)
			continue
		}
		if err := c.st.SetHandled(ctx, st.Table, st.Fire); err != nil {
			c.Log.Error("recording the schedule", "table", st.Table, "error", err.Error())
		}
		id, err := c.runner.Start(ctx, t, Ask{Requester: state.BySchedule})
		if err != nil {
			// The fire is lost, not retried: the next one decides (docs/service.md).
			c.misfires.WithLabelValues(st.Table).Inc()
			c.Log.Warn("scheduled run not started", "table", st.Table, "fire", st.Fire.UTC(), "error", err.Error())
			c.runner.freeSlot(st.Table)
			continue
		}
		c.Log.Info("scheduled run", "table", st.Table, "fire", st.Fire.UTC(), "run", id)
	}
	for id, h := range after {
		if started[id] || h.Equal(before[id]) {
			continue
		}
		c.misfires.WithLabelValues(id).Inc()
		c.Log.Warn("scheduled fire lost", "table", id, "fire", h.UTC())
		if err := c.st.SetHandled(ctx, id, h); err != nil {
			c.Log.Error("recording the schedule", "table", id, "error", err.Error())
		}
	}
}

// handled returns how far the schedule of each of tables is handled; nil before start.
func (c *scheduler) handled(ts []*tables.Table) map[string]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sched == nil {
		return nil
	}
	out := map[string]time.Time{}
	for _, t := range ts {
		out[t.Cfg.ID] = c.sched.Handled(t.Cfg.ID)
	}
	return out
}

// found schedules the tables discovery added (tables.Discovery.OnChange), each handled up to
// where the state database says (a table found again after a restart goes on where it was),
// else from now; and stops scheduling those it removed. A dryRunOnly table, or one without a
// schedule, is never scheduled.
func (c *scheduler) found(ctx context.Context, added []*tables.Table, removed []string, now time.Time) {
	saved, err := c.st.Schedules(ctx)
	if err != nil {
		c.Log.Error("reading the schedules of the discovered tables", "error", err.Error())
		saved = nil
	}
	for _, t := range added {
		if t.Cfg.Schedule == nil || t.Cfg.DryRunOnly {
			continue
		}
		h := saved[t.Cfg.ID].Handled
		if h.IsZero() {
			h = now
		}
		if err := c.add(t, h); err != nil {
			c.Log.Error("scheduling a discovered table", "table", t.Cfg.ID, "error", err.Error())
		}
	}
	for _, id := range removed {
		c.remove(id)
	}
}

// add schedules a table discovery found (handled up to handled), remove stops scheduling one
// no longer found; both do nothing before start.
func (c *scheduler) add(t *tables.Table, handled time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sched == nil {
		return nil
	}
	return c.sched.Add(scheduleTable(t.Cfg), handled)
}

func (c *scheduler) remove(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sched != nil {
		c.sched.Remove(id)
	}
}

func scheduleTable(c *config.Table) *schedule.Table {
	return &schedule.Table{ID: c.ID, Cron: c.Schedule.Cron, Window: c.Schedule.Window, Jitter: c.Schedule.Jitter}
}

// ScheduleTable is the schedule of a configured table, as service/schedule takes it.
func ScheduleTable(c *config.Table) *schedule.Table { return scheduleTable(c) }

// StartScheduler sets up the schedules of the tables that have one (scheduler.start).
func (r *Runner) StartScheduler(ctx context.Context) error { return r.sched.start(ctx) }

// Handled returns how far the schedule of each of tables is handled; nil before
// StartScheduler.
func (r *Runner) Handled(ts []*tables.Table) map[string]time.Time { return r.sched.handled(ts) }

// Tick does what is due at the runner's clock: it refreshes the discover roots, purges trash
// past the undo window, starts the periodic inspections, looks at the health of tables not seen
// yet, starts the scheduled runs, and records how far each table's schedule is handled. The
// command calls it every few seconds (service.Server.Tick); tests call it with an injected
// clock.
func (r *Runner) Tick(ctx context.Context) {
	now := r.Now()
	if r.disc != nil {
		r.disc.Refresh(ctx, now)
	}
	r.purgeTrash(ctx, now)
	r.inspectDue(ctx, now)
	r.checkDue(now)
	r.sched.tick(ctx, now)
}

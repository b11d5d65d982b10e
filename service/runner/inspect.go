package runner

import (
	"context"
	"encoding/json"
	"time"

	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/session"
)

// maxPeriodicInspections bounds the periodic inspections in progress across all tables. They
// are outside maxConcurrentRuns: an inspection reads the log and lists the table, it deletes
// nothing and holds no table.
const maxPeriodicInspections = 2

// InspectRetryAfter is how long after a failed periodic inspection the next is tried (or
// inspectEvery, when shorter): a table that cannot be opened is not retried every tick.
const InspectRetryAfter = time.Hour

// upkeep is what the runner remembers of its background upkeep (guarded by runner.mu): the
// inspections in progress (table id -> why) and how many of them are periodic, when each
// table was last inspected and when a background inspection of it last failed, and when each
// table's trash was last purged (runner_purge.go).
type upkeep struct {
	inspecting map[string]string
	// again: an inspection asked for (after a run or an undo) while one of the table was in
	// progress, which may have read the table before the change: it is taken when that ends.
	again         map[string]string
	periodic      int
	inspected     map[string]time.Time
	inspectFailed map[string]time.Time
	purged        map[string]time.Time
	health        map[string]health // what the last open and log read of each table found (runner_health.go)
	checking      int               // the looks at tables' health in progress
}

// Inspect inspects t at its policy's retention (GET /api/tables/{id}/inspect, and in the
// background) and keeps the figures in the state database (the charts) and the reclaimable
// gauge. Its errors are the table's (ErrTable).
func (r *Runner) Inspect(ctx context.Context, t *tables.Table) (*insight.Report, error) {
	rep, err := r.inspectTable(ctx, t)
	return rep, Of(ErrTable, err)
}

func (r *Runner) inspectTable(ctx context.Context, t *tables.Table) (*insight.Report, error) {
	dt, snap, err := r.snapshot(ctx, t)
	if err != nil {
		return nil, err
	}
	hours, err := retainHours(snap, t.Cfg.Policy)
	if err != nil {
		return nil, err
	}
	ro := r.readerOptions(t)
	rep, err := t.Session.Inspect(ctx, dt, session.InspectRequest{Options: insight.Options{RetainHours: hours, Now: r.Now(), From: snap},
		StreamingCheckpoints: ro.StreamingCheckpoints, Siblings: ro.Siblings})
	if err != nil {
		return nil, err
	}
	if b, err := json.Marshal(rep); err == nil {
		if err := r.st.AddInspection(ctx, state.Inspection{Table: t.Cfg.ID, At: rep.Now, Version: rep.Version, Figures: json.RawMessage(r.Red.String(string(b)))}); err != nil {
			r.Log.Warn("recording the inspection", "table", t.Cfg.ID, "error", err.Error())
		}
	}
	r.mu.Lock()
	r.upkeep.inspected[t.Cfg.ID] = rep.Now
	delete(r.upkeep.inspectFailed, t.Cfg.ID)
	r.mu.Unlock()
	r.m.reclaimable.WithLabelValues(t.Cfg.ID).Set(float64(rep.Reclaimable.Bytes))
	return rep, nil
}

// inspectLater inspects t in the background, why being "after run ID", "after the undo of
// ID" or "periodic": never during shutdown (Shutdown waits for it, and cancels it with the
// runs), never two at once of one table (one after a change asked for meanwhile is taken when
// the one in progress ends), and a periodic one only while no run or undo holds the table and
// fewer than maxPeriodicInspections are in progress. False when it did not start. An error is
// logged.
func (r *Runner) inspectLater(t *tables.Table, why string, periodic bool) bool {
	id := t.Cfg.ID
	r.mu.Lock()
	_, busy := r.holds.busy[id]
	switch {
	case r.holds.closed, periodic && (busy || r.upkeep.periodic >= maxPeriodicInspections):
		r.mu.Unlock()
		return false
	case r.upkeep.inspecting[id] != "":
		if !periodic {
			r.upkeep.again[id] = why
		}
		r.mu.Unlock()
		return false
	}
	r.upkeep.inspecting[id] = why
	if periodic {
		r.upkeep.periodic++
	}
	r.life.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.life.wg.Done()
		_, err := r.inspectTable(r.life.base, t)
		r.mu.Lock()
		delete(r.upkeep.inspecting, id)
		if periodic {
			r.upkeep.periodic--
		}
		if err != nil {
			r.upkeep.inspectFailed[id] = r.Now()
		}
		next, again := r.upkeep.again[id]
		delete(r.upkeep.again, id)
		r.mu.Unlock()
		if err != nil {
			r.Log.Warn("background inspection failed", "table", id, "why", why, "error", err.Error())
		}
		if again {
			r.inspectLater(t, next, false)
		}
	}()
	return true
}

// inspectDue starts the periodic inspections due at now: of each table whose policy's
// inspectEvery has passed since its last inspection (kept in the state database; none: due)
// and, after a failed one, InspectRetryAfter (or inspectEvery, when shorter) since it failed.
func (r *Runner) inspectDue(ctx context.Context, now time.Time) {
	for _, t := range r.tables.All() {
		every := t.Cfg.Policy.InspectEvery
		if every <= 0 {
			continue
		}
		last, ok := r.lastInspected(ctx, t.Cfg.ID)
		if !ok || now.Sub(last) < every {
			continue
		}
		r.mu.Lock()
		failed, hasFailed := r.upkeep.inspectFailed[t.Cfg.ID]
		r.mu.Unlock()
		if hasFailed && now.Sub(failed) < min(every, InspectRetryAfter) {
			continue
		}
		r.inspectLater(t, "periodic", true)
	}
}

// lastInspected is when table id was last inspected (zero: never); false when the state
// database cannot say.
func (r *Runner) lastInspected(ctx context.Context, id string) (time.Time, bool) {
	r.mu.Lock()
	at, known := r.upkeep.inspected[id]
	r.mu.Unlock()
	if known {
		return at, true
	}
	ins, err := r.st.Inspections(ctx, id, time.Time{}, 1)
	if err != nil {
		r.Log.Error("reading the last inspection", "table", id, "error", err.Error())
		return time.Time{}, false
	}
	if len(ins) == 1 {
		at = ins[0].At
	}
	r.mu.Lock()
	if _, set := r.upkeep.inspected[id]; !set {
		r.upkeep.inspected[id] = at
	}
	r.mu.Unlock()
	return at, true
}

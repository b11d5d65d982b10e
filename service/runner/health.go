package runner

import (
	"context"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/service/tables"
)

// A table is broken when it cannot be opened or its log cannot be read (a location that does
// not exist, a folder that is not a Delta table, a name the catalog does not resolve, refused
// credentials): every run, preview and inspection of it fails there. The runner remembers what
// the last attempt found (upkeep.health), from every open and log read it makes, and looks at
// each table it knows nothing of yet, and again at each broken one every InspectRetryAfter, in
// the background (checkDue), so that the tables list says broken, and why, rather than "not
// inspected yet" and "idle".

// health is what the last open and log read of a table found.
type health struct {
	err string // "" when the table opened and its log read
	at  time.Time
}

// Broken says why a table is broken, and since when the service has seen it so.
type Broken struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// The health of a table (Health).
const (
	HealthOK      = "ok"
	HealthBroken  = "broken"
	HealthUnknown = "unknown" // not opened yet by this service
)

// noteHealth records what opening t and reading its log found (err nil: both worked). An
// error of the context (shutdown, a request gone) says nothing of the table.
func (r *Runner) noteHealth(ctx context.Context, t *tables.Table, err error) {
	if err != nil && ctx.Err() != nil {
		return
	}
	h := health{at: r.Now()}
	if err != nil {
		h.err = r.Red.String(err.Error())
	}
	r.mu.Lock()
	prev, known := r.upkeep.health[t.Cfg.ID]
	r.upkeep.health[t.Cfg.ID] = h
	r.mu.Unlock()
	if err != nil && (!known || prev.err == "") {
		r.Log.Warn("the table is broken: it cannot be opened, or its log read", "table", t.Cfg.ID, "error", h.err)
	}
	if err == nil && known && prev.err != "" {
		r.Log.Info("the table opens again", "table", t.Cfg.ID)
	}
}

// Health is the health of table id: HealthOK, HealthBroken (with why), HealthUnknown.
func (r *Runner) Health(id string) (string, *Broken) {
	r.mu.Lock()
	h, known := r.upkeep.health[id]
	r.mu.Unlock()
	switch {
	case !known:
		return HealthUnknown, nil
	case h.err != "":
		return HealthBroken, &Broken{Reason: h.err, At: h.at}
	}
	return HealthOK, nil
}

// snapshot opens t and reads its latest snapshot (the log only), and records what it found.
func (r *Runner) snapshot(ctx context.Context, t *tables.Table) (*deltavacuum.Table, *deltalog.Snapshot, error) {
	dt, err := r.tables.Open(ctx, t)
	if err != nil {
		r.noteHealth(ctx, t, err)
		return nil, nil, err
	}
	snap, err := dt.Snapshot(ctx)
	r.noteHealth(ctx, t, err)
	if err != nil {
		return nil, nil, err
	}
	return dt, snap, nil
}

// maxHealthChecks bounds the looks at tables in progress at once (each reads a table's log).
const maxHealthChecks = 4

// checkDue looks, in the background, at each table whose health is unknown, and again at each
// broken one last looked at InspectRetryAfter ago: never one a run, an undo or an inspection
// holds (they look themselves), never during shutdown, at most maxHealthChecks at once.
func (r *Runner) checkDue(now time.Time) {
	for _, t := range r.tables.All() {
		id := t.Cfg.ID
		r.mu.Lock()
		h, known := r.upkeep.health[id]
		_, busy := r.holds.busy[id]
		due := !known || (h.err != "" && now.Sub(h.at) >= InspectRetryAfter)
		if r.holds.closed || busy || r.upkeep.inspecting[id] != "" || !due || r.upkeep.checking >= maxHealthChecks {
			r.mu.Unlock()
			continue
		}
		r.upkeep.inspecting[id] = "health check"
		r.upkeep.checking++
		r.life.wg.Add(1)
		r.mu.Unlock()
		go func() {
			defer r.life.wg.Done()
			_, _, _ = r.snapshot(r.life.base, t)
			r.mu.Lock()
			delete(r.upkeep.inspecting, id)
			r.upkeep.checking--
			next, again := r.upkeep.again[id]
			delete(r.upkeep.again, id)
			r.mu.Unlock()
			if again {
				r.inspectLater(t, next, false)
			}
		}()
	}
}

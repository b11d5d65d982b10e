package service

import (
	"context"
	"fmt"
	"github.com/deltavacuum/deltavacuum/run"
	"strings"
	"sync"
	"time"

	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// runner starts, records and ends the runs of the tables, cancels and undoes them, purges
// their trash, and inspects a table after each run and on its policy's period. The HTTP
// handlers and the scheduler both call it and hold no run logic; it knows no HTTP (the
// depguard rule service-runner of .golangci.yml): its errors have kinds (errors.go), which the
// handlers turn into status codes (status.go). What a run deletes is the library's.
type runner struct {
	*shared
	st         *state.DB
	tables     *tables
	m          *runMetrics
	hook       *webhook      // posts failed runs; nil without a webhook
	staleAfter time.Duration // a lock ticket or run record with no heartbeat this long is stale
	life       lifetime

	mu     sync.Mutex // guards holds, line and upkeep
	holds  holds
	line   queue  // the starts that wait for a slot (runner_queue.go)
	upkeep upkeep // the background inspections and trash purges (runner_inspect.go, runner_purge.go)

	// endedHook, when set (tests), is called after a run's end is recorded and before its
	// table is released.
	endedHook func(id string)
}

// lifetime is the background work of the runner (runs and inspections): it runs under base,
// which shutdown cancels, and wg counts it. Webhook deliveries run under base too.
type lifetime struct {
	base context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// What holds a table besides a run (whose hold is its id): an undo of a run (holdUndo and the
// run's id), a trash purge.
const (
	holdUndo  = "undo of "
	holdPurge = "trash purge"
)

// holds are the tables this process holds (by a run, an undo or a trash purge), its runs in
// progress, and whether it is shutting down; the scheduler's slots hear of each hold and
// release.
type holds struct {
	busy   map[string]string     // table id -> what holds it (a run id, "undo of …", "trash purge")
	active map[string]*activeRun // by run id
	slots  slots                 // nil until the scheduler is started
	closed bool
}

// slots are the scheduler's count of the tables running (schedule.Scheduler.Running and
// Finished), called with runner.mu held.
type slots interface {
	running(id string)
	finished(id string)
}

// activeRun is a run of this process.
type activeRun struct {
	id, table string
	cancel    context.CancelFunc
	cancelled string           // why it was cancelled, when it was
	counters  *vacuum.Counters // the live progress (GET /api/runs/{id}/progress)
	summary   *run.Summary     // its run record, once read (RUNNING while it runs; runner_state.go)
}

// newRunner returns the runner of the tables, which records its runs in st.
func newRunner(sh *shared, cfg *config.Config, st *state.DB, ts *tables, m *runMetrics, hook *webhook) *runner {
	r := &runner{shared: sh, st: st, tables: ts, m: m, hook: hook, staleAfter: cfg.StaleRunAfter,
		holds:  holds{busy: map[string]string{}, active: map[string]*activeRun{}},
		upkeep: upkeep{inspecting: map[string]string{}, again: map[string]string{}, health: map[string]health{}, inspected: map[string]time.Time{}, inspectFailed: map[string]time.Time{}, purged: map[string]time.Time{}}}
	if r.staleAfter <= 0 {
		r.staleAfter = config.DefaultStaleRunAfter
	}
	r.life.base, r.life.stop = context.WithCancel(context.Background())
	return r
}

// failInterrupted records FAILED the runs a previous process left RUNNING.
func (r *runner) failInterrupted(ctx context.Context) error {
	ids, err := r.st.FailInterrupted(ctx, r.now())
	if err != nil {
		return err
	}
	for _, id := range ids {
		r.log.Warn("a run a previous process left RUNNING is recorded FAILED", "run", id)
	}
	return nil
}

// hold marks table id busy with what in this process; false when it is busy already, or the
// runner is shutting down.
func (r *runner) hold(id, what string) bool {
	ok, _ := r.holdRun(id, what, 0)
	return ok
}

// holdRun holds table id for run what, as hold does, unless max > 0 and this many runs (not
// undos nor trash purges) hold tables now: then errTooMany, decided under the same lock as the
// hold, so that two starts at once cannot both pass the limit. A table busy already, or a
// runner shutting down, is false and nil.
func (r *runner) holdRun(id, what string, max int) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, busy := r.holds.busy[id]; busy || r.holds.closed {
		return false, nil
	}
	if max > 0 {
		n := 0
		for _, h := range r.holds.busy {
			if h != holdPurge && !strings.HasPrefix(h, holdUndo) {
				n++
			}
		}
		if n >= max {
			return false, fmt.Errorf("%w: %d runs are in progress in this service, its maxConcurrentRuns", errTooMany, n)
		}
	}
	r.holds.busy[id] = what
	if r.holds.slots != nil {
		r.holds.slots.running(id)
	}
	return true, nil
}

func (r *runner) release(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.releaseLocked(id)
}

// releaseLocked is release with r.mu held. A slot may have freed: the starts that wait for
// one are looked at.
func (r *runner) releaseLocked(id string) {
	delete(r.holds.busy, id)
	if r.holds.slots != nil {
		r.holds.slots.finished(id)
	}
	r.kickLocked()
}

// held returns the tables held now: table id -> what holds it.
func (r *runner) held() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]string, len(r.holds.busy))
	for k, v := range r.holds.busy {
		out[k] = v
	}
	return out
}

// closing reports whether the runner is shutting down.
func (r *runner) closing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.holds.closed
}

// attach makes s hear of every hold and release from now on, once publish has set it up with
// the tables held now; no hold or release falls between (both run under r.mu).
func (r *runner) attach(s slots, publish func(held []string) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	held := make([]string, 0, len(r.holds.busy))
	for id := range r.holds.busy {
		held = append(held, id)
	}
	if err := publish(held); err != nil {
		return err
	}
	r.holds.slots = s
	return nil
}

// freeSlot gives back the scheduler's slot of table id that a start did not take, unless the
// table is held (its release gives the slot back).
func (r *runner) freeSlot(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, busy := r.holds.busy[id]; !busy && r.holds.slots != nil {
		r.holds.slots.finished(id)
	}
}

// counters are the live counters of run id while it runs in this process, nil otherwise.
func (r *runner) counters(id string) *vacuum.Counters {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ar, ok := r.holds.active[id]; ok {
		return ar.counters
	}
	return nil
}

// shutdown stops starting runs, cancels those in progress (each stops between batches of
// deletes and records VACUUM END and its run as FAILED), and waits for them until ctx ends.
func (r *runner) shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.holds.closed = true
	for _, ar := range r.holds.active {
		if ar.cancelled == "" {
			ar.cancelled = "cancelled: the service is shutting down"
		}
	}
	r.mu.Unlock()
	r.dropQueue()
	r.life.stop()
	done := make(chan struct{})
	go func() { r.life.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shutting down: runs still in progress (they stay RUNNING in the state database and end FAILED at the next start): %w", ctx.Err())
	}
}

// wait waits for the runs and inspections in progress to end.
func (r *runner) wait() { r.life.wg.Wait() }

package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Runner starts, records and ends the runs of the tables, cancels and undoes them, purges their
// trash, and inspects a table after each run and on its policy's period; its scheduler starts
// the scheduled runs through it. The HTTP side and the scheduler both call it and hold no run
// logic. What a run deletes is the library's; what a run's state is, its run record's (package
// run): the runner keeps in the state database only what the service alone knows of a run.
type Runner struct {
	*tables.Env
	st         *state.DB
	tables     *tables.Set
	disc       *tables.Discovery
	sched      *scheduler
	m          *runMetrics
	notify     Notifier      // hears of failed runs and grown untracked files; nil: nobody
	staleAfter time.Duration // a lock ticket or run record with no heartbeat this long is stale
	life       lifetime

	mu     sync.Mutex // guards holds, line, upkeep and endedHook
	holds  holds
	line   queue  // the starts that wait for a slot (queue.go)
	upkeep upkeep // the background inspections and trash purges (inspect.go, purge.go)

	// endedHook, when set (tests, SetEndedHook), is called after a run's end is recorded and
	// before its table is released.
	endedHook func(id string)
}

// Config is what a Runner works with.
type Config struct {
	Env       *tables.Env
	Service   *config.Config // the service's configuration: staleRunAfter, maxConcurrentRuns
	State     *state.DB
	Tables    *tables.Set
	Discovery *tables.Discovery
	// Registry gets the runner's metrics and the scheduler's.
	Registry prometheus.Registerer
	// Notifier, when set, hears of failed runs and of untracked files that grew (the webhook).
	Notifier Notifier
}

// lifetime is the background work of the runner (runs and inspections): it runs under base,
// which shutdown cancels, and wg counts it. Webhook deliveries run under base too.
type lifetime struct {
	base context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// What holds a table besides a run (whose hold is its id): an undo of a run (HoldUndo and the
// run's id), a trash purge.
const (
	HoldUndo  = "undo of "
	HoldPurge = "trash purge"
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
	summary   *run.Summary     // its run record, once read (RUNNING while it runs; view.go)
}

// New returns the runner of the tables, which records what the service alone knows of its runs
// in the state database; its scheduler hears of the tables discovery adds and removes.
func New(c Config) *Runner {
	r := &Runner{Env: c.Env, st: c.State, tables: c.Tables, disc: c.Discovery, m: newRunMetrics(c.Registry), notify: c.Notifier,
		staleAfter: c.Service.StaleRunAfter,
		holds:      holds{busy: map[string]string{}, active: map[string]*activeRun{}},
		upkeep:     upkeep{inspecting: map[string]string{}, again: map[string]string{}, health: map[string]health{}, inspected: map[string]time.Time{}, inspectFailed: map[string]time.Time{}, purged: map[string]time.Time{}}}
	if r.staleAfter <= 0 {
		r.staleAfter = config.DefaultStaleRunAfter
	}
	r.life.base, r.life.stop = context.WithCancel(context.Background())
	r.sched = &scheduler{Env: c.Env, st: c.State, limit: c.Service.MaxConcurrentRuns, tables: c.Tables, runner: r, misfires: newMisfires(c.Registry)}
	if c.Discovery != nil {
		c.Discovery.OnChange(r.sched.found)
	}
	return r
}

// StaleAfter is how long a lock ticket or run record may go without a heartbeat before it is
// stale (the service's staleRunAfter): the pins of the HTTP side take the table's lock with it.
func (r *Runner) StaleAfter() time.Duration { return r.staleAfter }

// SetEndedHook makes every run call hook after its end is recorded and before its table is
// released (tests: a client that sees the end a moment before the release); nil for none.
func (r *Runner) SetEndedHook(hook func(id string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endedHook = hook
}

// hold marks table id busy with what in this process; false when it is busy already, or the
// runner is shutting down.
func (r *Runner) hold(id, what string) bool {
	ok, _ := r.holdRun(id, what, 0)
	return ok
}

// holdRun holds table id for run what, as hold does, unless max > 0 and this many runs (not
// undos nor trash purges) hold tables now: then ErrTooMany, decided under the same lock as the
// hold, so that two starts at once cannot both pass the limit. A table busy already, or a
// runner shutting down, is false and nil.
func (r *Runner) holdRun(id, what string, max int) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, busy := r.holds.busy[id]; busy || r.holds.closed {
		return false, nil
	}
	if max > 0 {
		n := 0
		for _, h := range r.holds.busy {
			if h != HoldPurge && !strings.HasPrefix(h, HoldUndo) {
				n++
			}
		}
		if n >= max {
			return false, fmt.Errorf("%w: %d runs are in progress in this service, its maxConcurrentRuns", ErrTooMany, n)
		}
	}
	r.holds.busy[id] = what
	if r.holds.slots != nil {
		r.holds.slots.running(id)
	}
	return true, nil
}

func (r *Runner) release(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.releaseLocked(id)
}

// releaseLocked is release with r.mu held. A slot may have freed: the starts that wait for
// one are looked at.
func (r *Runner) releaseLocked(id string) {
	delete(r.holds.busy, id)
	if r.holds.slots != nil {
		r.holds.slots.finished(id)
	}
	r.kickLocked()
}

// Held returns the tables held now in this service: table id -> what holds it (a run's id, the
// undo of a run: HoldUndo and its id, a trash purge: HoldPurge).
func (r *Runner) Held() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]string, len(r.holds.busy))
	for k, v := range r.holds.busy {
		out[k] = v
	}
	return out
}

// closing reports whether the runner is shutting down.
func (r *Runner) closing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.holds.closed
}

// attach makes s hear of every hold and release from now on, once publish has set it up with
// the tables held now; no hold or release falls between (both run under r.mu).
func (r *Runner) attach(s slots, publish func(held []string) error) error {
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
func (r *Runner) freeSlot(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, busy := r.holds.busy[id]; !busy && r.holds.slots != nil {
		r.holds.slots.finished(id)
	}
}

// Counters are the live counters of run id while it runs in this process, nil otherwise.
func (r *Runner) Counters(id string) *vacuum.Counters {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ar, ok := r.holds.active[id]; ok {
		return ar.counters
	}
	return nil
}

// cancelledByShutdown is why the service asks its runs to stop when it shuts down.
const cancelledByShutdown = "cancelled: the service is shutting down"

// Shutdown stops starting runs, cancels those in progress (each stops between batches of
// deletes, records VACUUM END and ends its run record FAILED), and waits for them until ctx
// ends.
func (r *Runner) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.holds.closed = true
	var asked []string
	for _, ar := range r.holds.active {
		if ar.cancelled == "" {
			ar.cancelled = cancelledByShutdown
			asked = append(asked, ar.id)
		}
	}
	r.mu.Unlock()
	for _, id := range asked {
		r.noteCancel(ctx, id, cancelledByShutdown)
	}
	r.dropQueue()
	r.life.stop()
	done := make(chan struct{})
	go func() { r.life.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shutting down: runs still in progress (their run records say RUNNING: the service shows them interrupted at its next start): %w", ctx.Err())
	}
}

// Wait waits for the runs, inspections and trash purges in progress to end.
func (r *Runner) Wait() { r.life.wg.Wait() }

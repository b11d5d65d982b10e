package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum/service/tables"
)

// The queue of starts that wait for a slot: a Fabric job whose table is idle while the service
// runs maxConcurrentRuns runs already is not refused (Fabric queues such a job as NotStarted);
// it waits here, in the order it came, and starts when a run ends. The queue is bounded
// (queueLimit); it lives in memory, as the jobs the job API deduplicated do, and a restart
// loses it. A queued start is not a run yet: it has its id (the run's, once it starts) and no
// row in the state database. One that never runs (its table held when its turn came, another
// refusal, a cancel, the service shutting down) tells its submitter why, through Skipped.

// defaultQueueLimit bounds the starts that wait: past it a job is refused, 429 as before.
const defaultQueueLimit = 100

// Queued is a start that waits for a slot.
type Queued struct {
	ID    string
	Table *tables.Table
	Ask   Ask
	At    time.Time // when it was queued
	// Skipped is told why the start never ran (the error's kind: ErrBusy when its table was
	// held, ErrCancelledQueued, ErrClosed, or the refusal of Start). It is called without the
	// runner's lock, before the start leaves the line: whoever looks for it finds it waiting, or
	// finds what Skipped recorded.
	Skipped func(err error)

	step      int  // waiting, starting or leaving (guarded by Runner.mu)
	cancelled bool // a cancel came while it was starting: its run is cancelled once started
}

// The steps of a queued start.
const (
	stepWaiting = iota
	stepStarting
	stepLeaving
)

// queue is the runner's line of waiting starts (guarded by runner.mu).
type queue struct {
	items    []*Queued
	limit    int  // defaultQueueLimit when 0
	draining bool // a drain is running
	again    bool // a slot freed while it ran: it looks once more
}

// SetQueueLimit bounds the starts that wait to n (0: defaultQueueLimit); tests make the queue
// short to fill it.
func (r *Runner) SetQueueLimit(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.line.limit = n
}

// Enqueue puts q at the end of the line; ErrTooMany when the line is full, ErrClosed when the
// service is shutting down. It starts (Start, under q's id) when a run ends and frees a slot,
// unless another waits before it.
func (r *Runner) Enqueue(q *Queued) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holds.closed {
		return ErrClosed
	}
	limit := r.line.limit
	if limit <= 0 {
		limit = defaultQueueLimit
	}
	if len(r.line.items) >= limit {
		return fmt.Errorf("%w: %d jobs wait for a slot already, as many as the service keeps waiting", ErrTooMany, len(r.line.items))
	}
	q.step = stepWaiting
	r.line.items = append(r.line.items, q)
	r.Log.Info("run queued: the service runs as many runs as it may at once", "run", q.ID, "table", q.Table.Cfg.ID, "waiting", len(r.line.items))
	r.kickLocked() // a slot may have freed since the start was refused
	return nil
}

// Queued returns the start of id that waits (or is being started).
func (r *Runner) Queued(id string) (Queued, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.line.items {
		if q.ID == id {
			return *q, true
		}
	}
	return Queued{}, false
}

// QueuedFor returns the id of a start of table that waits, "" when none does.
func (r *Runner) QueuedFor(table string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.line.items {
		if q.Table.Cfg.ID == table && q.step != stepLeaving {
			return q.ID
		}
	}
	return ""
}

// Waiting returns the starts that wait, in their order.
func (r *Runner) Waiting() []Queued {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Queued, len(r.line.items))
	for i, q := range r.line.items {
		out[i] = *q
	}
	return out
}

// CancelQueued cancels the start of id: one that waits leaves the line (told
// ErrCancelledQueued); one being started is cancelled as a run once it has started. False when
// no start of that id is in the line.
func (r *Runner) CancelQueued(id string) bool {
	r.mu.Lock()
	var q *Queued
	for _, x := range r.line.items {
		if x.ID == id {
			q = x
			break
		}
	}
	switch {
	case q == nil || q.step == stepLeaving:
		r.mu.Unlock()
		return q != nil
	case q.step == stepStarting:
		q.cancelled = true
		r.mu.Unlock()
		return true
	}
	q.step = stepLeaving
	r.mu.Unlock()
	r.Log.Info("queued run cancelled before it started", "run", id, "table", q.Table.Cfg.ID)
	r.leave(q, ErrCancelledQueued)
	return true
}

// leave tells q why it never ran, then takes it out of the line.
func (r *Runner) leave(q *Queued, why error) {
	q.Skipped(why)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.line.items {
		if x == q {
			r.line.items = append(r.line.items[:i:i], r.line.items[i+1:]...)
			return
		}
	}
}

// kickLocked starts a drain of the line unless one runs (then it looks once more when it is
// done); r.mu is held. Every release of a table calls it: a run that ends frees a slot.
func (r *Runner) kickLocked() {
	if len(r.line.items) == 0 || r.holds.closed {
		return
	}
	if r.line.draining {
		r.line.again = true
		return
	}
	r.line.draining = true
	r.life.wg.Add(1)
	go r.drain()
}

// drain starts the waiting starts, in order, while the service has a slot for them: the
// first that waits starts through start, as any run does (its table idle in this service and
// by its lock); refused for want of a slot, it waits on, first, until the next release.
func (r *Runner) drain() {
	defer r.life.wg.Done()
	for {
		r.mu.Lock()
		r.line.again = false
		var q *Queued
		for _, x := range r.line.items {
			if x.step == stepWaiting {
				q = x
				break
			}
		}
		if r.holds.closed || q == nil {
			r.line.draining = false
			r.mu.Unlock()
			return
		}
		q.step = stepStarting
		r.mu.Unlock()

		a := q.Ask
		a.ID = q.ID
		_, err := r.Start(r.life.base, q.Table, a)
		r.mu.Lock()
		cancelled := q.cancelled
		if errors.Is(err, ErrTooMany) && !cancelled {
			q.step = stepWaiting
			if !r.line.again || r.holds.closed {
				r.line.draining = false
				r.mu.Unlock()
				return
			}
			r.mu.Unlock()
			continue
		}
		q.step = stepLeaving
		r.mu.Unlock()
		switch {
		case errors.Is(err, ErrTooMany): // cancelled while it was being started
			r.leave(q, ErrCancelledQueued)
		case err != nil:
			r.Log.Info("queued run not started", "run", q.ID, "table", q.Table.Cfg.ID, "error", r.Red.String(err.Error()))
			r.leave(q, err)
		default:
			r.Log.Info("queued run started", "run", q.ID, "table", q.Table.Cfg.ID, "waited", r.Now().Sub(q.At).String())
			if cancelled {
				_ = r.Cancel(r.life.base, q.ID)
			}
			r.mu.Lock()
			for i, x := range r.line.items {
				if x == q {
					r.line.items = append(r.line.items[:i:i], r.line.items[i+1:]...)
					break
				}
			}
			r.mu.Unlock()
		}
	}
}

// dropQueue tells every start that waits that the service is shutting down (shutdown).
func (r *Runner) dropQueue() {
	r.mu.Lock()
	var gone []*Queued
	for _, q := range r.line.items {
		if q.step == stepWaiting {
			q.step = stepLeaving
			gone = append(gone, q)
		}
	}
	r.mu.Unlock()
	for _, q := range gone {
		r.leave(q, ErrClosed)
	}
}

// notStartedError is the error of Run for a start that waits: it is not a run yet.
func notStartedError(q Queued) error {
	return Of(ErrNotFound, fmt.Errorf("run %s of table %s has not started: it waits for a slot (the service runs maxConcurrentRuns runs at once), queued %s; ask again when a run ends", q.ID, q.Table.Cfg.ID, q.At.UTC().Format(time.RFC3339)))
}

// Check refuses now what Start would refuse at once, holding nothing: a dryRunOnly table, one
// that cannot be opened or read, a one-off retention the service or the library's safety
// check refuses. A start that is to wait in the queue is checked so: its job is refused now,
// not failed when its turn comes.
func (r *Runner) Check(ctx context.Context, t *tables.Table, a Ask) error {
	if t.Cfg.DryRunOnly {
		return fmt.Errorf("table %s: %w", t.Cfg.ID, ErrDryRunOnly)
	}
	dt, err := r.tables.Open(context.WithoutCancel(ctx), t)
	if err != nil {
		r.noteHealth(ctx, t, err)
		return Of(ErrTable, err)
	}
	_, err = r.request(ctx, t, dt, false, a.RetainHours)
	return Of(ErrTable, err)
}

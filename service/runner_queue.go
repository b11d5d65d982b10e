package service

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The queue of starts that wait for a slot: a Fabric job whose table is idle while the service
// runs maxConcurrentRuns runs already is not refused (Fabric queues such a job as NotStarted);
// it waits here, in the order it came, and starts when a run ends. The queue is bounded
// (queueLimit); it lives in memory, as the jobs the job API deduplicated do, and a restart
// loses it. A queued start is not a run yet: it has its id (the run's, once it starts) and no
// row in the state database. One that never runs (its table held when its turn came, another
// refusal, a cancel, the service shutting down) tells its submitter why, through skipped.

// defaultQueueLimit bounds the starts that wait: past it a job is refused, 429 as before.
const defaultQueueLimit = 100

// errCancelledQueued: a queued start cancelled before it started.
var errCancelledQueued = errors.New("cancelled before it started: nothing ran")

// queuedStart is a start that waits for a slot.
type queuedStart struct {
	id      string
	t       *table
	trigger string
	o       runOptions
	at      time.Time // when it was queued
	// skipped is told why the start never ran (the error's kind: ErrBusy or
	// state.ErrTableBusy when its table was held, errCancelledQueued, errClosed, or the
	// refusal of start). It is called without the runner's lock, before the start leaves the
	// line: whoever looks for it finds it waiting, or finds what skipped recorded.
	skipped func(err error)

	step      int  // waiting, starting or leaving (guarded by runner.mu)
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
	items    []*queuedStart
	limit    int  // defaultQueueLimit when 0
	draining bool // a drain is running
	again    bool // a slot freed while it ran: it looks once more
}

// enqueue puts q at the end of the line; errTooMany when the line is full, errClosed when the
// service is shutting down.
func (r *runner) enqueue(q *queuedStart) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holds.closed {
		return errClosed
	}
	limit := r.line.limit
	if limit <= 0 {
		limit = defaultQueueLimit
	}
	if len(r.line.items) >= limit {
		return fmt.Errorf("%w: %d jobs wait for a slot already, as many as the service keeps waiting", errTooMany, len(r.line.items))
	}
	q.step = stepWaiting
	r.line.items = append(r.line.items, q)
	r.log.Info("run queued: the service runs as many runs as it may at once", "run", q.id, "table", q.t.cfg.ID, "waiting", len(r.line.items))
	r.kickLocked() // a slot may have freed since the start was refused
	return nil
}

// queued returns the start of id that waits (or is being started).
func (r *runner) queued(id string) (queuedStart, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.line.items {
		if q.id == id {
			return *q, true
		}
	}
	return queuedStart{}, false
}

// queuedFor returns the id of a start of table that waits, "" when none does.
func (r *runner) queuedFor(table string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.line.items {
		if q.t.cfg.ID == table && q.step != stepLeaving {
			return q.id
		}
	}
	return ""
}

// waiting returns the starts that wait, in their order.
func (r *runner) waiting() []queuedStart {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]queuedStart, len(r.line.items))
	for i, q := range r.line.items {
		out[i] = *q
	}
	return out
}

// cancelQueued cancels the start of id: one that waits leaves the line (told
// errCancelledQueued); one being started is cancelled as a run once it has started. False when
// no start of that id is in the line.
func (r *runner) cancelQueued(id string) bool {
	r.mu.Lock()
	var q *queuedStart
	for _, x := range r.line.items {
		if x.id == id {
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
	r.log.Info("queued run cancelled before it started", "run", id, "table", q.t.cfg.ID)
	r.leave(q, errCancelledQueued)
	return true
}

// leave tells q why it never ran, then takes it out of the line.
func (r *runner) leave(q *queuedStart, why error) {
	q.skipped(why)
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
func (r *runner) kickLocked() {
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
func (r *runner) drain() {
	defer r.life.wg.Done()
	for {
		r.mu.Lock()
		r.line.again = false
		var q *queuedStart
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

		o := q.o
		o.ID = q.id
		_, err := r.start(r.life.base, q.t, q.trigger, o)
		r.mu.Lock()
		cancelled := q.cancelled
		if errors.Is(err, errTooMany) && !cancelled {
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
		case errors.Is(err, errTooMany): // cancelled while it was being started
			r.leave(q, errCancelledQueued)
		case err != nil:
			r.log.Info("queued run not started", "run", q.id, "table", q.t.cfg.ID, "error", r.red.String(err.Error()))
			r.leave(q, err)
		default:
			r.log.Info("queued run started", "run", q.id, "table", q.t.cfg.ID, "waited", r.now().Sub(q.at).String())
			if cancelled {
				_ = r.cancel(r.life.base, q.id)
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
func (r *runner) dropQueue() {
	r.mu.Lock()
	var gone []*queuedStart
	for _, q := range r.line.items {
		if q.step == stepWaiting {
			q.step = stepLeaving
			gone = append(gone, q)
		}
	}
	r.mu.Unlock()
	for _, q := range gone {
		r.leave(q, errClosed)
	}
}

// notStartedError is the error of runDoc for a start that waits: it is not a run yet.
func notStartedError(q queuedStart) error {
	return of(errNotFound, fmt.Errorf("run %s of table %s has not started: it waits for a slot (the service runs maxConcurrentRuns runs at once), queued %s; ask again when a run ends", q.id, q.t.cfg.ID, q.at.UTC().Format(time.RFC3339)))
}

// check refuses now what start would refuse at once, holding nothing: a dryRunOnly table, one
// that cannot be opened or read, a one-off retention the service or the library's safety
// check refuses. A start that is to wait in the queue is checked so: its job is refused now,
// not failed when its turn comes.
func (r *runner) check(ctx context.Context, t *table, o runOptions) error {
	if t.cfg.DryRunOnly {
		return fmt.Errorf("table %s: %w", t.cfg.ID, errDryRunOnly)
	}
	dt, err := r.tables.open(context.WithoutCancel(ctx), t)
	if err != nil {
		r.noteHealth(ctx, t, err)
		return of(errTable, err)
	}
	_, err = r.request(ctx, t, dt, false, o.RetainHours)
	return of(errTable, err)
}

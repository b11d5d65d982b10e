package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/session"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Ask is a run as it is asked for, beyond its table's policy: who asks, and what.
type Ask struct {
	// Requester is who asks: state.BySchedule, state.ByAPI, state.ByPage or state.ByFabric.
	Requester string
	// Plan, when set, is the digest of the previewed plan the run must execute (the library
	// compares its new plan with it before deleting or committing anything).
	Plan string
	// RetainHours, when set, is the one-off retention of that preview, or of a Fabric job
	// (oneOffHours).
	RetainHours *float64
	// OneOffFrom says where RetainHours came from: OneOffPreview or OneOffFabric.
	OneOffFrom string
	// MaxRunning, when set, refuses the run (ErrTooMany) while that many runs are in progress in
	// the service (a Fabric job: it waits in the runner's queue instead, queue.go).
	MaxRunning int
	// ID, when set, is the run's id: the one a queued start was given when it was queued.
	ID string
}

// Where a one-off retention came from (Figures.OneOffFrom).
const (
	OneOffPreview = "preview"
	OneOffFabric  = "fabricJob"
)

// Start starts a run of t in the background and returns its id: the service's run, its lock
// ticket and its run record beside the table (what deltavacuum runs lists) are all named by it.
// The table must be idle in this service and by its lock. A refusal before the run wrote
// anything into the table is kept in the state database (the run shows FAILED, with it), and
// its id returned with a nil error. An error without a kind of its own is the table's
// (ErrTable).
func (r *Runner) Start(ctx context.Context, t *tables.Table, a Ask) (string, error) {
	id, err := r.startRun(ctx, t, a)
	return id, Of(ErrTable, err)
}

func (r *Runner) startRun(ctx context.Context, t *tables.Table, a Ask) (string, error) {
	if t.Cfg.DryRunOnly {
		return "", fmt.Errorf("table %s: %w", t.Cfg.ID, ErrDryRunOnly)
	}
	now := r.Now()
	id := a.ID
	if id == "" {
		id = run.NewID(now)
	}
	if ok, err := r.holdRun(t.Cfg.ID, id, a.MaxRunning); err != nil {
		return "", err
	} else if !ok {
		if r.closing() {
			return "", ErrClosed
		}
		return "", fmt.Errorf("table %s: %w in this service", t.Cfg.ID, ErrBusy)
	}
	held := true
	defer func() {
		if held {
			r.release(t.Cfg.ID)
		}
	}()
	// The table outlives the request: a client an object store builds may keep the context
	// it was made with (for refreshing credentials).
	dt, err := r.tables.Open(context.WithoutCancel(ctx), t)
	if err != nil {
		r.noteHealth(ctx, t, err)
		return "", err
	}
	req, err := r.request(ctx, t, dt, false, a.RetainHours)
	if err != nil {
		return "", err
	}
	req.ExpectPlan, req.Counters, req.RunID = a.Plan, vacuum.NewCounters(), id
	asked := state.Run{ID: id, Table: t.Cfg.ID, Requester: a.Requester, Mode: string(req.Mode), Asked: now, PlanDigest: a.Plan}
	if a.RetainHours != nil {
		h := *a.RetainHours
		asked.RetainHours, asked.OneOffFrom = &h, a.OneOffFrom
	}
	// The run starts now (run.Start: the table checked, its lock taken): a table held by
	// another process is refused at once, and a refusal writes nothing.
	started, err := r.startLocked(ctx, t, dt, req)
	if errors.Is(err, ErrBusy) {
		return "", err
	}
	if err != nil {
		// Refused before anything was written (the table's retention check, its features, its
		// log): only the service can say so, and it keeps the run, refused, as a run that failed.
		return id, r.refused(ctx, t, asked, err)
	}
	running := false
	defer func() {
		if !running {
			_ = started.Close(ctx)
		}
	}()
	// In progress here before it is in the state database: whoever reads it there finds it
	// planned, never ended before it began.
	runCtx, cancel := context.WithCancel(r.life.base)
	ar := &activeRun{id: id, table: t.Cfg.ID, cancel: cancel, counters: req.Counters}
	r.mu.Lock()
	r.holds.active[id] = ar
	r.mu.Unlock()
	if err := r.st.AddRun(ctx, asked); err != nil {
		r.mu.Lock()
		delete(r.holds.active, id)
		r.mu.Unlock()
		cancel()
		return "", err
	}
	r.m.inProgress.Inc()
	r.Log.Info("run started", "run", id, "table", t.Cfg.ID, "requester", a.Requester, "mode", req.Mode)
	held, running = false, true
	r.life.wg.Add(1)
	go r.execute(runCtx, ar, t, started, req, asked)
	return id, nil
}

// refused keeps run asked of t, which the library refused before writing anything into the
// table, as asked and refused: the page, the API and Fabric's job show it as a failed run.
func (r *Runner) refused(ctx context.Context, t *tables.Table, asked state.Run, why error) error {
	bg := context.WithoutCancel(ctx)
	msg := r.Red.String(why.Error())
	at := r.Now()
	asked.Refusal, asked.Refused = msg, &at
	if err := r.st.AddRun(bg, asked); err != nil {
		return err
	}
	r.m.runs.WithLabelValues(t.Cfg.ID, asked.Trigger(), run.StatusFailed).Inc()
	r.Log.Info("run refused", "run", asked.ID, "table", t.Cfg.ID, "requester", asked.Requester, "error", msg)
	r.inspectLater(t, "after run "+asked.ID, false)
	r.notifyFailed(bg, asked.ID, t)
	return nil
}

// notifyFailed tells the notifier of the failed run id of t, as the API shows it now.
func (r *Runner) notifyFailed(ctx context.Context, id string, t *tables.Table) {
	if r.notify == nil {
		return
	}
	d, err := r.Run(ctx, id)
	if err != nil {
		r.Log.Warn("webhook: reading the run", "run", id, "error", err.Error())
		return
	}
	r.notify.RunFailed(r.life.base, d.Run, t.Cfg)
}

// startLocked starts the real run req of table t (session.Start: the table checked, its lock
// taken), with the service's clock and stale limit. A table another process holds is ErrBusy.
// The tickets of dead processes it took over are logged and counted, with what to do about
// their runs.
func (r *Runner) startLocked(ctx context.Context, t *tables.Table, dt *deltavacuum.Table, req session.VacuumRequest) (*session.Started, error) {
	req.StaleRunAfter = r.staleAfter
	started, err := t.Session.Start(ctx, dt, req)
	if errors.Is(err, run.ErrLocked) {
		return nil, fmt.Errorf("table %s: %w: %w", t.Cfg.ID, ErrBusy, err)
	}
	if err != nil {
		return nil, err
	}
	for _, h := range started.TakenOver() {
		r.m.staleRecords.WithLabelValues(t.Cfg.ID).Inc()
		r.Log.Warn("lock of a dead process taken over", "table", t.Cfg.ID, "ticket", h.Key, "state", h.State, "note", run.TakeoverNote(ctx, dt.Store, h))
	}
	return started, nil
}

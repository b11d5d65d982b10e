package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/session"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// execute runs the run ar in the background and sees to its end. What the run did is its run
// record's: execute keeps in the state database only the link to that record, or, when the run
// ended without writing one, why (the service alone can say it). Then, under the lock a start
// takes, the last FULL run of an auto policy, and the release of the table; then the metrics,
// the inspection after the run and the notifier, each from the run's state as its record says.
func (r *Runner) execute(ctx context.Context, ar *activeRun, t *tables.Table, started *session.Started, req session.VacuumRequest, asked state.Run) {
	defer r.life.wg.Done()
	defer ar.cancel()
	res, err := started.Vacuum(ctx)
	r.noteFallback(t, req, res, ar.id)
	bg := context.WithoutCancel(ctx)
	msg := ""
	switch {
	case err != nil:
		msg = r.Red.String(err.Error())
	case res == nil || res.Status != vacuum.StatusCompleted:
		msg = "the run did not complete"
	}
	recorded := res != nil && res.RunID != ""
	if recorded {
		asked.RecordID = res.RunID
		if err := r.st.SetRecord(bg, ar.id, res.RunID); err != nil {
			r.Log.Error("recording the run's record", "run", ar.id, "error", err.Error())
		}
	} else {
		// Ended before it wrote its record (its plan not the previewed one, a plan that no longer
		// read back, a trash it could not use): nothing was deleted, and only the service knows.
		if msg == "" {
			msg = "the run ended without writing its record beside the table"
		}
		var pc *vacuum.PlanChangedError
		at := r.Now()
		asked.Refusal, asked.Refused, asked.PlanChanged = msg, &at, errors.As(err, &pc)
		if err := r.st.Refuse(bg, ar.id, at, msg, asked.PlanChanged); err != nil {
			r.Log.Error("recording the end of the run", "run", ar.id, "error", err.Error())
		}
	}
	// The run's state, as its record says it now that the run has ended (read before the lock:
	// a start waits for nothing of the store).
	r.mu.Lock()
	why := ar.cancelled
	r.mu.Unlock()
	asked.Cancelled = why
	end := r.docOf(bg, asked, nil)
	// The table is released under the lock a start takes: whoever saw the run end (a Fabric
	// pipeline polling its job, then starting the next) is never refused for the slot the ended
	// run still held.
	r.mu.Lock()
	if end.Status == run.StatusCompleted && end.Figures.Mode == string(vacuum.ModeFull) && t.Cfg.Policy.Mode == config.ModeAuto {
		if err := r.st.SetLastFull(bg, t.Cfg.ID, r.Now()); err != nil {
			r.Log.Error("recording the FULL run", "table", t.Cfg.ID, "error", err.Error())
		}
	}
	if r.endedHook != nil {
		r.endedHook(ar.id)
	}
	delete(r.holds.active, ar.id)
	r.releaseLocked(t.Cfg.ID)
	r.mu.Unlock()
	if why != "" && end.Status == run.StatusCompleted {
		// A cancellation that came after the last batch leaves a run the library (and the
		// table's history and record) calls COMPLETED: everything planned was done.
		r.Log.Info("run completed before the cancellation took effect", "run", ar.id)
	}
	r.m.runs.WithLabelValues(t.Cfg.ID, asked.Trigger(), end.Status).Inc()
	r.m.inProgress.Dec()
	r.m.deletedFiles.WithLabelValues(t.Cfg.ID).Add(float64(end.Figures.NumDeletedFiles))
	r.m.deletedBytes.WithLabelValues(t.Cfg.ID).Add(float64(end.Figures.SizeOfDeletedData))
	r.Log.Info("run ended", "run", ar.id, "table", t.Cfg.ID, "status", end.Status, "state", end.State, "mode", ranMode(req, res), "error", msg)
	r.noteUntracked(bg, t, ar.id, end.Figures.Untracked)
	// The figures move with the run: the table is released first, the next run need not wait.
	r.inspectLater(t, "after run "+ar.id, false)
	if end.Status == run.StatusFailed && r.notify != nil {
		r.notify.RunFailed(r.life.base, end.Run, t.Cfg)
	}
}

// ranMode is the mode a run ran in: its plan's (FULL after a LITE the log could not serve),
// else the one requested.
func ranMode(req session.VacuumRequest, res *vacuum.Result) string {
	if res != nil && res.Plan != nil && res.Plan.Mode != "" {
		return string(res.Plan.Mode)
	}
	return string(req.Mode)
}

// noteFallback logs a LITE run the log could not serve, which ran FULL.
func (r *Runner) noteFallback(t *tables.Table, req session.VacuumRequest, res *vacuum.Result, id string) {
	if req.Mode == vacuum.ModeLite && res != nil && res.Plan != nil && res.Plan.Mode == vacuum.ModeFull {
		r.Log.Info("LITE cannot serve the table; ran FULL", "run", id, "table", t.Cfg.ID, "dryRun", req.DryRun)
	}
}

// DryRun is the DRY RUN of t's policy now (at the one-off retention oneOff, when set), each
// verdict of the planner passed to observe: the plan of a preview, which a run started with its
// digest executes or refuses. A dry run writes nothing, here or beside the table. Opening the
// table or reading it is ErrTable, the dry run itself ErrPlan; a one-off retention the library's
// rule refuses (oneOffHours) is ErrInvalid, naming the preview's retentionHours.
func (r *Runner) DryRun(ctx context.Context, t *tables.Table, observe func(vacuum.Verdict), oneOff *float64) (*vacuum.Result, error) {
	dt, err := r.tables.Open(ctx, t)
	if err != nil {
		r.noteHealth(ctx, t, err)
		return nil, Of(ErrTable, err)
	}
	req, err := r.request(ctx, t, dt, true, oneOff)
	if oneOff != nil && errors.Is(err, ErrInvalid) {
		return nil, Of(ErrInvalid, fmt.Errorf("retentionHours: %w", err))
	}
	if err != nil {
		return nil, Of(ErrTable, err)
	}
	req.Observe = observe
	res, err := t.Session.Vacuum(ctx, dt, req)
	r.noteFallback(t, req, res, "")
	return res, Of(ErrPlan, err)
}

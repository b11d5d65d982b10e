package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/session"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Figures are the figures of a run kept in the state database (the files are in the
// table's run record).
type Figures struct {
	Mode                  string   `json:"mode"`
	RetentionHours        float64  `json:"retentionHours"`
	NumFilesToDelete      int64    `json:"numFilesToDelete"`
	SizeOfDataToDelete    int64    `json:"sizeOfDataToDelete"`
	NumDeletedFiles       int64    `json:"numDeletedFiles"`
	SizeOfDeletedData     int64    `json:"sizeOfDeletedData"`
	NumDeletedDirectories int64    `json:"numDeletedDirectories"`
	NumFailed             int      `json:"numFailed"`
	StartVersion          *int64   `json:"startVersion,omitempty"`
	Warnings              []string `json:"warnings,omitempty"`
	// NumChecksumCompanions counts the Hadoop checksum companions (.<name>.crc) of the
	// planned files, deleted with them and not counted in the files.
	NumChecksumCompanions int64 `json:"numChecksumCompanions,omitempty"`
	// OneOffRetention: the run's retention was a one-off retention, not the policy's: a
	// preview's retentionHours, or a Fabric job's retentionPeriod, as OneOffFrom says
	// (oneOffPreview, oneOffFabric; absent in runs of earlier builds).
	OneOffRetention bool   `json:"oneOffRetention,omitempty"`
	OneOffFrom      string `json:"oneOffFrom,omitempty"`
	// PlanDigest is the previewed plan the run was asked to execute; PlanChanged says the
	// table had moved and the run deleted nothing.
	PlanDigest  string `json:"planDigest,omitempty"`
	PlanChanged bool   `json:"planChanged,omitempty"`
	// Untracked are the untracked files of the run's plan (run.UntrackedOf; none in LITE).
	Untracked *run.Untracked `json:"untracked,omitempty"`
}

// runOptions are what a run is asked beyond its table's policy.
type runOptions struct {
	// Plan, when set, is the digest of the previewed plan the run must execute (the library
	// compares its new plan with it before deleting or committing anything).
	Plan string
	// RetainHours, when set, is the one-off retention of that preview, or of a Fabric job
	// (oneOffHours).
	RetainHours *float64
	// MaxRunning, when set, refuses the run (errTooMany) while that many runs are in progress
	// in the service (a Fabric job: it waits in the runner's queue, runner_queue.go).
	MaxRunning int
	// ID, when set, is the run's id: the one a queued start was given when it was queued.
	ID string
	// OneOffFrom says where RetainHours came from: oneOffPreview or oneOffFabric.
	OneOffFrom string
}

// Where a one-off retention came from (Figures.OneOffFrom).
const (
	oneOffPreview = "preview"
	oneOffFabric  = "fabricJob"
)

// start starts a run of t in the background and returns its id. trigger is "api" or
// "schedule". The table must be idle in this service and by its lock. An error without a kind
// of its own is the table's (errTable).
func (r *runner) start(ctx context.Context, t *table, trigger string, o runOptions) (string, error) {
	id, err := r.startRun(ctx, t, trigger, o)
	return id, of(errTable, err)
}

func (r *runner) startRun(ctx context.Context, t *table, trigger string, o runOptions) (string, error) {
	if t.cfg.DryRunOnly {
		return "", fmt.Errorf("table %s: %w", t.cfg.ID, errDryRunOnly)
	}
	now := r.now()
	// One id: the service's run, its lock ticket and its run record beside the table (what
	// deltavacuum runs lists) are all named by it.
	id := o.ID
	if id == "" {
		id = run.NewID(now)
	}
	if ok, err := r.holdRun(t.cfg.ID, id, o.MaxRunning); err != nil {
		return "", err
	} else if !ok {
		if r.closing() {
			return "", errClosed
		}
		return "", fmt.Errorf("table %s: %w in this service", t.cfg.ID, ErrBusy)
	}
	held := true
	defer func() {
		if held {
			r.release(t.cfg.ID)
		}
	}()
	// The table outlives the request: a client an object store builds may keep the context
	// it was made with (for refreshing credentials).
	dt, err := r.tables.open(context.WithoutCancel(ctx), t)
	if err != nil {
		r.noteHealth(ctx, t, err)
		return "", err
	}
	req, err := r.request(ctx, t, dt, false, o.RetainHours)
	if err != nil {
		return "", err
	}
	req.ExpectPlan, req.Counters, req.RunID = o.Plan, vacuum.NewCounters(), id
	// The run starts now (run.Start: the table checked, its lock taken): a table held by
	// another process is refused at once, and a refusal writes nothing.
	started, err := r.startLocked(ctx, t, dt, req)
	if errors.Is(err, ErrBusy) {
		return "", err
	}
	if err != nil {
		// Refused before anything was written (the table's retention check, its features, its
		// log): the run is kept here, FAILED, with the refusal, as a run that failed.
		return id, r.refused(ctx, t, id, trigger, req, now, err)
	}
	running := false
	defer func() {
		if !running {
			_ = started.Close(ctx)
		}
	}()
	if err := r.st.StartRun(ctx, state.Run{ID: id, Table: t.cfg.ID, Trigger: trigger, Mode: string(req.Mode), Started: now}); err != nil {
		return "", err
	}
	runCtx, cancel := context.WithCancel(r.life.base)
	ar := &activeRun{id: id, table: t.cfg.ID, cancel: cancel, counters: req.Counters}
	r.mu.Lock()
	r.holds.active[id] = ar
	r.mu.Unlock()
	r.m.inProgress.Inc()
	r.log.Info("run started", "run", id, "table", t.cfg.ID, "trigger", trigger, "mode", req.Mode)
	held, running = false, true
	r.life.wg.Add(1)
	go r.execute(runCtx, ar, t, started, req, trigger, o)
	return id, nil
}

// refused records run id of t, which the library refused before writing anything, as started
// and ended FAILED with the refusal: the page, the API and Fabric's job show it as a failed run.
func (r *runner) refused(ctx context.Context, t *table, id, trigger string, req session.VacuumRequest, now time.Time, why error) error {
	bg := context.WithoutCancel(ctx)
	if err := r.st.StartRun(bg, state.Run{ID: id, Table: t.cfg.ID, Trigger: trigger, Mode: string(req.Mode), Started: now}); err != nil {
		return err
	}
	msg := r.red.String(why.Error())
	if err := r.st.EndRun(bg, id, state.StatusFailed, r.now(), nil, "", msg); err != nil {
		r.log.Error("recording the end of the run", "run", id, "error", err.Error())
	}
	r.m.runs.WithLabelValues(t.cfg.ID, trigger, state.StatusFailed).Inc()
	r.log.Info("run refused", "run", id, "table", t.cfg.ID, "trigger", trigger, "error", msg)
	r.inspectLater(t, "after run "+id, false)
	r.notifyFailed(id, t)
	return nil
}

// vacuum runs req (a DRY RUN for a preview, a real run for start); a LITE the log cannot serve
// runs FULL (run.Request.LiteFallback).
func (r *runner) vacuum(ctx context.Context, t *table, dt *deltavacuum.Table, req session.VacuumRequest, id string) (*vacuum.Result, error) {
	res, err := t.session.Vacuum(ctx, dt, req)
	r.noteFallback(t, req, res, id)
	return res, err
}

// noteFallback logs a LITE run the log could not serve, which ran FULL.
func (r *runner) noteFallback(t *table, req session.VacuumRequest, res *vacuum.Result, id string) {
	if req.Mode == vacuum.ModeLite && res != nil && res.Plan != nil && res.Plan.Mode == vacuum.ModeFull {
		r.log.Info("LITE cannot serve the table; ran FULL", "run", id, "table", t.cfg.ID, "dryRun", req.DryRun)
	}
}

// dryRun is the DRY RUN of t's policy now (at the one-off retention oneOff, when set), each
// verdict of the planner passed to observe: the plan of a preview, which a run started with
// its digest executes or refuses. Opening the table or reading it is errTable, the dry run
// itself errPlan; a one-off retention the service or the library's safety check refuses
// (oneOffHours) is errInvalid, naming the preview's retentionHours.
func (r *runner) dryRun(ctx context.Context, t *table, observe func(vacuum.Verdict), oneOff *float64) (*vacuum.Result, error) {
	dt, err := r.tables.open(ctx, t)
	if err != nil {
		r.noteHealth(ctx, t, err)
		return nil, of(errTable, err)
	}
	req, err := r.request(ctx, t, dt, true, oneOff)
	if oneOff != nil && errors.Is(err, errInvalid) {
		return nil, of(errInvalid, fmt.Errorf("retentionHours: %w", err))
	}
	if err != nil {
		return nil, of(errTable, err)
	}
	req.Observe = observe
	res, err := r.vacuum(ctx, t, dt, req, "")
	return res, of(errPlan, err)
}

// execute runs the run ar in the background and records its end: the state database, the
// metrics, the mode it ran in, the last FULL run of an auto policy; then it releases the
// table, inspects it, and posts a failed run to the webhook.
func (r *runner) execute(ctx context.Context, ar *activeRun, t *table, started *session.Started, req session.VacuumRequest, trigger string, o runOptions) {
	defer r.life.wg.Done()
	defer ar.cancel()
	res, err := started.Vacuum(ctx)
	r.noteFallback(t, req, res, ar.id)
	status, msg := state.StatusCompleted, ""
	r.mu.Lock()
	why := ar.cancelled
	r.mu.Unlock()
	switch {
	case err != nil:
		status, msg = state.StatusFailed, err.Error()
	case res == nil || res.Status != vacuum.StatusCompleted:
		status, msg = state.StatusFailed, "the run did not complete"
		if res != nil && len(res.Failed) > 0 {
			msg = fmt.Sprintf("%d files could not be deleted (first: %s: %s)", len(res.Failed), res.Failed[0].Path, res.Failed[0].Error)
		}
	}
	// A cancellation that came after the last batch leaves a run the library (and the table's
	// history) calls COMPLETED: everything planned was done, and the state says so too.
	if why != "" && status == state.StatusFailed {
		msg = why + ": " + msg
	} else if why != "" {
		r.log.Info("run completed before the cancellation took effect", "run", ar.id)
	}
	var figs []byte
	var untracked *run.Untracked
	recordID := ""
	mode := ranMode(req, res)
	if res != nil {
		f := Figures{Mode: mode, NumDeletedFiles: res.NumDeletedFiles, SizeOfDeletedData: res.SizeOfDeletedData,
			NumDeletedDirectories: res.NumDeletedDirectories, NumFailed: len(res.Failed), StartVersion: res.StartVersion, Warnings: res.Warnings}
		if res.Plan != nil {
			f.RetentionHours, f.NumFilesToDelete, f.SizeOfDataToDelete = res.RetentionHours, res.NumFilesToDelete, res.SizeOfDataToDelete
			f.NumChecksumCompanions = companions(res.Plan)
			untracked, _ = run.UntrackedOf(res.Plan) // a plan that no longer reads back counts none
			f.Untracked = untracked
		}
		f.PlanDigest, f.OneOffRetention = req.ExpectPlan, o.RetainHours != nil
		if f.OneOffRetention {
			f.OneOffFrom = o.OneOffFrom
		}
		figs, _ = json.Marshal(f)
		figs = []byte(r.red.String(string(figs)))
		recordID = res.RunID
		r.m.deletedFiles.WithLabelValues(t.cfg.ID).Add(float64(res.NumDeletedFiles))
		r.m.deletedBytes.WithLabelValues(t.cfg.ID).Add(float64(res.SizeOfDeletedData))
	}
	if res == nil {
		figs = planChangedFigures(req, err)
	}
	bg := context.WithoutCancel(ctx)
	// The end is recorded and the table released under the lock a start takes: whoever saw
	// the run end (a Fabric pipeline polling its job, then starting the next) is never refused
	// for the slot the ended run still held.
	r.mu.Lock()
	r.recordMode(bg, ar.id, string(req.Mode), mode)
	if err := r.st.EndRun(bg, ar.id, status, r.now(), figs, recordID, r.red.String(msg)); err != nil {
		r.log.Error("recording the end of the run", "run", ar.id, "error", err.Error())
	}
	if status == state.StatusCompleted && mode == "FULL" && t.cfg.Policy.Mode == config.ModeAuto {
		if err := r.st.SetLastFull(bg, t.cfg.ID, r.now()); err != nil {
			r.log.Error("recording the FULL run", "table", t.cfg.ID, "error", err.Error())
		}
	}
	if r.endedHook != nil {
		r.endedHook(ar.id)
	}
	delete(r.holds.active, ar.id)
	r.releaseLocked(t.cfg.ID)
	r.mu.Unlock()
	r.m.runs.WithLabelValues(t.cfg.ID, trigger, status).Inc()
	r.m.inProgress.Dec()
	r.log.Info("run ended", "run", ar.id, "table", t.cfg.ID, "status", status, "error", msg)
	r.noteUntracked(bg, t, ar.id, untracked)
	// The figures move with the run: the table is released first, the next run need not wait.
	r.inspectLater(t, "after run "+ar.id, false)
	if status == state.StatusFailed {
		r.notifyFailed(ar.id, t)
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

// recordMode records the mode of run id in the state when it ran in another than it started.
func (r *runner) recordMode(ctx context.Context, id, started, ran string) {
	if ran == started {
		return
	}
	if err := r.st.SetMode(ctx, id, ran); err != nil {
		r.log.Error("recording the mode of the run", "run", id, "error", err.Error())
	}
}

// planChangedFigures are the figures of a run the library refused because its plan was not
// the previewed one (nil for any other failure without a result).
func planChangedFigures(req session.VacuumRequest, err error) []byte {
	var pc *vacuum.PlanChangedError
	if !errors.As(err, &pc) {
		return nil
	}
	b, _ := json.Marshal(Figures{Mode: string(req.Mode), PlanDigest: req.ExpectPlan, PlanChanged: true})
	return b
}

// notifyFailed posts the failed run id of t to the webhook, in the background.
func (r *runner) notifyFailed(id string, t *table) {
	if r.hook == nil {
		return
	}
	sr, err := r.st.Run(context.Background(), id)
	if err != nil {
		r.log.Warn("webhook: reading the run", "run", id, "error", err.Error())
		return
	}
	r.hook.runFailed(r.life.base, sr, t.cfg)
}

// companions counts the checksum companions of the files of plan.
func companions(plan *vacuum.Plan) int64 {
	var n int64
	_ = plan.Files.Each(func(f vacuum.File) error {
		if f.Checksum != "" {
			n++
		}
		return nil
	})
	return n
}

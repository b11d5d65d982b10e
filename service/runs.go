package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/schedule"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/session"
	"github.com/deltavacuum/deltavacuum/undo"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// ErrBusy is returned (wrapped) when a run or an undo is in progress on the table: in this
// service, or, by the table's own run records, anywhere.
var ErrBusy = errors.New("a run is in progress on the table")

// activeRun is a run of this process.
type activeRun struct {
	id, table string
	cancel    context.CancelFunc
	cancelled string           // why it was cancelled, when it was
	counters  *vacuum.Counters // the live progress (GET /api/runs/{id}/progress)
}

// retainHours is the retention of a run of t: the policy's (nil: none, the table's own), never
// shorter than a delta.deletedFileRetentionDuration the table sets itself
// (vacuum.PolicyRetainHours).
func retainHours(snap *deltalog.Snapshot, p config.Policy) (*float64, error) {
	if !p.Retention.Set {
		return nil, nil
	}
	return vacuum.PolicyRetainHours(snap, &p.Retention.Hours)
}

// hold marks table id busy with what in this process; false when it is busy already.
func (s *Server) hold(id, what string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.busy[id]; busy || s.closed {
		return false
	}
	s.busy[id] = what
	if s.sched != nil {
		s.sched.Running(id)
	}
	return true
}

func (s *Server) release(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.busy, id)
	if s.sched != nil {
		s.sched.Finished(id)
	}
}

func (s *Server) inspect(w http.ResponseWriter, r *http.Request) {
	t := s.tableOf(w, r)
	if t == nil {
		return
	}
	rep, err := s.inspectTable(r.Context(), t)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, err)
		return
	}
	s.writeJSON(w, http.StatusOK, rep)
}

func (s *Server) preview(w http.ResponseWriter, r *http.Request) {
	t := s.tableOf(w, r)
	if t == nil {
		return
	}
	var body struct{}
	if err := decode(r, &body); err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	ctx := r.Context()
	dt, err := s.open(ctx, t)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, err)
		return
	}
	req, err := s.request(ctx, t, dt, true)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, err)
		return
	}
	p, err := s.previewPlan(ctx, t, dt, req)
	if err != nil {
		s.fail(w, r, http.StatusUnprocessableEntity, err)
		return
	}
	s.writeJSON(w, http.StatusOK, previewAnswer{Result: p.Result, PlanDigest: p.Digest, PreviewURL: p.url()})
}

// vacuum runs req (a DRY RUN for a preview, a real run for run); a LITE the log cannot serve
// runs FULL (run.Request.LiteFallback).
func (s *Server) vacuum(ctx context.Context, t *table, dt *deltavacuum.Table, req session.VacuumRequest, id string) (*vacuum.Result, error) {
	res, err := t.session.Vacuum(ctx, dt, req)
	if req.Mode == "LITE" && res != nil && res.Plan != nil && res.Plan.Mode == vacuum.ModeFull {
		s.log.Info("LITE cannot serve the table; ran FULL", "run", id, "table", t.cfg.ID, "dryRun", req.DryRun)
	}
	return res, err
}

// request is the VACUUM of t's policy now.
func (s *Server) request(ctx context.Context, t *table, dt *deltavacuum.Table, dryRun bool) (session.VacuumRequest, error) {
	snap, err := dt.Snapshot(ctx)
	if err != nil {
		return session.VacuumRequest{}, err
	}
	hours, err := retainHours(snap, t.cfg.Policy)
	if err != nil {
		return session.VacuumRequest{}, err
	}
	// The run plans from this snapshot, advanced by the commits made since (no second read).
	req := session.VacuumRequest{DryRun: dryRun, RetainHours: hours, From: snap}
	switch t.cfg.Policy.Mode {
	case config.ModeLite:
		req.Mode = "LITE"
	case config.ModeAuto:
		sch, err := s.st.Schedules(ctx)
		if err != nil {
			return session.VacuumRequest{}, err
		}
		req.Mode = strings.ToUpper(schedule.FullOrLite(sch[t.cfg.ID].LastFull, t.cfg.Policy.FullEvery, s.now()))
	default:
		req.Mode = "FULL"
	}
	if t.cfg.Policy.Trash {
		req.Trash = undo.DefaultTrash
	}
	req.StaleRunAfter, req.LiteFallback = s.ops.staleAfter, true
	return req, nil
}

// RunStarted is the answer to a run request.
type RunStarted struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	t := s.tableOf(w, r)
	if t == nil {
		return
	}
	var body struct {
		// Plan is the digest of a preview: the run executes exactly that plan, or nothing.
		Plan string `json:"plan"`
	}
	if err := decode(r, &body); err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	if body.Plan != "" && !vacuum.ValidDigest(body.Plan) {
		s.fail(w, r, http.StatusBadRequest, fmt.Errorf("table %s: plan %q is not the planDigest of a preview (POST /api/tables/%s/preview returns one)", t.cfg.ID, body.Plan, t.cfg.ID))
		return
	}
	id, err := s.startPlanned(r.Context(), t, "api", body.Plan)
	switch {
	case errors.Is(err, ErrBusy), errors.Is(err, state.ErrTableBusy):
		s.fail(w, r, http.StatusConflict, err)
	case errors.Is(err, errDryRunOnly):
		s.fail(w, r, http.StatusForbidden, err)
	case errors.Is(err, errClosed):
		s.fail(w, r, http.StatusServiceUnavailable, err)
	case err != nil:
		s.fail(w, r, http.StatusBadGateway, err)
	default:
		w.Header().Set("Location", "/api/runs/"+id)
		s.writeJSON(w, http.StatusAccepted, RunStarted{ID: id, Status: state.StatusRunning})
	}
}

var (
	errDryRunOnly = errors.New("the table is dryRunOnly in the configuration: POST .../preview shows what a run would delete")
	errClosed     = errors.New("the service is shutting down")
)

// start starts a run of t in the background and returns its id. The table must be idle in
// this service and by its own run records.
func (s *Server) start(ctx context.Context, t *table, trigger string) (string, error) {
	return s.startPlanned(ctx, t, trigger, "")
}

// startPlanned is start of a run that executes the plan of digest plan only ("": any plan):
// the library compares its new plan with it before deleting or committing anything.
func (s *Server) startPlanned(ctx context.Context, t *table, trigger, plan string) (string, error) {
	if t.cfg.DryRunOnly {
		return "", fmt.Errorf("table %s: %w", t.cfg.ID, errDryRunOnly)
	}
	now := s.now()
	id := "serve-" + undo.NewID(now)
	if !s.hold(t.cfg.ID, id) {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return "", errClosed
		}
		return "", fmt.Errorf("table %s: %w in this service", t.cfg.ID, ErrBusy)
	}
	held := true
	defer func() {
		if held {
			s.release(t.cfg.ID)
		}
	}()
	// The table outlives the request: a client an object store builds may keep the context
	// it was made with (for refreshing credentials).
	dt, err := s.open(context.WithoutCancel(ctx), t)
	if err != nil {
		return "", err
	}
	// The table's lock, taken now (a table held by another process is refused at once), is
	// the run's: it releases it when it ends.
	lk, err := s.lock(ctx, t, dt, run.PurposeVacuum, undo.NewID(now))
	if err != nil {
		return "", fmt.Errorf("table %s: %w", t.cfg.ID, err)
	}
	locked := true
	defer func() {
		if locked {
			lk.Release(ctx)
		}
	}()
	req, err := s.request(ctx, t, dt, false)
	if err != nil {
		return "", err
	}
	req.ExpectPlan, req.Counters, req.Lock = plan, vacuum.NewCounters(), lk
	if err := s.st.StartRun(ctx, state.Run{ID: id, Table: t.cfg.ID, Trigger: trigger, Mode: req.Mode, Started: now}); err != nil {
		return "", err
	}
	runCtx, cancel := context.WithCancel(s.base)
	ar := &activeRun{id: id, table: t.cfg.ID, cancel: cancel, counters: req.Counters}
	s.mu.Lock()
	s.active[id] = ar
	s.mu.Unlock()
	s.metrics.inProgress.Inc()
	s.log.Info("run started", "run", id, "table", t.cfg.ID, "trigger", trigger, "mode", req.Mode)
	held, locked = false, false
	s.wg.Add(1)
	go s.execute(runCtx, ar, t, dt, req, trigger)
	return id, nil
}

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
	// PlanDigest is the previewed plan the run was asked to execute; PlanChanged says the
	// table had moved and the run deleted nothing.
	PlanDigest  string `json:"planDigest,omitempty"`
	PlanChanged bool   `json:"planChanged,omitempty"`
}

func (s *Server) execute(ctx context.Context, ar *activeRun, t *table, dt *deltavacuum.Table, req session.VacuumRequest, trigger string) {
	defer s.wg.Done()
	defer ar.cancel()
	res, err := s.vacuum(ctx, t, dt, req, ar.id)
	status, msg := state.StatusCompleted, ""
	s.mu.Lock()
	why := ar.cancelled
	s.mu.Unlock()
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
		s.log.Info("run completed before the cancellation took effect", "run", ar.id)
	}
	var figs []byte
	recordID := ""
	mode := ranMode(req, res)
	if res != nil {
		f := Figures{Mode: mode, NumDeletedFiles: res.NumDeletedFiles, SizeOfDeletedData: res.SizeOfDeletedData,
			NumDeletedDirectories: res.NumDeletedDirectories, NumFailed: len(res.Failed), StartVersion: res.StartVersion, Warnings: res.Warnings}
		if res.Plan != nil {
			f.RetentionHours, f.NumFilesToDelete, f.SizeOfDataToDelete = res.RetentionHours, res.NumFilesToDelete, res.SizeOfDataToDelete
		}
		f.PlanDigest = req.ExpectPlan
		figs, _ = json.Marshal(f)
		figs = []byte(s.red.String(string(figs)))
		recordID = res.RunID
		s.metrics.deletedFiles.WithLabelValues(t.cfg.ID).Add(float64(res.NumDeletedFiles))
		s.metrics.deletedBytes.WithLabelValues(t.cfg.ID).Add(float64(res.SizeOfDeletedData))
	}
	if res == nil {
		figs = planChangedFigures(req, err)
	}
	bg := context.WithoutCancel(ctx)
	s.recordMode(bg, ar.id, req.Mode, mode)
	if err := s.st.EndRun(bg, ar.id, status, s.now(), figs, recordID, s.red.String(msg)); err != nil {
		s.log.Error("recording the end of the run", "run", ar.id, "error", err.Error())
	}
	if status == state.StatusCompleted && mode == "FULL" && t.cfg.Policy.Mode == config.ModeAuto {
		if err := s.st.SetLastFull(bg, t.cfg.ID, s.now()); err != nil {
			s.log.Error("recording the FULL run", "table", t.cfg.ID, "error", err.Error())
		}
	}
	s.metrics.runs.WithLabelValues(t.cfg.ID, trigger, status).Inc()
	s.metrics.inProgress.Dec()
	s.log.Info("run ended", "run", ar.id, "table", t.cfg.ID, "status", status, "error", msg)
	s.mu.Lock()
	delete(s.active, ar.id)
	s.mu.Unlock()
	s.release(t.cfg.ID)
	// The figures move with the run: the table is released first, the next run need not wait.
	s.inspectLater(t, "after run "+ar.id, false)
	if status == state.StatusFailed {
		s.notifyFailed(ar.id, t)
	}
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.st.Run(r.Context(), r.PathValue("id"))
	if errors.Is(err, state.ErrNotFound) {
		s.fail(w, r, http.StatusNotFound, err)
		return
	}
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	s.writeJSON(w, http.StatusOK, run)
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	var body struct{}
	if err := decode(r, &body); err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	ar, ok := s.active[id]
	if ok && ar.cancelled == "" {
		ar.cancelled = "cancelled through the API"
	}
	s.mu.Unlock()
	if !ok {
		run, err := s.st.Run(r.Context(), id)
		if err != nil {
			s.fail(w, r, http.StatusNotFound, err)
			return
		}
		s.fail(w, r, http.StatusConflict, fmt.Errorf("run %s is not in progress in this service (its status is %s)", id, run.Status))
		return
	}
	// The executor stops between batches; the run ends FAILED, with VACUUM END recorded.
	ar.cancel()
	s.writeJSON(w, http.StatusAccepted, map[string]any{"id": id, "status": state.StatusRunning, "cancelRequested": true})
}

func (s *Server) undoRun(w http.ResponseWriter, r *http.Request) {
	var body struct {
		DryRun bool `json:"dryRun"`
	}
	if err := decode(r, &body); err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	ctx := r.Context()
	sr, err := s.st.Run(ctx, r.PathValue("id"))
	if errors.Is(err, state.ErrNotFound) {
		s.fail(w, r, http.StatusNotFound, err)
		return
	}
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	t, ok := s.lookup(sr.Table)
	switch {
	case !ok:
		s.fail(w, r, http.StatusNotFound, fmt.Errorf("run %s was of table %s, which is no longer in the configuration", sr.ID, sr.Table))
		return
	case sr.Status == state.StatusRunning:
		s.fail(w, r, http.StatusConflict, fmt.Errorf("run %s is still running: cancel it, then undo", sr.ID))
		return
	case sr.RecordID == "":
		s.fail(w, r, http.StatusConflict, fmt.Errorf("run %s has no run record (it deleted nothing, or failed before writing one): nothing to undo", sr.ID))
		return
	}
	if !s.hold(t.cfg.ID, "undo of "+sr.ID) {
		s.fail(w, r, http.StatusConflict, fmt.Errorf("table %s: %w in this service", t.cfg.ID, ErrBusy))
		return
	}
	defer s.release(t.cfg.ID)
	dt, err := s.open(ctx, t)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, err)
		return
	}
	rep, err := dt.Undo(ctx, sr.RecordID, undo.Options{DryRun: body.DryRun, Now: s.now(), StaleAfter: s.ops.staleAfter})
	if errors.Is(err, run.ErrLocked) {
		s.fail(w, r, http.StatusConflict, fmt.Errorf("table %s: %w: %w", t.cfg.ID, ErrBusy, err))
		return
	}
	if err != nil {
		if rep != nil {
			s.writeJSON(w, http.StatusBadGateway, map[string]any{"error": s.red.String(err.Error()), "report": rep})
			return
		}
		s.fail(w, r, http.StatusBadGateway, err)
		return
	}
	s.log.Info("undo", "run", sr.ID, "record", sr.RecordID, "dryRun", body.DryRun)
	s.writeJSON(w, http.StatusOK, rep)
}

// Shutdown stops starting runs, cancels those in progress (each stops between batches of
// deletes and records VACUUM END and its run as FAILED), and waits for them until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	for _, ar := range s.active {
		if ar.cancelled == "" {
			ar.cancelled = "cancelled: the service is shutting down"
		}
	}
	s.mu.Unlock()
	s.stop()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shutting down: runs still in progress (they stay RUNNING in the state database and end FAILED at the next start): %w", ctx.Err())
	}
}

// Wait waits for the runs in progress to end (for tests and the command's exit).
func (s *Server) Wait() { s.wg.Wait() }

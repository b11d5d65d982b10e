package service

import (
	"context"
	"fmt"
	"net/http"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The handlers of the runs: each decodes the request, calls the runner and encodes its answer
// (or fail, which takes the status from the error's kind).

func (s *Server) inspect(w http.ResponseWriter, r *http.Request) {
	t := s.tableOf(w, r)
	if t == nil {
		return
	}
	rep, err := s.runner.inspect(r.Context(), t)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, rep)
}

func (s *Server) preview(w http.ResponseWriter, r *http.Request) {
	t := s.tableOf(w, r)
	if t == nil {
		return
	}
	var body struct {
		// RetentionHours, when set, is a one-off retention for this preview (and the run of
		// its plan) instead of the policy's: see oneOffHours.
		RetentionHours *float64 `json:"retentionHours"`
	}
	if err := decode(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := s.previewPlan(r.Context(), t, body.RetentionHours)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, previewAnswer{Result: p.Result, PlanDigest: p.Digest, PreviewURL: p.url(), OneOffRetention: p.RetainHours != nil})
}

// RunStarted is the answer to a run request: the run's id, the service's status of it
// (RUNNING) and its state (planned: accepted, not yet recorded beside the table).
type RunStarted struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	State  string `json:"state"`
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
		s.fail(w, r, err)
		return
	}
	if body.Plan != "" && !vacuum.ValidDigest(body.Plan) {
		s.fail(w, r, of(errInvalid, fmt.Errorf("table %s: plan %q is not the planDigest of a preview (POST /api/tables/%s/preview returns one)", t.cfg.ID, body.Plan, t.cfg.ID)))
		return
	}
	// The run of a preview carries its one-off retention, if it had one: the plan is made at
	// that retention, and its digest holds it.
	o := runOptions{Plan: body.Plan}
	if body.Plan != "" {
		if p := s.web.find(t.cfg.ID, body.Plan); p != nil {
			o.RetainHours, o.OneOffFrom = p.RetainHours, oneOffPreview
		}
	}
	id, err := s.runner.start(r.Context(), t, "api", o)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/runs/"+id)
	s.writeJSON(w, http.StatusAccepted, RunStarted{ID: id, Status: state.StatusRunning, State: run.StatePlanned})
}

// listRuns are the runs of every table (or of ?table=), newest first, each with its state:
// ?offset= and ?limit= (1 to 1000, default 50) page them.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	offset, limit, ok := s.paging(w, r, 50, maxTableRuns)
	if !ok {
		return
	}
	table, err := strParam(r, "table")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page, err := s.runsPage(r, table, offset, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, page)
}

// runsPage is a page of the runs of table ("" for every table), each with its state.
func (s *Server) runsPage(r *http.Request, table string, offset, limit int) (Page[RunDoc], error) {
	runs, total, err := s.st.RunsPage(r.Context(), table, offset, limit)
	if err != nil {
		return Page[RunDoc]{}, err
	}
	return Page[RunDoc]{Total: total, Offset: offset, Limit: limit, Items: s.runner.docs(r.Context(), runs)}, nil
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	d, err := s.runner.runDoc(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, d)
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	var body struct{}
	if err := decode(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	id := r.PathValue("id")
	if err := s.runner.cancel(r.Context(), id); err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusAccepted, map[string]any{"id": id, "status": state.StatusRunning, "cancelRequested": true})
}

func (s *Server) undoRun(w http.ResponseWriter, r *http.Request) {
	var body struct {
		DryRun bool `json:"dryRun"`
	}
	if err := decode(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	rep, err := s.runner.undo(r.Context(), r.PathValue("id"), body.DryRun)
	if err != nil && rep != nil {
		s.writeJSON(w, statusOf(err), map[string]any{"error": s.red.String(err.Error()), "report": rep})
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, rep)
}

// Shutdown stops starting runs, cancels those in progress (each stops between batches of
// deletes and records VACUUM END and its run as FAILED), and waits for them until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error { return s.runner.shutdown(ctx) }

// Wait waits for the runs in progress to end (for tests and the command's exit).
func (s *Server) Wait() { s.runner.wait() }

package service

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/runner"
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
	rep, err := s.runner.Inspect(r.Context(), t)
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
		s.fail(w, r, of(errInvalid, fmt.Errorf("table %s: plan %q is not the planDigest of a preview (POST /api/tables/%s/preview returns one)", t.Cfg.ID, body.Plan, t.Cfg.ID)))
		return
	}
	// The run of a preview carries its one-off retention, if it had one: the plan is made at
	// that retention, and its digest holds it.
	a := runner.Ask{Requester: s.requesterOf(r), Plan: body.Plan}
	if body.Plan != "" {
		if p := s.web.find(t.Cfg.ID, body.Plan); p != nil && p.RetainHours != nil {
			a.RetainHours, a.OneOffFrom = p.RetainHours, runner.OneOffPreview
		}
	}
	id, err := s.runner.Start(r.Context(), t, a)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/runs/"+id)
	s.writeJSON(w, http.StatusAccepted, RunStarted{ID: id, Status: run.StatusRunning, State: run.StatePlanned})
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
func (s *Server) runsPage(r *http.Request, table string, offset, limit int) (Page[runner.RunDoc], error) {
	docs, total, err := s.runner.RunsPage(r.Context(), table, offset, limit)
	if err != nil {
		return Page[runner.RunDoc]{}, err
	}
	return Page[runner.RunDoc]{Total: total, Offset: offset, Limit: limit, Items: withWhy(docs)}, nil
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	d, err := s.runner.Run(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if d.Figures.NumChecksumCompanions, err = s.runner.Companions(r.Context(), d); err != nil {
		// The run is still shown: its record's state says what became of it.
		s.Log.Warn("counting a run's checksum companions", "run", d.ID, "error", err)
	}
	s.writeJSON(w, http.StatusOK, docWithWhy(d))
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	var body struct{}
	if err := decode(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	id := r.PathValue("id")
	if err := s.runner.Cancel(r.Context(), id); err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusAccepted, map[string]any{"id": id, "status": run.StatusRunning, "cancelRequested": true})
}

func (s *Server) undoRun(w http.ResponseWriter, r *http.Request) {
	var body struct {
		DryRun bool `json:"dryRun"`
	}
	if err := decode(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	rep, err := s.runner.Undo(r.Context(), r.PathValue("id"), body.DryRun)
	if err != nil && rep != nil {
		s.writeJSON(w, statusOf(err), map[string]any{"error": s.Red.String(err.Error()), "report": rep})
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, rep)
}

// requesterOf is who asked for a run through the API, as the service can know it. With a token
// configured, the guard let the request in by the bearer token (the API) or by the login cookie
// (the web page: only a browser that logged in has it). Without one (loopback only), the page
// when a browser says the request comes from this service's own origin (Sec-Fetch-Site:
// same-origin, a header a page's script cannot set; a client that is no browser could send it,
// and without a token nothing tells them apart), the API otherwise.
func (s *Server) requesterOf(r *http.Request) string {
	if s.auth.token != "" {
		if _, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); bearer {
			return state.ByAPI
		}
		return state.ByPage
	}
	if r.Header.Get("Sec-Fetch-Site") == "same-origin" {
		return state.ByPage
	}
	return state.ByAPI
}

// docWithWhy is d with the words of its undo offer (the runner has no words: offerWhy).
func docWithWhy(d runner.RunDoc) runner.RunDoc {
	d.UndoOffer.Why = offerWhy(d.UndoOffer, d)
	return d
}

// withWhy is docs, each with the words of its undo offer.
func withWhy(docs []runner.RunDoc) []runner.RunDoc {
	for i := range docs {
		docs[i] = docWithWhy(docs[i])
	}
	return docs
}

package service

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/runner"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// webRoutes are the JSON endpoints the web page uses, beside routes; docs/openapi.yaml
// documents both.
var webRoutes = []route{
	{"GET", "/api/tables/{id}/history", (*Server).history},
	{"GET", "/api/tables/{id}/inspections", (*Server).inspections},
	{"GET", "/api/tables/{id}/runs", (*Server).tableRuns},
	{"GET", "/api/tables/{id}/previews/{plan}", (*Server).getPreview},
	{"GET", "/api/runs/{id}/progress", (*Server).progress},
	{"POST", "/api/login", (*Server).login},
	{"POST", "/api/logout", (*Server).logout},
}

// apiRoutes are every JSON endpoint.
func apiRoutes() []route {
	return append(append(append([]route(nil), routes...), webRoutes...), fabricRoutes...)
}

// cookieName is the cookie the login form sets: it holds the token (HttpOnly, SameSite=Strict).
const cookieName = "deltavacuum_token"

// openPath: the requests that need no token (the health check, the login page and its form,
// the page's CSS and script).
func openPath(r *http.Request) bool {
	p := r.URL.Path
	return p == "/healthz" || p == "/login" || p == "/api/login" || strings.HasPrefix(p, "/static/")
}

// authorized: the bearer token, or the cookie of the login, compared in constant time.
func (s *Server) authorized(r *http.Request) bool {
	if got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return subtle.ConstantTimeCompare([]byte(got), []byte(s.auth.token)) == 1
	}
	if c, err := r.Cookie(cookieName); err == nil {
		return subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.auth.token)) == 1
	}
	return false
}

// pageRequest: a GET of a page (not of the API or the metrics), answered with the login
// page rather than a 401.
func pageRequest(r *http.Request) bool {
	p := r.URL.Path
	return r.Method == http.MethodGet && !strings.HasPrefix(p, "/api/") && p != "/metrics" && !strings.HasPrefix(p, fabricPrefix)
}

func redirectToLogin(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
}

// login checks {"token": "..."} and sets the cookie the page's requests then carry.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Token string `json:"token"`
	}
	if err := decode(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	if s.auth.token == "" {
		s.writeJSON(w, http.StatusOK, map[string]any{"loggedIn": true, "note": "no token is configured: nothing to log in to"})
		return
	}
	if subtle.ConstantTimeCompare([]byte(body.Token), []byte(s.auth.token)) != 1 {
		s.failCode(w, r, http.StatusUnauthorized, errors.New("that is not the token of this service (the token: key of maintenance.yaml names the variable that holds it)"))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.auth.token, Path: "/", HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	s.writeJSON(w, http.StatusOK, map[string]any{"loggedIn": true})
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	var body struct{}
	if err := decode(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	s.writeJSON(w, http.StatusOK, map[string]any{"loggedIn": false})
}

// intParam reads the query parameter name: def when absent, an error naming the range when it
// is not a whole number in [lo, hi].
func intParam(r *http.Request, name string, def, lo, hi int) (int, error) {
	vals, ok := r.URL.Query()[name]
	if !ok {
		return def, nil
	}
	if len(vals) != 1 {
		return 0, of(errInvalid, fmt.Errorf("parameter %s is given %d times: give it once", name, len(vals)))
	}
	n, err := strconv.Atoi(vals[0])
	if err != nil || n < lo || n > hi {
		return 0, of(errInvalid, fmt.Errorf("parameter %s=%q: want a whole number from %d to %d", name, vals[0], lo, hi))
	}
	return n, nil
}

// strParam reads the query parameter name ("" when absent), refusing it given twice.
func strParam(r *http.Request, name string) (string, error) {
	vals := r.URL.Query()[name]
	if len(vals) > 1 {
		return "", of(errInvalid, fmt.Errorf("parameter %s is given %d times: give it once", name, len(vals)))
	}
	if len(vals) == 0 {
		return "", nil
	}
	return vals[0], nil
}

// limitOf reads ?limit= (1 to most, default def), answering 400 when it is refused.
func (s *Server) limitOf(w http.ResponseWriter, r *http.Request, def, most int) (int, bool) {
	n, err := intParam(r, "limit", def, 1, most)
	if err != nil {
		s.fail(w, r, err)
		return 0, false
	}
	return n, true
}

// paging reads ?offset= and ?limit= (1 to most, default def), answering 400 when one is refused.
func (s *Server) paging(w http.ResponseWriter, r *http.Request, def, most int) (offset, limit int, ok bool) {
	if limit, ok = s.limitOf(w, r, def, most); !ok {
		return 0, 0, false
	}
	offset, err := intParam(r, "offset", 0, 0, maxOffset)
	if err != nil {
		s.fail(w, r, err)
		return 0, 0, false
	}
	return offset, limit, true
}

// Page is one page of a list: Total items, of which Items from Offset.
type Page[T any] struct {
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
	Items  []T `json:"items"`
}

// pageOf cuts the page [offset, offset+limit) out of all.
func pageOf[T any](all []T, offset, limit int) Page[T] {
	p := Page[T]{Total: len(all), Offset: offset, Limit: limit, Items: []T{}}
	if offset < len(all) {
		p.Items = all[offset:min(len(all), offset+limit)]
	}
	return p
}

// Paging limits of the endpoints.
const (
	maxHistory     = 1000
	maxOffset      = 10_000_000
	maxPageSize    = 1000
	maxInspections = 1000
	maxTableRuns   = 1000
)

// history is DESCRIBE HISTORY of the table, newest first: ?limit= (1 to 1000, default 100)
// and ?offset= (the newest to skip).
func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	t := s.tableOf(w, r)
	if t == nil {
		return
	}
	offset, limit, ok := s.paging(w, r, 100, maxHistory)
	if !ok {
		return
	}
	entries, err := s.historyOf(r, t, offset+limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page := pageOf(entries, offset, limit)
	page.Total = -1 // not counted: History reads the newest offset+limit only
	s.writeJSON(w, http.StatusOK, page)
}

func (s *Server) historyOf(r *http.Request, t *tables.Table, n int) ([]deltalog.HistoryEntry, error) {
	dt, err := s.tables.Open(r.Context(), t)
	if err != nil {
		return nil, of(errTable, err)
	}
	h, err := deltalog.History(r.Context(), dt.Store, n)
	if err != nil {
		return nil, of(errTable, fmt.Errorf("table %s: DESCRIBE HISTORY: %w", t.Cfg.ID, err))
	}
	return h, nil
}

// InspectionPoint is one inspection the state database keeps: the figures the charts draw.
type InspectionPoint struct {
	At               time.Time `json:"at"`
	Version          int64     `json:"version"`
	LiveFiles        int64     `json:"liveFiles"`
	LiveBytes        int64     `json:"liveBytes"`
	ReclaimableFiles int64     `json:"reclaimableFiles"`
	ReclaimableBytes int64     `json:"reclaimableBytes"`
	CostPerMonth     float64   `json:"costPerMonth"`
	RetentionHours   float64   `json:"retentionHours"`
}

// inspectionsOf returns the newest limit inspections of table, oldest first, and the newest
// full report (nil when there is none).
func (s *Server) inspectionsOf(r *http.Request, table string, limit int) ([]InspectionPoint, *insight.Report, error) {
	ins, err := s.st.Inspections(r.Context(), table, time.Time{}, limit)
	if err != nil {
		return nil, nil, err
	}
	out := make([]InspectionPoint, 0, len(ins))
	var last *insight.Report
	for _, in := range ins {
		var rep insight.Report
		if err := json.Unmarshal(in.Figures, &rep); err != nil {
			continue // figures of another build: not drawn
		}
		out = append(out, InspectionPoint{At: in.At, Version: in.Version, LiveFiles: rep.Files.Live.Files, LiveBytes: rep.Files.Live.Bytes,
			ReclaimableFiles: rep.Reclaimable.Files, ReclaimableBytes: rep.Reclaimable.Bytes, CostPerMonth: rep.Reclaimable.CostPerMonth, RetentionHours: rep.RetentionHours})
		last = &rep
	}
	return out, last, nil
}

// inspections are the inspect figures kept over time: ?limit= the newest (1 to 1000, default 200).
func (s *Server) inspections(w http.ResponseWriter, r *http.Request) {
	t := s.tableOf(w, r)
	if t == nil {
		return
	}
	limit, ok := s.limitOf(w, r, 200, maxInspections)
	if !ok {
		return
	}
	pts, _, err := s.inspectionsOf(r, t.Cfg.ID, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"table": t.Cfg.ID, "inspections": pts})
}

// tableRuns are the table's runs, newest first: ?limit= (1 to 1000, default 50).
func (s *Server) tableRuns(w http.ResponseWriter, r *http.Request) {
	t := s.tableOf(w, r)
	if t == nil {
		return
	}
	limit, ok := s.limitOf(w, r, 50, maxTableRuns)
	if !ok {
		return
	}
	runs, err := s.runner.Runs(r.Context(), t.Cfg.ID, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if runs == nil {
		runs = []runner.RunDoc{}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"table": t.Cfg.ID, "runs": withWhy(runs)})
}

// previewOf returns the kept preview the path names, or answers 400 or 404.
func (s *Server) previewOf(w http.ResponseWriter, r *http.Request, t *tables.Table) *preview {
	d := r.PathValue("plan")
	if !vacuum.ValidDigest(d) {
		s.fail(w, r, of(errInvalid, fmt.Errorf("%q is not the planDigest of a preview", d)))
		return nil
	}
	p := s.web.find(t.Cfg.ID, d)
	if p == nil {
		s.fail(w, r, of(errNotFound, fmt.Errorf("table %s: no preview %s is kept (the service keeps the newest %d, until it stops): POST /api/tables/%s/preview makes a new one", t.Cfg.ID, d, maxPreviews, t.Cfg.ID)))
	}
	return p
}

// PreviewPage is a page of a kept preview's files, with its figures and folder totals.
type PreviewPage struct {
	Table      string      `json:"table"`
	PlanDigest string      `json:"planDigest"`
	At         time.Time   `json:"at"`
	Version    int64       `json:"version"`
	Mode       vacuum.Mode `json:"mode"`
	Retention  float64     `json:"retentionHours"`
	// OneOffRetention: Retention is the one asked for, not the policy's.
	OneOffRetention bool      `json:"oneOffRetention"`
	Cutoff          time.Time `json:"cutoff"`
	NumFiles        int64     `json:"numFilesToDelete"`
	Bytes           int64     `json:"sizeOfDataToDelete"`
	// NumCompanions counts the checksum companions deleted with the files (not in NumFiles).
	NumCompanions int64 `json:"numChecksumCompanions"`
	// Trash is the folder a run of the plan moves the files into ("" : it deletes them).
	Trash       string            `json:"trash,omitempty"`
	Directories int               `json:"numDirectoriesToDelete"`
	Kept        []ruleCount       `json:"keptByRule"`
	Folders     Page[folderTotal] `json:"folders"`
	Files       Page[vacuum.File] `json:"files"`
}

// getPreview is a kept preview: ?offset= and ?limit= (1 to 1000, default 100) page its
// files; the folders are the first 100 by bytes.
func (s *Server) getPreview(w http.ResponseWriter, r *http.Request) {
	t := s.tableOf(w, r)
	if t == nil {
		return
	}
	p := s.previewOf(w, r, t)
	if p == nil {
		return
	}
	offset, limit, ok := s.paging(w, r, 100, maxPageSize)
	if !ok {
		return
	}
	pp, err := previewPageOf(p, offset, limit, 100)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, pp)
}

func previewPageOf(p *preview, offset, limit, folders int) (PreviewPage, error) {
	res := p.Result
	files, err := res.Files.Range(offset, limit)
	if err != nil {
		return PreviewPage{}, err
	}
	return PreviewPage{Table: p.Table, PlanDigest: p.Digest, At: p.At, Version: res.Version, Mode: res.Mode, Retention: res.RetentionHours,
		Cutoff: res.Cutoff, NumFiles: res.NumFilesToDelete, Bytes: res.SizeOfDataToDelete, NumCompanions: p.Companions, Trash: res.Plan.Trash, Directories: len(res.Dirs), OneOffRetention: p.RetainHours != nil,
		Kept: p.Kept, Folders: pageOf(p.Folders, 0, folders), Files: Page[vacuum.File]{Total: res.Files.Len(), Offset: offset, Limit: limit, Items: files}}, nil
}

// Progress is a run with its state and, while it runs in this service, its live counters.
type Progress struct {
	Run      runner.RunDoc    `json:"run"`
	Progress *vacuum.Snapshot `json:"progress,omitempty"`
}

func (s *Server) progress(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c := s.runner.Counters(id)
	var snap *vacuum.Snapshot
	if c != nil {
		sn := c.Snapshot()
		snap = &sn
	}
	d, err := s.runner.Run(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if d.Status != run.StatusRunning {
		snap = nil
	}
	s.writeJSON(w, http.StatusOK, Progress{Run: docWithWhy(d), Progress: snap})
}

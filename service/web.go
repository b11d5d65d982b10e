package service

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"fmt"
	"github.com/deltavacuum/deltavacuum/run"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/service/runner"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The web page: html/template pages and one CSS and one script file, embedded in the binary;
// nothing is fetched from elsewhere (the Content-Security-Policy says 'self' only).
//
//go:embed web/templates/*.html web/static/*
var webFiles embed.FS

// handlePages adds the pages (GET only; their POSTs are the JSON API's) to mux.
func (s *Server) handlePages(mux *http.ServeMux) {
	static, _ := fs.Sub(webFiles, "web/static")
	files := http.FileServerFS(static)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})))
	for pattern, h := range map[string]func(*Server, http.ResponseWriter, *http.Request){
		"GET /{$}":                         (*Server).tablesPage,
		"GET /tables/{id}":                 (*Server).tablePage,
		"GET /tables/{id}/previews/{plan}": (*Server).previewPage,
		"GET /runs":                        (*Server).runsListPage,
		"GET /runs/{id}":                   (*Server).runPage,
		"GET /login":                       (*Server).loginPage,
	} {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { h(s, w, r) })
	}
}

// pageData is what every page template receives.
type pageData struct {
	Title    string
	LoggedIn bool // a token is configured and this browser logged in: the page offers to log out
	Langs    []langLink
	Body     any
}

// render executes page name, in the language r asks for (localeOf), into a buffer (so a
// failure is a clean 500), redacts it as every response is, and writes it with a strict
// Content-Security-Policy; a language chosen with ?lang= is kept in a cookie.
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, name, title string, body any) {
	var buf bytes.Buffer
	l := localeOf(r)
	if err := l.pages.ExecuteTemplate(&buf, name, pageData{Title: title, LoggedIn: s.loggedIn(r), Langs: langLinks(r, l), Body: body}); err != nil {
		s.Log.Error("rendering a page", "page", name, "error", err.Error())
		http.Error(w, "rendering the page failed; see the service's log", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Language", l.tag)
	h.Add("Vary", "Accept-Language, Cookie")
	setLangCookie(w, r)
	w.WriteHeader(code)
	w.Write([]byte(s.Red.String(buf.String())))
}

// errorPage answers a page request that cannot be served.
func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, err error, table string) {
	code := statusOf(err)
	if code >= 500 {
		s.Log.Warn("page failed", "path", r.URL.Path, "status", code, "error", s.Red.String(err.Error()))
	}
	s.render(w, r, code, "error.html", localeOf(r).statusTitle(code), map[string]string{"Error": err.Error(), "Table": table})
}

// pageTable is the table a page's path names, or nil after a 404 page.
func (s *Server) pageTable(w http.ResponseWriter, r *http.Request) *tables.Table {
	t, ok := s.tables.Lookup(r.PathValue("id"))
	if !ok {
		s.errorPage(w, r, of(errNotFound, fmt.Errorf("no table %q in the configuration", r.PathValue("id"))), "")
		return nil
	}
	return t
}

func (s *Server) infoOf(r *http.Request, id string) TableInfo {
	for _, in := range s.tableInfos(r.Context()) {
		if in.ID == id {
			return in
		}
	}
	return TableInfo{ID: id}
}

// tableRow is one table of the tables page.
type tableRow struct {
	Info TableInfo
	Last *InspectionPoint
	Bar  template.HTML
}

func (s *Server) tablesPage(w http.ResponseWriter, r *http.Request) {
	l := localeOf(r)
	var rows []tableRow
	price := defaultPrice()
	for _, in := range s.tableInfos(r.Context()) {
		row := tableRow{Info: in}
		pts, rep, err := s.inspectionsOf(r, in.ID, 1)
		if err == nil && len(pts) == 1 {
			row.Last = &pts[0]
			row.Bar = l.shareBar(pts[0].LiveBytes, pts[0].ReclaimableBytes)
			price = rep.Price
		}
		rows = append(rows, row)
	}
	s.render(w, r, http.StatusOK, "tables.html", l.text("tables.title"), map[string]any{"Rows": rows, "Price": price})
}

func defaultPrice() insight.Price {
	return insight.Price{PerGBMonth: insight.DefaultPricePerGBMonth, Currency: insight.DefaultCurrency, Source: insight.DefaultPriceSource}
}

// runRow is a run with its state, and its figures as the pages name them (F).
type runRow struct {
	runner.RunDoc
	F runner.Figures
	// companions are the checksum companions among the files the run deleted: counted on the run
	// page, from its record read whole (runner.Companions), and not in a list of runs.
	companions int64
}

func runRowOf(d runner.RunDoc) runRow {
	return runRow{RunDoc: d, F: d.Figures}
}

// Elapsed is how long the run took, to the second (0 while it runs: the page shows nothing).
func (rr runRow) Elapsed() time.Duration {
	if rr.Ended == nil {
		return 0
	}
	return rr.Ended.Sub(rr.Started).Round(time.Second)
}

// Companions are the checksum companions that went with the files the run deleted (counted on
// the run page only).
func (rr runRow) Companions() int64 { return rr.companions }

// ShowUndoability says whether the run page says what the run promised of its files (what
// the store or the trash keeps): not once its state says more (undone, its trash purged, the
// rest lost, files to retry, nothing deleted), which the page's reason then says.
func (rr runRow) ShowUndoability() bool {
	switch rr.UndoOffer.Reason {
	case runner.OfferPossible, runner.OfferUnknown, runner.OfferNothingKept, runner.OfferInterrupted:
		return true
	}
	return false
}

// Via is how an undo brings the run's files back (via.* names it in words; "" when it cannot).
func (rr runRow) Via() string {
	if rr.Undo == nil {
		return ""
	}
	return rr.Undo.Via
}

// runsTable is the runs table of a page: the table page's (without the table column) and
// the runs page's.
type runsTable struct {
	Rows      []runRow
	ShowTable bool
}

func runsTableOf(docs []runner.RunDoc, showTable bool) runsTable {
	rt := runsTable{ShowTable: showTable}
	for _, d := range docs {
		rt.Rows = append(rt.Rows, runRowOf(d))
	}
	return rt
}

// historyShown is how many commits the table page shows, runsShown how many runs.
const (
	historyShown = 50
	runsShown    = 50
)

func (s *Server) tablePage(w http.ResponseWriter, r *http.Request) {
	t := s.pageTable(w, r)
	if t == nil {
		return
	}
	pts, last, err := s.inspectionsOf(r, t.Cfg.ID, 200)
	if err != nil {
		s.errorPage(w, r, err, t.Cfg.ID)
		return
	}
	l := localeOf(r)
	d := map[string]any{"Info": s.infoOf(r, t.Cfg.ID), "Points": pts, "Last": last, "Chart": l.bytesChart(pts), "Forecast": l.forecastChart(last), "HistoryShown": historyShown}
	if last != nil {
		d["Price"] = last.Price
	} else {
		d["Price"] = defaultPrice()
	}
	if h, err := s.historyOf(r, t, historyShown); err != nil {
		d["HistoryError"] = err.Error()
	} else {
		d["History"] = h
	}
	runs, err := s.runner.Runs(r.Context(), t.Cfg.ID, runsShown)
	if err != nil {
		s.errorPage(w, r, err, t.Cfg.ID)
		return
	}
	if len(runs) > 0 {
		d["Runs"] = runsTableOf(runs, false)
	}
	if pins, err := s.pinsOf(r, t); err != nil {
		d["PinsError"] = s.Red.String(err.Error())
	} else {
		d["Pins"] = pins
	}
	s.render(w, r, http.StatusOK, "table.html", l.text("table.title", "id", t.Cfg.ID), d)
}

// pinsOf reads the pins of t now (run.ListPins: one listing, a read per pin).
func (s *Server) pinsOf(r *http.Request, t *tables.Table) ([]run.PinState, error) {
	dt, err := s.tables.Open(r.Context(), t)
	if err != nil {
		return nil, err
	}
	return dt.Pins(r.Context(), s.Now(), run.DefaultMaxPin)
}

// filesPerPage is the page size of a preview's file list.
const filesPerPage = 100

func (s *Server) previewPage(w http.ResponseWriter, r *http.Request) {
	t := s.pageTable(w, r)
	if t == nil {
		return
	}
	digest := r.PathValue("plan")
	if !vacuum.ValidDigest(digest) {
		s.errorPage(w, r, of(errInvalid, fmt.Errorf("%q is not the digest of a preview", digest)), t.Cfg.ID)
		return
	}
	p := s.web.find(t.Cfg.ID, digest)
	if p == nil {
		s.errorPage(w, r, of(errNotFound, fmt.Errorf("this preview of %s is no longer kept (the service keeps the newest %d previews, until it stops): preview the table again", t.Cfg.ID, maxPreviews)), t.Cfg.ID)
		return
	}
	pageNo, err := intParam(r, "page", 1, 1, maxOffset/filesPerPage)
	if err != nil {
		s.errorPage(w, r, err, t.Cfg.ID)
		return
	}
	pp, err := previewPageOf(p, (pageNo-1)*filesPerPage, filesPerPage, 50)
	if err != nil {
		s.errorPage(w, r, err, t.Cfg.ID)
		return
	}
	pagesN := max(1, (p.Result.Files.Len()+filesPerPage-1)/filesPerPage)
	if pageNo > pagesN {
		s.errorPage(w, r, of(errInvalid, fmt.Errorf("parameter page=%d: the preview has %d pages of files", pageNo, pagesN)), t.Cfg.ID)
		return
	}
	l := localeOf(r)
	d := map[string]any{"P": pp, "Page": pageNo, "Pages": pagesN, "DryRunOnly": t.Cfg.DryRunOnly, "Observed": p.Observed,
		"FoldersNotShown": len(p.Folders) - len(pp.Folders.Items), "FolderChart": l.foldersChart(pp.Folders.Items),
		"Notes": l.planNotes(p.Result, t.Cfg.ID)}
	if moved := r.URL.Query().Get("moved"); moved != "" {
		if run, err := s.runner.Run(r.Context(), moved); err == nil && run.Table == t.Cfg.ID && run.Figures.PlanChanged {
			d["Moved"] = run.ID
		}
	}
	s.render(w, r, http.StatusOK, "preview.html", l.text("preview.title", "id", t.Cfg.ID), d)
}

// runsPerPage is how many runs the runs page shows at a time.
const runsPerPage = 50

// runsListPage lists the runs of every table (or of ?table=), newest first, a page at a time
// (?page=), as Fabric's Monitoring hub lists maintenance jobs: state, table, start, duration,
// files, bytes, what an undo can do.
func (s *Server) runsListPage(w http.ResponseWriter, r *http.Request) {
	table, err := strParam(r, "table")
	if err != nil {
		s.errorPage(w, r, err, "")
		return
	}
	pageNo, err := intParam(r, "page", 1, 1, maxOffset/runsPerPage)
	if err != nil {
		s.errorPage(w, r, err, "")
		return
	}
	page, err := s.runsPage(r, table, (pageNo-1)*runsPerPage, runsPerPage)
	if err != nil {
		s.errorPage(w, r, err, "")
		return
	}
	pages := max(1, (page.Total+runsPerPage-1)/runsPerPage)
	if pageNo > pages {
		s.errorPage(w, r, of(errInvalid, fmt.Errorf("parameter page=%d: there are %d pages of runs", pageNo, pages)), "")
		return
	}
	l := localeOf(r)
	title := l.text("runs.title")
	if table != "" {
		title = l.text("runs.title.table", "id", table)
	}
	q := ""
	if table != "" {
		q = "table=" + url.QueryEscape(table) + "&"
	}
	s.render(w, r, http.StatusOK, "runs.html", title, map[string]any{"Runs": runsTableOf(page.Items, table == ""), "Table": table,
		"Total": page.Total, "From": page.Offset + 1, "To": page.Offset + len(page.Items), "Page": pageNo, "Pages": pages, "Query": q})
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	next := r.URL.Query().Get("next")
	// Only a path of this service: never a redirect elsewhere.
	// A browser drops tabs and newlines anywhere in a URL ("/\t/evil.example" is
	// "//evil.example"): a control character or a space is refused too.
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, `\`) ||
		strings.ContainsFunc(next, func(c rune) bool { return c <= ' ' || c == 0x7f }) {
		next = "/"
	}
	s.render(w, r, http.StatusOK, "login.html", localeOf(r).text("login.title"), map[string]any{"Next": next, "NoToken": s.auth.token == ""})
}

func compactJSON(b json.RawMessage) string {
	var buf bytes.Buffer
	if len(b) == 0 || json.Compact(&buf, b) != nil {
		return ""
	}
	if s := buf.String(); s != "{}" && s != "null" {
		return s
	}
	return ""
}

// loggedIn reports whether r comes from a browser that logged in: a token is configured and
// the login cookie holds it. Only such a page offers to log out.
func (s *Server) loggedIn(r *http.Request) bool {
	if s.auth.token == "" {
		return false
	}
	c, err := r.Cookie(cookieName)
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.auth.token)) == 1
}

// locationOf is where table id is (its path, or its name), "" for a table the service no
// longer has.
func (s *Server) locationOf(id string) string {
	t, ok := s.tables.Lookup(id)
	if !ok {
		return ""
	}
	return t.Cfg.Path
}

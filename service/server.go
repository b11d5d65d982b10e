package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/deltavacuum/deltavacuum/internal/redact"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/schedule"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/storage/location"
)

// Options configure a Server.
type Options struct {
	Config *config.Config
	State  *state.DB
	// Getenv reads the environment (default os.Getenv): the token and storage options.
	Getenv func(string) string
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Server is the HTTP side of the service: the API, the web page and their security. It
// decodes, calls and encodes: the runs are the runner's, the schedules the scheduler's, the
// discover roots discovery's, the tables (and how they open) the tables'.
type Server struct {
	*shared
	auth   auth
	reg    *prometheus.Registry
	st     *state.DB // read here (runs, inspections); the runner writes them
	tables *tables
	runner *runner
	sched  *scheduler
	disc   *discovery
	web    webState // the web page's previews (web_preview.go)
}

// auth is the security of every request (guard): the token ("" when none is configured, on
// loopback only), the loopback rule for the Host, and the check of cross-site POSTs.
type auth struct {
	token    string
	loopback bool
	cop      *http.CrossOriginProtection
}

// New returns a server; it resolves the token and every table's storage options from the
// environment, and refuses to start when one is missing. It opens no table.
func New(opts Options) (*Server, error) {
	if opts.Config == nil || opts.State == nil {
		return nil, errors.New("service: a configuration and a state database are needed")
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	cfg := opts.Config
	token, err := cfg.ResolveToken(opts.Getenv)
	if err != nil {
		return nil, err
	}
	if token == "" && !cfg.Loopback() {
		return nil, fmt.Errorf("listen %s is not a loopback address: configure a token", cfg.Listen)
	}
	red := redact.New()
	red.Add(token)
	for _, e := range location.SDKSecretEnv {
		red.Add(opts.Getenv(e))
	}
	sh := &shared{now: opts.Now, red: red, log: slog.New(&redactingHandler{h: opts.Logger.Handler(), red: red})}
	ts, err := newTables(sh, cfg, opts.Getenv)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	var hook *webhook
	failures := newWebhookFailures(reg)
	if w := cfg.Webhook; w != nil {
		if hook, err = newWebhook(sh, w, opts.Getenv, failures); err != nil {
			return nil, err
		}
	}
	roots, err := newRoots(ts, opts.Getenv)
	if err != nil {
		return nil, err
	}
	r := newRunner(sh, cfg, opts.State, ts, newRunMetrics(reg), hook)
	sc := &scheduler{shared: sh, st: opts.State, limit: cfg.MaxConcurrentRuns, tables: ts, runner: r, misfires: newMisfires(reg)}
	s := &Server{
		shared: sh, auth: auth{token: token, loopback: cfg.Loopback(), cop: http.NewCrossOriginProtection()},
		reg: reg, st: opts.State, tables: ts, runner: r, sched: sc,
		disc: &discovery{shared: sh, st: opts.State, tables: ts, sched: sc, roots: roots, count: newDiscovered(reg)},
	}
	if err := r.failInterrupted(context.Background()); err != nil {
		r.life.stop()
		return nil, err
	}
	return s, nil
}

// route is one endpoint; routes is the API, and docs/openapi.yaml documents exactly these.
type route struct {
	method, pattern string
	handler         func(*Server, http.ResponseWriter, *http.Request)
}

var routes = []route{
	{"GET", "/healthz", (*Server).healthz},
	{"GET", "/metrics", nil}, // promhttp
	{"GET", "/api/tables", (*Server).listTables},
	{"GET", "/api/tables/{id}/inspect", (*Server).inspect},
	{"POST", "/api/tables/{id}/preview", (*Server).preview},
	{"POST", "/api/tables/{id}/runs", (*Server).startRun},
	{"GET", "/api/runs/{id}", (*Server).getRun},
	{"POST", "/api/runs/{id}/cancel", (*Server).cancelRun},
	{"POST", "/api/runs/{id}/undo", (*Server).undoRun},
}

// Handler is the HTTP API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	s.handlePages(mux)
	for _, r := range apiRoutes() {
		var h http.Handler
		if r.handler == nil {
			h = promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{})
		} else {
			fn := r.handler
			h = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { fn(s, w, req) })
		}
		mux.Handle(r.method+" "+r.pattern, h)
	}
	return s.guard(mux)
}

// maxBody bounds a request body: the API takes small JSON objects.
const maxBody = 1 << 20

// guard is the security of every request: on loopback, a Host that is loopback (a page
// cannot reach the API by rebinding a name of its own to 127.0.0.1); the token when one is
// configured (everywhere but /healthz); and for POSTs, a JSON body and no cross-site origin
// (a form or a page elsewhere cannot start or undo a run).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.auth.loopback && !loopbackHost(r.Host) {
			s.failCode(w, r, http.StatusMisdirectedRequest, fmt.Errorf("host %q is not a loopback address: use 127.0.0.1, [::1] or localhost", r.Host))
			return
		}
		if s.auth.token != "" && !openPath(r) {
			if !s.authorized(r) {
				if pageRequest(r) {
					redirectToLogin(w, r)
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="deltavacuum"`)
				s.failCode(w, r, http.StatusUnauthorized, errors.New("a valid token is required: send the header Authorization: Bearer TOKEN, or, in a browser, log in at /login (it keeps the token in the "+cookieName+" cookie)"))
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				s.failCode(w, r, http.StatusUnsupportedMediaType, errors.New("a POST must have Content-Type: application/json"))
				return
			}
			if err := s.auth.cop.Check(r); err != nil {
				s.failCode(w, r, http.StatusForbidden, errors.New("cross-site request refused"))
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		}
		next.ServeHTTP(w, r)
	})
}

func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// writeJSON writes v, redacted.
func (s *Server) writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"encoding the response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	io.WriteString(w, s.red.String(string(b))+"\n")
}

type errorBody struct {
	Error string `json:"error"`
}

// fail answers err with the status of its kind (statusOf).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.failCode(w, r, statusOf(err), err)
}

// failCode answers err with code: the refusals of the HTTP layer itself (guard, login), and
// fail's answer.
func (s *Server) failCode(w http.ResponseWriter, r *http.Request, code int, err error) {
	msg := s.red.String(err.Error())
	if code >= 500 || code == http.StatusConflict {
		s.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", code, "error", msg)
	}
	s.writeJSON(w, code, errorBody{Error: msg})
}

// decode reads a JSON object body into v strictly; an empty body is {}.
func decode(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return of(errInvalid, fmt.Errorf("reading the body: %w", err))
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return of(errInvalid, fmt.Errorf("the body is not the JSON object expected: %v", err))
	}
	if dec.More() {
		return of(errInvalid, errors.New("the body holds more than one JSON value"))
	}
	return nil
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// TableInfo is a table as the API lists it.
type TableInfo struct {
	ID         string        `json:"id"`
	Location   string        `json:"location,omitempty"`
	Name       string        `json:"name,omitempty"`
	DryRunOnly bool          `json:"dryRunOnly"`
	Policy     PolicyInfo    `json:"policy"`
	Schedule   *ScheduleInfo `json:"schedule,omitempty"`
	LastRun    *state.Run    `json:"lastRun,omitempty"`
	Running    string        `json:"running,omitempty"`
}

// PolicyInfo is a table's policy.
type PolicyInfo struct {
	Retention      string  `json:"retention"`
	RetentionHours float64 `json:"retentionHours,omitempty"`
	RetentionCheck bool    `json:"retentionCheck"`
	Mode           string  `json:"mode"`
	FullEvery      string  `json:"fullEvery,omitempty"`
	Trash          bool    `json:"trash"`
	// InspectEvery is how often the service inspects the table on its own, or "off".
	InspectEvery string `json:"inspectEvery"`
}

// ScheduleInfo is a table's schedule and its next planned start.
type ScheduleInfo struct {
	Cron      string     `json:"cron"`
	TimeZone  string     `json:"timezone"`
	Window    string     `json:"window,omitempty"`
	Jitter    string     `json:"jitter,omitempty"`
	NextStart *time.Time `json:"nextStart,omitempty"`
}

func (s *Server) listTables(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, http.StatusOK, map[string]any{"tables": s.tableInfos(r.Context())})
}

// tableInfos are the tables as GET /api/tables and the web page list them.
func (s *Server) tableInfos(ctx context.Context) []TableInfo {
	out := []TableInfo{}
	busy := s.runner.held()
	tables := s.tables.all()
	handled := s.sched.handled(tables)
	for _, t := range tables {
		c := t.cfg
		info := TableInfo{ID: c.ID, Location: location.SafeURI(c.Path), Name: c.Name, DryRunOnly: c.DryRunOnly, Running: busy[c.ID]}
		info.Policy = PolicyInfo{Retention: "table", RetentionCheck: c.Policy.RetentionCheck, Mode: string(c.Policy.Mode), Trash: c.Policy.Trash}
		if c.Policy.Retention.Set {
			info.Policy.Retention, info.Policy.RetentionHours = "hours", c.Policy.Retention.Hours
			if c.Policy.Retention.Preset != "" {
				info.Policy.Retention = c.Policy.Retention.Preset
			}
		}
		info.Policy.InspectEvery = "off"
		if c.Policy.InspectEvery > 0 {
			info.Policy.InspectEvery = c.Policy.InspectEvery.String()
		}
		if c.Policy.FullEvery > 0 {
			info.Policy.FullEvery = c.Policy.FullEvery.String()
		}
		if sc := c.Schedule; sc != nil {
			si := &ScheduleInfo{Cron: sc.Cron.String(), TimeZone: sc.TimeZone}
			if sc.Window != nil {
				si.Window = sc.Window.Start.String() + "-" + sc.Window.End.String()
			}
			if sc.Jitter > 0 {
				si.Jitter = sc.Jitter.String()
			}
			if h, ok := handled[c.ID]; ok {
				if n := schedule.NextStart(scheduleTable(c), h); !n.IsZero() {
					n = n.UTC()
					si.NextStart = &n
				}
			}
			info.Schedule = si
		}
		if runs, err := s.st.Runs(ctx, c.ID, 1); err == nil && len(runs) == 1 {
			info.LastRun = &runs[0]
		}
		out = append(out, info)
	}
	return out
}

func (s *Server) tableOf(w http.ResponseWriter, r *http.Request) *table {
	t, ok := s.tables.lookup(r.PathValue("id"))
	if !ok {
		s.fail(w, r, of(errNotFound, fmt.Errorf("no table %q in the configuration (GET /api/tables lists them)", r.PathValue("id"))))
		return nil
	}
	return t
}

// redactingHandler passes every log record's message and attributes through the redactor.
type redactingHandler struct {
	h   slog.Handler
	red *redact.Redactor
}

func (h *redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.h.Enabled(ctx, l)
}

func (h *redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.red.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(slog.String(a.Key, h.red.String(a.Value.String())))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &redactingHandler{h: h.h.WithAttrs(as), red: h.red}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{h: h.h.WithGroup(name), red: h.red}
}

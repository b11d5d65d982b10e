package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/deltavacuum/deltavacuum/internal/redact"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/runner"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/service/tables"
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

// Server is the HTTP side of the service: the API, the web page, Fabric's job API and their
// security. It decodes, calls and encodes: the runs are the runner's (service/runner), the
// tables and the discover roots the tables' (service/tables), the words of the pages
// messages.go's.
type Server struct {
	*tables.Env
	auth   auth
	reg    *prometheus.Registry
	cfg    *config.Config
	st     *state.DB // read here for the inspections the charts draw; the runs are the runner's
	tables *tables.Set
	runner *runner.Runner
	disc   *tables.Discovery
	hook   *webhook    // nil without a webhook
	web    webState    // the web page's previews (web_preview.go)
	fabric fabricState // the jobs Fabric's job API deduplicated (fabric.go)
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
	env := &tables.Env{Now: opts.Now, Red: red, Log: slog.New(&redactingHandler{h: opts.Logger.Handler(), red: red})}
	ts, err := tables.New(env, cfg, opts.Getenv)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	var hook *webhook
	failures := newWebhookFailures(reg)
	if w := cfg.Webhook; w != nil {
		if hook, err = newWebhook(env, w, opts.Getenv, failures); err != nil {
			return nil, err
		}
	}
	disc, err := tables.NewDiscovery(ts, opts.Getenv, reg)
	if err != nil {
		return nil, err
	}
	rc := runner.Config{Env: env, Service: cfg, State: opts.State, Tables: ts, Discovery: disc, Registry: reg}
	if hook != nil {
		rc.Notifier = hook
	}
	s := &Server{
		Env: env, auth: auth{token: token, loopback: cfg.Loopback(), cop: http.NewCrossOriginProtection()},
		reg: reg, cfg: cfg, st: opts.State, tables: ts, runner: runner.New(rc), disc: disc, hook: hook,
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
	{"GET", "/api/tables/{id}/pins", (*Server).listPins},
	{"POST", "/api/tables/{id}/pins", (*Server).createPin},
	{"DELETE", "/api/tables/{id}/pins/{pin}", (*Server).deletePin},
	{"GET", "/api/runs", (*Server).listRuns},
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
	return s.guard(s.fabricUnserved(mux))
}

// maxBody bounds a request body: the API takes small JSON objects.
const maxBody = 1 << 20

// guard is the security of every request: on loopback, a Host that is loopback (a page
// cannot reach the API by rebinding a name of its own to 127.0.0.1); the token when one is
// configured (everywhere but /healthz); and for POSTs, a JSON body and no cross-site origin
// (a form or a page elsewhere cannot start or undo a run). A POST of Fabric's job API without
// a body may leave Content-Type out, as Fabric's clients send Cancel Item Job Instance
// (fabricBodyless), and so may a DELETE without a body (no HTML form sends one); both pass the
// cross-site check all the same.
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
			bodylessDelete := r.Method == http.MethodDelete && r.ContentLength == 0 && r.Header.Get("Content-Type") == ""
			if (err != nil || mt != "application/json") && !fabricBodyless(r) && !bodylessDelete {
				s.failCode(w, r, http.StatusUnsupportedMediaType, fmt.Errorf("a %s must have Content-Type: application/json", r.Method))
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

// loopbackHost reports whether a Host header names this machine, strictly: localhost (any
// case), an IPv4 loopback address, or an IPv6 loopback address in brackets, each with or
// without a port of digits. Anything else is refused: an empty Host (an HTTP/1.0 request
// without one, or "Host:" with nothing), a name in brackets ("[localhost]"), an IPv4 address
// in brackets, an IPv6 address without them, a port that is no number.
func loopbackHost(hostport string) bool {
	host, port := hostport, ""
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return false
		}
		host, port = hostport[1:end], hostport[end+1:]
		ip := net.ParseIP(host)
		if ip == nil || ip.To4() != nil && !strings.Contains(host, ":") {
			return false
		}
	} else if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
		host, port = hostport[:i], hostport[i:]
	}
	if port != "" {
		p, ok := strings.CutPrefix(port, ":")
		if !ok {
			return false
		}
		for _, c := range p {
			if c < '0' || c > '9' {
				return false
			}
		}
		if n, err := strconv.Atoi(p); p != "" && (err != nil || n > 65535) {
			return false
		}
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if strings.Contains(host, ":") && !strings.HasPrefix(hostport, "[") {
		return false // an IPv6 address is written in brackets in a Host
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// StartScheduler sets up the schedules of the tables that have one.
func (s *Server) StartScheduler(ctx context.Context) error { return s.runner.StartScheduler(ctx) }

// Tick does what is due at the server's clock (runner.Runner.Tick): the discover roots, the
// trash past its undo window, the periodic inspections, the scheduled runs. The command calls it
// every few seconds; tests call it with an injected clock.
func (s *Server) Tick(ctx context.Context) { s.runner.Tick(ctx) }

// Discover lists the discover root id now and updates the tables.
func (s *Server) Discover(ctx context.Context, id string, now time.Time) error {
	return s.disc.Discover(ctx, id, now)
}

// Shutdown stops starting runs, cancels those in progress (each stops between batches of
// deletes and records VACUUM END, its run record FAILED), and waits for them until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error { return s.runner.Shutdown(ctx) }

// Wait waits for the runs in progress to end (for tests and the command's exit).
func (s *Server) Wait() { s.runner.Wait() }

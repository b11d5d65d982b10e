package service

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/service/runner"

	"go.yaml.in/yaml/v3"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// clock is an injected clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// makeTable writes a table at dir: live.parquet is live, old.parquet was removed 10 days
// before now, stray.parquet was never committed; all three are 10 days old. props are the
// table's properties.
func makeTable(t *testing.T, dir string, now time.Time, props map[string]string) {
	t.Helper()
	ctx := context.Background()
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if props == nil {
		props = map[string]string{}
	}
	old := now.Add(-10 * 24 * time.Hour)
	actions := []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": props}},
		map[string]any{"add": map[string]any{"path": "live.parquet", "size": 4, "modificationTime": old.UnixMilli(), "dataChange": true}},
		map[string]any{"remove": map[string]any{"path": "old.parquet", "deletionTimestamp": old.UnixMilli(), "dataChange": true}},
	}
	if err := deltalog.WriteCommit(ctx, store, 0, actions); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"live.parquet", "old.parquet", "stray.parquet"} {
		p := filepath.Join(dir, f)
		if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	commit := filepath.Join(dir, "_delta_log", "00000000000000000000.json")
	if err := os.Chtimes(commit, old, old); err != nil {
		t.Fatal(err)
	}
}

type fixture struct {
	srv   *Server
	http  *httptest.Server
	clock *clock
	dir   string // the tables' parent
	db    *state.DB
}

var t0 = time.Now().UTC().Truncate(time.Second)

// newFixture writes the tables a, b, ... the configuration's tables name (each path
// TABLES/<id>) and starts a server on 127.0.0.1.
func newFixture(t *testing.T, yamlTables string, env map[string]string, props map[string]map[string]string) *fixture {
	t.Helper()
	dir := t.TempDir()
	tables := filepath.Join(dir, "tables")
	yml := "dataDir: " + filepath.Join(dir, "state") + "\n" + strings.ReplaceAll(yamlTables, "TABLES", tables)
	cfg, err := config.Parse([]byte(yml), "m.yaml", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cfg.Tables {
		if tc.Path != "" && !strings.Contains(tc.Path, "://") {
			makeTable(t, tc.Path, t0, props[tc.ID])
		}
	}
	db, err := state.Open(context.Background(), cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := &clock{t: t0}
	srv, err := New(Options{Config: cfg, State: db, Now: c.now, Getenv: func(k string) string { return env[k] },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		srv.Shutdown(context.Background())
	})
	return &fixture{srv: srv, http: hs, clock: c, dir: tables, db: db}
}

// runs are the newest runs of table (every table when "") as the service shows them: what the
// state database keeps of each, with its outcome read from the table's run record.
func (f *fixture) runs(t *testing.T, table string, limit int) []runner.RunDoc {
	t.Helper()
	runs, err := f.srv.runner.Runs(context.Background(), table, limit)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

func (f *fixture) do(t *testing.T, method, path, body string, hdr ...string) (int, map[string]any) {
	t.Helper()
	resp, b := f.send(t, method, path, body, hdr...)
	var out map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	} else {
		out = map[string]any{"text": string(b)}
	}
	return resp.StatusCode, out
}

// send sends a request to the service (path, or an absolute URL) and returns the response with
// its body read. hdr are name, value pairs; "Host" sets the request's host.
func (f *fixture) send(t *testing.T, method, path, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	u := path
	if !strings.HasPrefix(u, "http") {
		u = f.http.URL + path
	}
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Stat(p)
	return err == nil
}

// TestRunLifecycle: list, inspect, preview (nothing deleted), run (id at once, COMPLETED
// with its figures and run record), metrics, undo from the trash.
func TestRunLifecycle(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true}}\n", nil, nil)
	a := filepath.Join(f.dir, "a")

	code, body := f.do(t, "GET", "/api/tables", "")
	if code != 200 || len(body["tables"].([]any)) != 1 {
		t.Fatalf("tables: %d %v", code, body)
	}
	code, body = f.do(t, "GET", "/api/tables/a/inspect", "")
	if code != 200 || body["reclaimable"].(map[string]any)["files"].(float64) != 2 {
		t.Fatalf("inspect: %d %v", code, body)
	}
	if ins, _ := f.db.Inspections(context.Background(), "a", time.Time{}, 10); len(ins) != 1 {
		t.Errorf("inspections kept: %d, want 1", len(ins))
	}
	code, body = f.do(t, "POST", "/api/tables/a/preview", "{}")
	if code != 200 || body["numFilesToDelete"].(float64) != 2 || !body["dryRun"].(bool) {
		t.Fatalf("preview: %d %v", code, body)
	}
	if !exists(t, filepath.Join(a, "old.parquet")) || !exists(t, filepath.Join(a, "stray.parquet")) {
		t.Fatal("the preview deleted files")
	}

	code, body = f.do(t, "POST", "/api/tables/a/runs", "")
	if code != 202 || body["status"] != "RUNNING" {
		t.Fatalf("start: %d %v", code, body)
	}
	id := body["id"].(string)
	f.srv.Wait()
	code, body = f.do(t, "GET", "/api/runs/"+id, "")
	if code != 200 || body["status"] != "COMPLETED" || body["trigger"] != "api" || body["mode"] != "FULL" {
		t.Fatalf("run: %d %v", code, body)
	}
	figs := body["figures"].(map[string]any)
	if figs["numDeletedFiles"].(float64) != 2 || figs["retentionHours"].(float64) != 168 || body["recordId"] == "" {
		t.Errorf("figures: %v", body)
	}
	if exists(t, filepath.Join(a, "old.parquet")) || exists(t, filepath.Join(a, "stray.parquet")) || !exists(t, filepath.Join(a, "live.parquet")) {
		t.Error("the run did not delete exactly old.parquet and stray.parquet")
	}
	_, m := f.do(t, "GET", "/metrics", "")
	for _, want := range []string{
		`deltavacuum_serve_runs_total{status="COMPLETED",table="a",trigger="api"} 1`,
		`deltavacuum_serve_deleted_files_total{table="a"} 2`,
		`deltavacuum_serve_runs_in_progress 0`,
	} {
		if !strings.Contains(m["text"].(string), want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	code, body = f.do(t, "POST", "/api/runs/"+id+"/undo", `{"dryRun": true}`)
	if code != 200 || exists(t, filepath.Join(a, "old.parquet")) {
		t.Fatalf("undo dry run: %d %v", code, body)
	}
	code, body = f.do(t, "POST", "/api/runs/"+id+"/undo", `{}`)
	if code != 200 || !exists(t, filepath.Join(a, "old.parquet")) || !exists(t, filepath.Join(a, "stray.parquet")) {
		t.Fatalf("undo: %d %v", code, body)
	}
	if code, _ := f.do(t, "POST", "/api/runs/"+id+"/cancel", "{}"); code != 409 {
		t.Errorf("cancel of an ended run: %d, want 409", code)
	}
	if code, _ := f.do(t, "GET", "/api/runs/nope", ""); code != 404 {
		t.Errorf("unknown run: %d, want 404", code)
	}
	if code, _ := f.do(t, "POST", "/api/tables/nope/runs", "{}"); code != 404 {
		t.Errorf("unknown table: %d, want 404", code)
	}
	if code, _ := f.do(t, "POST", "/api/tables/a/runs", `{"retainHours": 0}`); code != 400 {
		t.Errorf("unknown body field: %d, want 400", code)
	}
}

// TestBusyByTheTableItself: the table's lock held by another process (another service, a CLI
// run) refuses a run with 409 and deletes nothing.
func TestBusyByTheTableItself(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	a := filepath.Join(f.dir, "a")
	id := holdTable(t, a, t0, time.Time{})
	code, body := f.do(t, "POST", "/api/tables/a/runs", "{}")
	if code != 409 || !strings.Contains(body["error"].(string), id) {
		t.Fatalf("got %d %v, want 409 naming the run that holds the table", code, body)
	}
	f.srv.Wait()
	if !exists(t, filepath.Join(a, "old.parquet")) {
		t.Error("a file was deleted")
	}
	if runs, _ := f.db.Runs(context.Background(), "a", 10); len(runs) != 0 {
		t.Errorf("a refused run was recorded: %v", runs)
	}
}

// TestFailedRunIsFailed: a run the library refuses (a retention under the table's with the
// safety check on) is FAILED with the reason, never COMPLETED; with the check disabled in
// the policy it runs; a longer table property wins over the policy.
func TestFailedRunIsFailed(t *testing.T) {
	f := newFixture(t, `tables:
  - {id: checked, path: TABLES/checked, policy: {retention: 24}}
  - {id: unchecked, path: TABLES/unchecked, policy: {retention: 24, retentionCheck: disabled}}
  - {id: longer, path: TABLES/longer, policy: {retention: 24}}
`, nil, map[string]map[string]string{"longer": {"delta.deletedFileRetentionDuration": "interval 30 days"}})
	code, body := f.do(t, "POST", "/api/tables/checked/runs", "{}")
	if code != 202 {
		t.Fatalf("start: %d %v", code, body)
	}
	id := body["id"].(string)
	f.srv.Wait()
	_, run := f.do(t, "GET", "/api/runs/"+id, "")
	if run["status"] != "FAILED" || !strings.Contains(run["error"].(string), "retention") {
		t.Errorf("got %v, want FAILED with the retention check's reason", run)
	}
	if !exists(t, filepath.Join(f.dir, "checked", "old.parquet")) {
		t.Error("a refused run deleted a file")
	}
	_, m := f.do(t, "GET", "/metrics", "")
	if !strings.Contains(m["text"].(string), `deltavacuum_serve_runs_total{status="FAILED",table="checked",trigger="api"} 1`) {
		t.Error("the failed run is not counted FAILED")
	}

	code, body = f.do(t, "POST", "/api/tables/unchecked/preview", "{}")
	if code != 200 || body["retentionHours"].(float64) != 24 {
		t.Errorf("unchecked preview: %d %v", code, body)
	}
	// 30 days > 24 h: the table's own property is kept; both files are 10 days old: none goes.
	code, body = f.do(t, "POST", "/api/tables/longer/preview", "{}")
	if code != 200 || body["retentionHours"].(float64) != 720 || body["numFilesToDelete"].(float64) != 0 {
		t.Errorf("longer preview: %d %v", code, body)
	}
}

func TestDryRunOnly(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, dryRunOnly: true}\n", nil, nil)
	if code, _ := f.do(t, "POST", "/api/tables/a/runs", "{}"); code != 403 {
		t.Errorf("got %d, want 403", code)
	}
	if code, _ := f.do(t, "POST", "/api/tables/a/preview", "{}"); code != 200 {
		t.Errorf("preview: got %d, want 200", code)
	}
	if !exists(t, filepath.Join(f.dir, "a", "old.parquet")) {
		t.Error("a dryRunOnly table lost a file")
	}
}

// TestSecurity: Host must be loopback on a loopback listener (DNS rebinding); POSTs need JSON
// and no cross-site origin; a configured token is required everywhere but /healthz and
// never rendered.
func TestSecurity(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	cases := []struct {
		name, method, path, body string
		hdr                      []string
		want                     int
	}{
		{"rebound host", "GET", "/api/tables", "", []string{"Host", "evil.example:8080"}, 421},
		{"localhost", "GET", "/api/tables", "", []string{"Host", "localhost:8080"}, 200},
		{"no content type", "POST", "/api/tables/a/runs", "{}", []string{"Content-Type", ""}, 415},
		{"form post", "POST", "/api/tables/a/runs", "a=b", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415},
		{"text/plain", "POST", "/api/tables/a/runs", "{}", []string{"Content-Type", "text/plain"}, 415},
		{"cross-site fetch", "POST", "/api/tables/a/runs", "{}", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"other origin", "POST", "/api/tables/a/runs", "{}", []string{"Origin", "https://evil.example"}, 403},
		{"GET on a POST route", "GET", "/api/tables/a/preview", "", nil, 405},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if code, body := f.do(t, tc.method, tc.path, tc.body, tc.hdr...); code != tc.want {
				t.Errorf("got %d %v, want %d", code, body, tc.want)
			}
		})
	}
	f.srv.Wait()
	if !exists(t, filepath.Join(f.dir, "a", "old.parquet")) {
		t.Error("a refused request deleted a file")
	}

	const token = "s3cr3t-t0ken-0123456789"
	g := newFixture(t, "listen: 0.0.0.0:0\ntoken: ${DV_TOKEN}\ntables:\n  - {id: a, path: TABLES/a}\n", map[string]string{"DV_TOKEN": token}, nil)
	if code, _ := g.do(t, "GET", "/healthz", ""); code != 200 {
		t.Errorf("healthz without token: %d", code)
	}
	for _, p := range []string{"/api/tables", "/metrics"} {
		code, body := g.do(t, "GET", p, "")
		if code != 401 {
			t.Errorf("%s without token: %d, want 401", p, code)
		}
		// The message names both ways in: the header for clients, the login page for browsers.
		if msg, _ := body["error"].(string); !strings.Contains(msg, "Authorization: Bearer") || !strings.Contains(msg, "/login") || !strings.Contains(msg, cookieName) {
			t.Errorf("%s without token: the 401 says %q", p, msg)
		}
		if code, _ := g.do(t, "GET", p, "", "Authorization", "Bearer wrong"); code != 401 {
			t.Errorf("%s with a wrong token: %d, want 401", p, code)
		}
	}
	code, body := g.do(t, "GET", "/api/tables", "", "Authorization", "Bearer "+token, "Host", "deltavacuum.internal:8080")
	if code != 200 {
		t.Errorf("with the token: %d %v", code, body)
	}
	b, _ := json.Marshal(body)
	if strings.Contains(string(b), token) {
		t.Error("the token is rendered")
	}
}

func TestNewRefuses(t *testing.T) {
	dir := t.TempDir()
	db, err := state.Open(context.Background(), filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg, err := config.Parse([]byte("dataDir: /s\ntoken: ${T}\ntables:\n  - {id: a, path: /a, storageOptions: {aws_region: '${R}'}}\n"), "m.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"R": "x"}
	if _, err := New(Options{Config: cfg, State: db, Getenv: func(k string) string { return env[k] }}); err == nil || !strings.Contains(err.Error(), "T") {
		t.Errorf("unset token: got %v", err)
	}
	env = map[string]string{"T": "0123456789abcdef"}
	if _, err := New(Options{Config: cfg, State: db, Getenv: func(k string) string { return env[k] }}); err == nil || !strings.Contains(err.Error(), "R") {
		t.Errorf("unset storage option: got %v", err)
	}
}

// TestScheduledRun: on an injected clock, no run before the fire, one at it, none again for
// the same fire; the fire is recorded handled; a fire whose window closed is lost.
func TestScheduledRun(t *testing.T) {
	// The library stops a run whose clock leads the store's by more than a minute: the fire
	// of a is this minute of the real clock, and the injected clock never passes it during a
	// run.
	fire := time.Now().UTC().Truncate(time.Minute)
	hm := func(d time.Duration) string { return fire.Add(d).Format("15:04") }
	cron := func(d time.Duration) string {
		x := fire.Add(d)
		return fmt.Sprintf("%d %d * * *", x.Minute(), x.Hour())
	}
	f := newFixture(t, `tables:
  - id: a
    path: TABLES/a
    schedule: {cron: "`+cron(0)+`", timezone: UTC, window: {start: "`+hm(-time.Hour)+`", end: "`+hm(2*time.Hour)+`"}}
  - id: b
    path: TABLES/b
    schedule: {cron: "`+cron(30*time.Minute)+`", timezone: UTC, window: {start: "`+hm(30*time.Minute)+`", end: "`+hm(40*time.Minute)+`"}}
`, nil, nil)
	ctx := context.Background()
	f.clock.set(fire.Add(-time.Hour))
	if err := f.srv.StartScheduler(ctx); err != nil {
		t.Fatal(err)
	}
	tick := func(d time.Duration) {
		f.clock.set(fire.Add(d))
		f.srv.Tick(ctx)
		f.srv.Wait()
	}
	tick(-time.Minute)
	if runs, _ := f.db.Runs(ctx, "", 10); len(runs) != 0 {
		t.Fatalf("a run before the fire: %v", runs)
	}
	tick(0)
	tick(time.Second)
	runs := f.runs(t, "", 10)
	if len(runs) != 1 || runs[0].Table != "a" || runs[0].Trigger != "schedule" || runs[0].Status != run.StatusCompleted {
		t.Fatalf("got %+v, want one COMPLETED scheduled run of a", runs)
	}
	if exists(t, filepath.Join(f.dir, "a", "old.parquet")) {
		t.Error("the scheduled run deleted nothing")
	}
	// No tick from the fire to 50 minutes after (the service was down): b's fire 30 minutes
	// after is lost, its window closed.
	tick(50 * time.Minute)
	if runs, _ := f.db.Runs(ctx, "b", 10); len(runs) != 0 {
		t.Errorf("b ran outside its window: %v", runs)
	}
	sch, _ := f.db.Schedules(ctx)
	if !sch["a"].Handled.Equal(fire) || !sch["b"].Handled.Equal(fire.Add(30*time.Minute)) {
		t.Errorf("handled: %v", sch)
	}
	_, m := f.do(t, "GET", "/metrics", "")
	if !strings.Contains(m["text"].(string), `deltavacuum_serve_schedule_misfires_total{table="b"} 1`) {
		t.Error("the lost fire is not counted")
	}
}

// TestShutdownRefusesNewRuns: after Shutdown, a run is refused with 503, nothing deleted.
func TestShutdownRefusesNewRuns(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	if err := f.srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, _ := f.do(t, "POST", "/api/tables/a/runs", "{}"); code != 503 {
		t.Errorf("got %d, want 503", code)
	}
	if !exists(t, filepath.Join(f.dir, "a", "old.parquet")) {
		t.Error("a file was deleted")
	}
}

// TestOpenAPIMatchesRoutes: every documented path and method has a handler, every handler
// is documented, and each answers something other than 404 or 405 from the router.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	b, err := os.ReadFile("../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var documented, handled []string
	for p, methods := range doc.Paths {
		for m := range methods {
			if m == "parameters" {
				continue
			}
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	for _, r := range apiRoutes() {
		handled = append(handled, r.method+" "+r.pattern)
	}
	sort.Strings(documented)
	sort.Strings(handled)
	if strings.Join(documented, "\n") != strings.Join(handled, "\n") {
		t.Errorf("documented:\n%s\nhandled:\n%s", strings.Join(documented, "\n"), strings.Join(handled, "\n"))
	}
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, dryRunOnly: true}\n", nil, nil)
	for _, r := range apiRoutes() {
		p := strings.ReplaceAll(r.pattern, "{id}", "a")
		code, body := f.do(t, r.method, p, "{}")
		if code == 405 || (code == 404 && body["error"] == nil && body["errorCode"] == nil) { // errorCode: Fabric's shape (fabric.go)
			t.Errorf("%s %s: the router answered %d", r.method, p, code)
		}
	}
}

// TestPolicyModes: the policy's mode decides what is planned. LITE takes its candidates from
// the log alone (old.parquet's tombstone, not the never-committed stray.parquet); FULL lists
// the table; auto runs FULL while no FULL run is recorded, LITE after one.
func TestPolicyModes(t *testing.T) {
	f := newFixture(t, "tables:\n"+
		"  - {id: lite, path: TABLES/lite, policy: {mode: lite}}\n"+
		"  - {id: full, path: TABLES/full, policy: {mode: full}}\n"+
		"  - {id: auto, path: TABLES/auto, policy: {mode: auto, fullEvery: 720h}}\n", nil, nil)
	for id, want := range map[string]struct {
		mode  string
		files float64
	}{"lite": {"LITE", 1}, "full": {"FULL", 2}, "auto": {"FULL", 2}} {
		code, body := f.do(t, "POST", "/api/tables/"+id+"/preview", "{}")
		if code != 200 || body["mode"] != want.mode || body["numFilesToDelete"].(float64) != want.files {
			t.Errorf("preview of %s: %d mode %v files %v, want %s and %v", id, code, body["mode"], body["numFilesToDelete"], want.mode, want.files)
		}
	}
	// After a FULL run of auto, the next is LITE (within fullEvery).
	code, body := f.do(t, "POST", "/api/tables/auto/runs", "{}")
	if code != 202 {
		t.Fatalf("run auto: %d %v", code, body)
	}
	f.srv.Wait()
	if code, run := f.do(t, "GET", "/api/runs/"+body["id"].(string), ""); code != 200 || run["mode"] != "FULL" || run["status"] != "COMPLETED" {
		t.Fatalf("first auto run: %d %v", code, run)
	}
	if code, body := f.do(t, "POST", "/api/tables/auto/preview", "{}"); code != 200 || body["mode"] != "LITE" {
		t.Errorf("auto after a FULL run: %d mode %v, want LITE", code, body["mode"])
	}
}

// Hostile run ids and table ids are unknown ones, never a query, a path or a crash.
func TestHostileIDs(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	for _, id := range []string{"' OR '1'='1", "%27%20OR%201%3D1--", "..%2F..%2Fa", "a%00", strings.Repeat("x", 5000), "%E2%80%AE"} {
		for _, req := range [][2]string{{"GET", "/api/runs/" + id}, {"POST", "/api/runs/" + id + "/cancel"}, {"POST", "/api/runs/" + id + "/undo"}, {"POST", "/api/tables/" + id + "/runs"}, {"GET", "/api/tables/" + id + "/inspect"}} {
			code, body := f.do(t, req[0], req[1], "{}")
			if code != 404 && code != 400 {
				t.Errorf("%s %s: %d %v, want 404 or 400", req[0], req[1], code, body)
			}
		}
	}
	if exists(t, filepath.Join(f.dir, "a", "_deltavacuum")) {
		t.Error("a hostile id started a run")
	}
}

// TestLoopbackHost: on a loopback listener without a token, only a Host that names this
// machine is taken; an empty one, or one of a form no browser sends for a name, is not.
func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:8080": true, "127.8.9.10:1": true, "localhost": true, "LocalHost:80": true,
		"[::1]": true, "[::1]:8080": true, "[::ffff:127.0.0.1]:80": true, "127.0.0.1:": true,
		"": false, ":8080": false, ":": false, "[]": false, "[]:80": false, "[localhost]": false, "[localhost]:80": false,
		"[127.0.0.1]": false, "[127.0.0.1]:80": false, "::1": false, "::1:80": false, "[::1": false, "[::1]x": false,
		"localhost:x": false, "localhost:-1": false, "localhost:99999": false, "localhost:+80": false, "localhost.": false,
		"localhost.evil.example": false, "evil.example": false, "10.0.0.1": false, "0.0.0.0": false, "[::]": false,
		"127.0.0.1.nip.io": false, "127.1": false, "2130706433": false, "localhost\x00": false, "local host": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestEmptyHost: a request with an empty Host, or none (HTTP/1.0), to a service without a
// token on loopback is refused, 421, whatever it asks; nothing runs.
func TestEmptyHost(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	for _, raw := range []string{
		"GET /api/tables HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n",
		"GET /api/tables HTTP/1.0\r\n\r\n",
		"POST /api/tables/a/runs HTTP/1.1\r\nHost: \r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
		"POST /api/tables/a/runs HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
		"GET /runs HTTP/1.1\r\nHost: [localhost]\r\nConnection: close\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: localhost:x\r\nConnection: close\r\n\r\n",
	} {
		c, err := net.Dial("tcp", strings.TrimPrefix(f.http.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		resp.Body.Close()
		c.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("%q: %d, want 421", raw, resp.StatusCode)
		}
	}
	f.srv.Wait()
	if runs, _ := f.db.Runs(t.Context(), "", 10); len(runs) != 0 || !exists(t, filepath.Join(f.dir, "a", "old.parquet")) {
		t.Errorf("a refused request ran: %v", runs)
	}
}

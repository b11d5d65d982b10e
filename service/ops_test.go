package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/session"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/checkpointwriter"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// logTo sends the server's log (through its redactor) to a buffer.
func logTo(f *fixture) *syncBuffer {
	buf := &syncBuffer{}
	f.srv.Log = slog.New(&redactingHandler{h: slog.NewJSONHandler(buf, nil), red: f.srv.Red})
	return buf
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// hookServer is a webhook receiver on 127.0.0.1 that answers the codes given in turn (then
// 200) and keeps the bodies.
type hookServer struct {
	*httptest.Server
	mu     sync.Mutex
	codes  []int
	bodies [][]byte
}

func newHookServer(t *testing.T, codes ...int) *hookServer {
	h := &hookServer{codes: codes}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies = append(h.bodies, b)
		code := 200
		if len(h.codes) > 0 {
			code, h.codes = h.codes[0], h.codes[1:]
		}
		h.mu.Unlock()
		if r.Method != "POST" || r.Header.Get("Content-Type") != "application/json" {
			code = 400
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookServer) posts() [][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.bodies)
}

const failingTable = "tables:\n  - {id: checked, path: TABLES/checked, policy: {retention: 24}}\n  - {id: fine, path: TABLES/fine}\n"

// TestWebhookOnFailure: a failed run is posted (table, run id, error, figures), retried with
// backoff after 5xx answers, and the secret in the URL never reaches the log; a completed
// run is not posted.
func TestWebhookOnFailure(t *testing.T) {
	hs := newHookServer(t, 503, 500)
	url := hs.URL + "/hooks/T0123/s3cr3t-path-token"
	f := newFixture(t, "webhook: {url: '${HOOK_URL}'}\n"+failingTable, map[string]string{"HOOK_URL": url}, nil)
	logs := logTo(f)
	var sleeps []time.Duration
	var mu sync.Mutex
	f.srv.hook.sleep = func(_ context.Context, d time.Duration) error {
		mu.Lock()
		sleeps = append(sleeps, d)
		mu.Unlock()
		return nil
	}
	f.do(t, "POST", "/api/tables/fine/runs", "{}")
	f.srv.Wait()
	f.srv.waitWebhooks()
	if n := len(hs.posts()); n != 0 {
		t.Fatalf("a completed run was posted (%d posts)", n)
	}
	_, body := f.do(t, "POST", "/api/tables/checked/runs", "{}")
	id := body["id"].(string)
	f.srv.Wait()
	f.srv.waitWebhooks()
	posts := hs.posts()
	if len(posts) != 3 {
		t.Fatalf("got %d posts, want 3 (two 5xx, then 200)", len(posts))
	}
	if !slices.Equal(sleeps, []time.Duration{time.Second, 2 * time.Second}) {
		t.Errorf("backoff %v, want [1s 2s]", sleeps)
	}
	var ev FailedRunEvent
	if err := json.Unmarshal(posts[2], &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Event != "run.failed" || ev.Table != "checked" || ev.Run.ID != id || ev.Run.Status != "FAILED" ||
		!strings.Contains(ev.Run.Error, "retention") || ev.Run.Figures.Mode == "" {
		t.Errorf("got %+v", ev)
	}
	if strings.Contains(logs.String(), "s3cr3t-path-token") {
		t.Errorf("the webhook URL's secret is in the log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "webhook delivered") {
		t.Errorf("no delivery logged:\n%s", logs.String())
	}
}

// A webhook that refuses (4xx) is not retried; one that cannot be reached gives up after its
// attempts: neither holds up nor changes the run, which is FAILED for its own reason.
func TestWebhookUnreachable(t *testing.T) {
	t.Run("4xx", func(t *testing.T) {
		hs := newHookServer(t, 404)
		f := newFixture(t, "webhook: {url: '${HOOK_URL}'}\n"+failingTable, map[string]string{"HOOK_URL": hs.URL}, nil)
		f.srv.hook.sleep = func(context.Context, time.Duration) error { return nil }
		f.do(t, "POST", "/api/tables/checked/runs", "{}")
		f.srv.Wait()
		f.srv.waitWebhooks()
		if n := len(hs.posts()); n != 1 {
			t.Errorf("%d posts, want 1 (a 404 is not retried)", n)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // nothing listens there now
		f := newFixture(t, "webhook: {url: '${HOOK_URL}'}\n"+failingTable, map[string]string{"HOOK_URL": "http://" + addr + "/x"}, nil)
		logs := logTo(f)
		attempts := 0
		f.srv.hook.sleep = func(context.Context, time.Duration) error { attempts++; return nil }
		_, body := f.do(t, "POST", "/api/tables/checked/runs", "{}")
		f.srv.Wait()
		_, run := f.do(t, "GET", "/api/runs/"+body["id"].(string), "")
		if run["status"] != "FAILED" || !strings.Contains(run["error"].(string), "retention") {
			t.Errorf("run %v, want FAILED for its retention", run)
		}
		f.srv.waitWebhooks()
		if attempts != 3 || !strings.Contains(logs.String(), "webhook not delivered") {
			t.Errorf("%d backoffs (want 3); log:\n%s", attempts, logs.String())
		}
		_, m := f.do(t, "GET", "/metrics", "")
		if !strings.Contains(m["text"].(string), "deltavacuum_serve_webhook_failures_total 1") {
			t.Error("the undelivered webhook is not counted")
		}
	})
}

// TestTrashPurgeAfterUndoWindow: a trashed run's files stay in the trash (and the run can be
// undone) inside the undo window, and are deleted for good by the service once the run is
// older than the window.
func TestTrashPurgeAfterUndoWindow(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, undoWindow: 168h}}\n"+
		"  - {id: keep, path: TABLES/keep, policy: {trash: true}}\n", nil, nil)
	ctx := context.Background()
	var recs []string
	for _, id := range []string{"a", "keep"} {
		_, body := f.do(t, "POST", "/api/tables/"+id+"/runs", "{}")
		f.srv.Wait()
		_, run := f.do(t, "GET", "/api/runs/"+body["id"].(string), "")
		if run["status"] != "COMPLETED" {
			t.Fatalf("run of %s: %v", id, run)
		}
		recs = append(recs, run["recordId"].(string))
	}
	trashOf := func(table, rec string) string {
		return filepath.Join(f.dir, table, "_deltavacuum", "trash", rec, "old.parquet")
	}
	if !exists(t, trashOf("a", recs[0])) {
		t.Fatal("the trashed file is not in the trash")
	}
	f.clock.set(t0.Add(167 * time.Hour))
	f.srv.Tick(ctx)
	if !exists(t, trashOf("a", recs[0])) {
		t.Fatal("the trash was purged inside the undo window")
	}
	f.clock.set(t0.Add(169 * time.Hour))
	f.srv.Tick(ctx)
	if exists(t, trashOf("a", recs[0])) {
		t.Error("the trash of a run older than the undo window was not purged")
	}
	if !exists(t, trashOf("keep", recs[1])) {
		t.Error("the trash of a table without undoWindow was purged")
	}
	if !exists(t, filepath.Join(f.dir, "a", "live.parquet")) {
		t.Error("a live file is gone")
	}
	_, m := f.do(t, "GET", "/metrics", "")
	if !strings.Contains(m["text"].(string), `deltavacuum_serve_trash_purged_files_total{table="a"} 2`) {
		t.Errorf("purge not counted:\n%s", m["text"])
	}
}

// holdTable takes the lock of the table in dir as another process's run would: its ticket
// dated started, its last heartbeat at beat (none when zero). It returns the run's id.
func holdTable(t *testing.T, dir string, started, beat time.Time) string {
	t.Helper()
	ctx := context.Background()
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	clock := started
	ticks := make(chan time.Time)
	id := run.NewID(started)
	l, err := run.Acquire(ctx, store, run.LockOptions{Purpose: run.PurposeVacuum, Run: id,
		Now:   func() time.Time { mu.Lock(); defer mu.Unlock(); return clock },
		Ticks: func() (<-chan time.Time, func()) { return ticks, func() {} }})
	if err != nil {
		t.Fatal(err)
	}
	if !beat.IsZero() {
		mu.Lock()
		clock = beat
		mu.Unlock()
		ticks <- time.Now()
		ticks <- time.Now() // taken once the beat before it is written
	}
	t.Cleanup(func() { l.Release(ctx) })
	return id
}

// TestStaleLock: another process's lock ticket holds the table while its heartbeat is younger
// than staleRunAfter (a recent heartbeat keeps an old run live); once older, it no longer holds
// the table: the run takes it over, and the log names the interrupted run and what to do.
func TestStaleLock(t *testing.T) {
	cases := []struct {
		name          string
		started, beat time.Duration // before t0
		blocks        bool
	}{
		{"fresh heartbeat", time.Hour, 2 * time.Minute, true},
		{"heartbeat just inside", time.Hour, 9*time.Minute + 59*time.Second, true},
		{"no heartbeat and started recently", 5 * time.Minute, -1, true},
		{"heartbeat past the limit", time.Hour, 10 * time.Minute, false},
		{"no heartbeat and started long ago", 3 * time.Hour, -1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "staleRunAfter: 10m\ntables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
			logs := logTo(f)
			var beat time.Time
			if tc.beat >= 0 {
				beat = t0.Add(-tc.beat)
			}
			rec := holdTable(t, filepath.Join(f.dir, "a"), t0.Add(-tc.started), beat)
			code, body := f.do(t, "POST", "/api/tables/a/runs", "{}")
			f.srv.Wait()
			if tc.blocks {
				if code != 409 || !strings.Contains(body["error"].(string), rec) {
					t.Fatalf("got %d %v, want 409 naming run %s", code, body, rec)
				}
				if !exists(t, filepath.Join(f.dir, "a", "old.parquet")) {
					t.Error("a file was deleted while another run is live")
				}
				return
			}
			if code != 202 {
				t.Fatalf("got %d %v, want the run to start past a stale ticket", code, body)
			}
			_, got := f.do(t, "GET", "/api/runs/"+body["id"].(string), "")
			if got["status"] != "COMPLETED" {
				t.Errorf("run %v", got)
			}
			l := logs.String()
			// Its run wrote no record: it stopped before its first delete (issue 36: no undo
			// is offered for what nothing deleted).
			if !strings.Contains(l, "taken over") || !strings.Contains(l, rec) || !strings.Contains(l, "it deleted nothing") {
				t.Errorf("the interrupted run is not reported with what to do:\n%s", l)
			}
		})
	}
}

// openTickets returns the open lock tickets of the table in dir.
func openTickets(t *testing.T, dir string) []run.Unlocked {
	t.Helper()
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := run.Unlock(context.Background(), store, run.UnlockOptions{DryRun: true, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Tickets
}

// TestLiveRunBlocksOthers: while a run of the service is in progress (held in its deletes),
// it holds the table's lock and another process's run (the CLI's Session.Vacuum) is refused,
// naming it; once it ends, its ticket is released and the CLI runs.
func TestLiveRunBlocksOthers(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	a := filepath.Join(f.dir, "a")
	manyStray(t, a, 10)
	g := gate(t, f)
	_, body := f.do(t, "POST", "/api/tables/a/runs", "{}")
	<-g.entered
	runs, err := run.ListRecords(context.Background(), g.Store)
	if err != nil || len(runs) != 1 || runs[0].Status != run.StatusRunning {
		t.Fatalf("records %v %v", runs, err)
	}
	if tk := openTickets(t, a); len(tk) != 1 || tk[0].Ticket.Run != runs[0].ID || tk[0].State != run.StateLive {
		t.Errorf("a run in progress holds %+v, want one live ticket of run %s", tk, runs[0].ID)
	}
	other, err := deltavacuum.Open(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := session.NewSession(session.Config{})
	_, err = sess.Vacuum(context.Background(), other, session.VacuumRequest{})
	if !errors.Is(err, run.ErrLocked) || !strings.Contains(err.Error(), runs[0].ID) {
		t.Errorf("a second run during a live one: %v", err)
	}
	// A DRY RUN is not refused: it deletes nothing.
	if _, err := sess.Vacuum(context.Background(), other, session.VacuumRequest{Request: deltavacuum.VacuumOptions{DryRun: true}}); err != nil {
		t.Errorf("dry run: %v", err)
	}
	close(g.release)
	f.srv.Wait()
	_, got := f.do(t, "GET", "/api/runs/"+body["id"].(string), "")
	if got["status"] != "COMPLETED" {
		t.Fatalf("run %v", got)
	}
	if tk := openTickets(t, a); len(tk) != 0 {
		t.Errorf("the ticket of an ended run is still open: %+v", tk)
	}
	if _, err := sess.Vacuum(context.Background(), other, session.VacuumRequest{}); err != nil {
		t.Errorf("a run after the live one ended: %v", err)
	}
}

// TestLiteFallsBackToFull: a table whose log starts after version 0 (commits cleaned up
// behind a checkpoint) with no recorded VACUUM cannot be served by LITE; mode lite (and the
// preview) run FULL instead, and the run is recorded FULL, deleting what FULL finds.
func TestLiteFallsBackToFull(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {mode: lite}}\n", nil, nil)
	a := filepath.Join(f.dir, "a")
	store, _ := local.New(a)
	ctx := context.Background()
	old := t0.Add(-10 * 24 * time.Hour)
	if err := deltalog.WriteCommit(ctx, store, 1, []any{map[string]any{"add": map[string]any{"path": "live2.parquet", "size": 4, "modificationTime": old.UnixMilli(), "dataChange": true}}}); err != nil {
		t.Fatal(err)
	}
	ts := old.UnixMilli()
	acts := []*deltalog.Action{
		{Protocol: &deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &deltalog.Metadata{ID: "t", Format: deltalog.Format{Provider: "parquet", Options: map[string]string{}},
			SchemaString: `{"type":"struct","fields":[]}`, PartitionColumns: []string{}, Configuration: map[string]string{}}},
		{Add: &deltalog.Add{Path: "live.parquet", Size: 4, ModificationTime: ts, DataChange: true}},
		{Add: &deltalog.Add{Path: "live2.parquet", Size: 4, ModificationTime: ts, DataChange: true}},
		{Remove: &deltalog.Remove{Path: "old.parquet", DeletionTimestamp: &ts, DataChange: true}},
	}
	var buf bytes.Buffer
	if err := checkpointwriter.Write(&buf, slices.Values(acts)); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(a, "_delta_log")
	if err := os.WriteFile(filepath.Join(logDir, "00000000000000000001.checkpoint.parquet"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logDir, "_last_checkpoint"), []byte(`{"version":1,"size":5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(logDir, "00000000000000000000.json")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(a, "live2.parquet"), []byte("data"), 0o644)
	for _, p := range []string{"live2.parquet", "_delta_log/00000000000000000001.json", "_delta_log/00000000000000000001.checkpoint.parquet"} {
		if err := os.Chtimes(filepath.Join(a, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	// LITE alone refuses: the premise of the test.
	dt, err := deltavacuum.Open(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.srv.tables.All()[0].Session.Vacuum(ctx, dt, session.VacuumRequest{Request: deltavacuum.VacuumOptions{Options: vacuum.Options{Mode: vacuum.ModeLite}, DryRun: true}}); !errors.Is(err, vacuum.ErrCannotVacuumLite) {
		t.Fatalf("LITE on the table: %v, want DELTA_CANNOT_VACUUM_LITE", err)
	}
	code, body := f.do(t, "POST", "/api/tables/a/preview", "{}")
	if code != 200 || body["mode"] != "FULL" || body["numFilesToDelete"].(float64) != 2 {
		t.Errorf("preview: %d mode %v files %v, want FULL and 2", code, body["mode"], body["numFilesToDelete"])
	}
	_, body = f.do(t, "POST", "/api/tables/a/runs", "{}")
	f.srv.Wait()
	_, run := f.do(t, "GET", "/api/runs/"+body["id"].(string), "")
	figs, _ := run["figures"].(map[string]any)
	if run["status"] != "COMPLETED" || figs["mode"] != "FULL" || figs["numDeletedFiles"].(float64) != 2 {
		t.Errorf("run %v, want COMPLETED, figures mode FULL with 2 deleted", run)
	}
	if exists(t, filepath.Join(a, "stray.parquet")) || exists(t, filepath.Join(a, "old.parquet")) || !exists(t, filepath.Join(a, "live2.parquet")) {
		t.Error("the FULL run did not delete what FULL finds, or deleted a live file")
	}
}

// New refuses an operations setting it cannot resolve: a webhook URL variable unset or holding
// a refused URL (never echoed), a discover root's storage option unset.
func TestNewRefusesOps(t *testing.T) {
	dir := t.TempDir()
	db, err := state.Open(context.Background(), filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct{ name, yaml, hook, want string }{
		{"webhook unset", "webhook: {url: '${HOOK}'}\ntables: [{id: a, path: /a}]\n", "", "HOOK"},
		{"webhook ftp", "webhook: {url: '${HOOK}'}\ntables: [{id: a, path: /a}]\n", "ftp://h/s3cr3t", "scheme"},
		{"webhook http to a public host", "webhook: {url: '${HOOK}'}\ntables: [{id: a, path: /a}]\n", "http://example.com/s3cr3t", "loopback"},
		{"discover option unset", "discover: [{id: l, root: 's3://b/w', refresh: 1h, storageOptions: {aws_region: '${NOPE}'}}]\n", "", "NOPE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte("dataDir: /s\n"+tc.yaml), "m.yaml", "")
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"HOOK": tc.hook}
			_, err = New(Options{Config: cfg, State: db, Getenv: func(k string) string { return env[k] }})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("got %v, want a refusal with %q that does not echo the URL", err, tc.want)
			}
		})
	}
}

package service

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
)

// inspectionsOfTable are the points GET /api/tables/{id}/inspections returns (the chart's).
func (f *fixture) inspectionsOfTable(t *testing.T, id string) []map[string]any {
	t.Helper()
	code, body := f.do(t, "GET", "/api/tables/"+id+"/inspections", "")
	if code != 200 {
		t.Fatalf("inspections of %s: %d %v", id, code, body)
	}
	var out []map[string]any
	for _, p := range body["inspections"].([]any) {
		out = append(out, p.(map[string]any))
	}
	return out
}

// TestInspectAfterRun: a run that ends COMPLETED and one that ends FAILED are each followed
// by an inspection at the policy's retention, taken after the run's commits: the chart gains
// a point and the reclaimable bytes fall to what the run left.
func TestInspectAfterRun(t *testing.T) {
	f := newFixture(t, `tables:
  - {id: a, path: TABLES/a, policy: {inspectEvery: off}}
  - {id: checked, path: TABLES/checked, policy: {retention: 24, inspectEvery: off}}
`, nil, nil)
	if pts := f.inspectionsOfTable(t, "a"); len(pts) != 0 {
		t.Fatalf("inspections before any run: %v", pts)
	}
	code, body := f.do(t, "POST", "/api/tables/a/runs", "{}")
	if code != 202 {
		t.Fatalf("run: %d %v", code, body)
	}
	f.srv.Wait()
	pts := f.inspectionsOfTable(t, "a")
	if len(pts) != 1 {
		t.Fatalf("inspections after a COMPLETED run: %v, want 1", pts)
	}
	// The run committed VACUUM START (1) and END (2); it deleted old.parquet and stray.parquet.
	if p := pts[0]; p["version"].(float64) != 2 || p["reclaimableBytes"].(float64) != 0 || p["liveBytes"].(float64) != 4 {
		t.Errorf("inspection after the run: %v, want version 2, nothing reclaimable, 4 live bytes", p)
	}
	_, m := f.do(t, "GET", "/metrics", "")
	if want := `deltavacuum_serve_reclaimable_bytes{table="a"} 0`; !strings.Contains(m["text"].(string), want) {
		t.Errorf("metrics lack %s", want)
	}

	// The retention check refuses 24 h: the run ends FAILED, deleting nothing; the figures
	// still move (here: both files stay reclaimable at 24 h).
	f.clock.set(t0.Add(time.Minute))
	_, body = f.do(t, "POST", "/api/tables/checked/runs", "{}")
	f.srv.Wait()
	if _, run := f.do(t, "GET", "/api/runs/"+body["id"].(string), ""); run["status"] != "FAILED" {
		t.Fatalf("run of checked: %v, want FAILED", run)
	}
	pts = f.inspectionsOfTable(t, "checked")
	if len(pts) != 1 || pts[0]["reclaimableBytes"].(float64) != 8 || pts[0]["retentionHours"].(float64) != 24 {
		t.Errorf("inspection after a FAILED run: %v, want one with 8 reclaimable bytes at 24 h", pts)
	}
	if n := len(f.inspectionsOfTable(t, "a")); n != 1 {
		t.Errorf("the run of checked inspected a too: %d points", n)
	}
}

// TestPeriodicInspection: on an injected clock, Tick inspects each table whose inspectEvery
// has passed since its last inspection, never one whose policy says off, never one a run or
// undo holds, never one already being inspected, at most maxPeriodicInspections at once, and
// nothing once shutting down.
func TestPeriodicInspection(t *testing.T) {
	f := newFixture(t, `tables:
  - {id: a, path: TABLES/a}
  - {id: never, path: TABLES/never, policy: {inspectEvery: off}}
  - {id: often, path: TABLES/often, policy: {inspectEvery: 6h}}
`, nil, nil)
	ctx := context.Background()
	count := func(id string) int { return len(f.inspectionsOfTable(t, id)) }
	tick := func(at time.Duration) {
		f.clock.set(t0.Add(at))
		f.srv.Tick(ctx)
		f.srv.Wait()
	}
	check := func(when string, want map[string]int) {
		t.Helper()
		for id, n := range want {
			if got := count(id); got != n {
				t.Errorf("%s: %s has %d inspections, want %d", when, id, got, n)
			}
		}
	}
	_, tables := f.do(t, "GET", "/api/tables", "")
	every := map[string]any{}
	for _, ti := range tables["tables"].([]any) {
		ti := ti.(map[string]any)
		every[ti["id"].(string)] = ti["policy"].(map[string]any)["inspectEvery"]
	}
	if every["a"] != "24h0m0s" || every["never"] != "off" || every["often"] != "6h0m0s" {
		t.Errorf("inspectEvery as listed: %v", every)
	}
	if _, page := f.do(t, "GET", "/tables/often", ""); !strings.Contains(page["text"].(string), "every 6 h") {
		t.Error("the table page does not say how often it is inspected")
	}
	tick(0) // none kept yet: due at once
	check("first tick", map[string]int{"a": 1, "never": 0, "often": 1})
	tick(time.Minute)
	check("a minute later", map[string]int{"a": 1, "never": 0, "often": 1})
	tick(6*time.Hour - time.Second)
	check("just before 6h", map[string]int{"a": 1, "often": 1})
	tick(6 * time.Hour)
	check("at 6h", map[string]int{"a": 1, "never": 0, "often": 2})
	tick(24 * time.Hour)
	check("at 24h", map[string]int{"a": 2, "never": 0, "often": 3})

	// A table a run or undo holds is skipped, and inspected once it is free.
	if !f.srv.runner.hold("a", "undo of test") {
		t.Fatal("could not hold a")
	}
	tick(48 * time.Hour)
	check("a held", map[string]int{"a": 2, "often": 4})
	f.srv.runner.release("a")
	tick(48*time.Hour + time.Minute)
	check("a released", map[string]int{"a": 3, "often": 4})

	// A restarted service reads the last inspection from the state database: nothing is due.
	g, err := New(Options{Config: f.srv.tables.cfg, State: f.db, Now: f.clock.now, Getenv: func(string) string { return "" }, Logger: f.srv.log})
	if err != nil {
		t.Fatal(err)
	}
	g.Tick(ctx)
	g.Wait()
	check("after a restart", map[string]int{"a": 3, "often": 4})
	g.Shutdown(ctx)

	// Inspections that have not finished: neither a second of one table nor a third at once.
	gate := make(chan struct{})
	f.srv.tables.openHook = func(ctx context.Context, tb *table) (*deltavacuum.Table, error) {
		<-gate
		return tb.open(ctx)
	}
	inProgress := func() (int, map[string]string) {
		f.srv.runner.mu.Lock()
		defer f.srv.runner.mu.Unlock()
		cp := map[string]string{}
		for k, v := range f.srv.runner.upkeep.inspecting {
			cp[k] = v
		}
		return f.srv.runner.upkeep.periodic, cp
	}
	f.srv.tables.cfg.Tables[1].Policy.InspectEvery = 6 * time.Hour // never, now due too: three due
	f.clock.set(t0.Add(100 * time.Hour))
	f.srv.Tick(ctx)
	f.srv.Tick(ctx)
	if n, ins := inProgress(); n != maxPeriodicInspections || len(ins) != maxPeriodicInspections {
		t.Errorf("in progress: %d %v, want %d", n, ins, maxPeriodicInspections)
	}
	close(gate)
	f.srv.Wait()
	if n, ins := inProgress(); n != 0 || len(ins) != 0 {
		t.Errorf("in progress after the wait: %d %v", n, ins)
	}
	f.srv.Tick(ctx)
	f.srv.Wait()
	check("the third, at the next tick", map[string]int{"a": 4, "never": 1, "often": 5})

	// Shutting down: no inspection starts, periodic or after a run.
	f.srv.Shutdown(ctx)
	f.clock.set(t0.Add(200 * time.Hour))
	f.srv.Tick(ctx)
	f.srv.Wait()
	a, _ := f.srv.tables.lookup("a")
	if f.srv.runner.inspectLater(a, "after run x", false) {
		t.Error("an inspection started after Shutdown")
	}
	check("after shutdown", map[string]int{"a": 4, "never": 1, "often": 5})
}

// TestPeriodicInspectionFailing: an inspection that fails is logged, not fatal, and tried
// again inspectRetryAfter later, not at every tick; once it succeeds the table is back on its
// inspectEvery.
func TestPeriodicInspectionFailing(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	ctx := context.Background()
	var opens atomic.Int32
	broken := true
	f.srv.tables.openHook = func(ctx context.Context, tb *table) (*deltavacuum.Table, error) {
		opens.Add(1)
		if broken {
			return nil, errors.New("table a: the store is unreachable")
		}
		return tb.open(ctx)
	}
	tick := func(at time.Duration) {
		f.clock.set(t0.Add(at))
		f.srv.Tick(ctx)
		f.srv.Wait()
	}
	tick(0)
	tick(15 * time.Second)
	tick(inspectRetryAfter - time.Second)
	if n := opens.Load(); n != 1 {
		t.Errorf("a failing inspection was tried %d times within %s, want 1", n, inspectRetryAfter)
	}
	broken = false
	tick(inspectRetryAfter)
	if n, pts := opens.Load(), f.inspectionsOfTable(t, "a"); n != 2 || len(pts) != 1 {
		t.Errorf("retry: %d opens, %d inspections, want 2 and 1", n, len(pts))
	}
	tick(inspectRetryAfter + time.Hour)
	tick(inspectRetryAfter + 24*time.Hour - time.Second)
	if n := opens.Load(); n != 2 {
		t.Errorf("inspected again before inspectEvery: %d opens", n)
	}
	tick(inspectRetryAfter + 24*time.Hour)
	if n := len(f.inspectionsOfTable(t, "a")); n != 2 {
		t.Errorf("after inspectEvery: %d inspections, want 2", n)
	}
}

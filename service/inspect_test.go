package service

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/service/runner"
	"github.com/deltavacuum/deltavacuum/service/tables"
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

// TestInspectEveryShown: the tables list and the table's page say how often the service
// inspects a table on its own (the runner's TestPeriodicInspection runs them).
func TestInspectEveryShown(t *testing.T) {
	f := newFixture(t, `tables:
  - {id: a, path: TABLES/a}
  - {id: never, path: TABLES/never, policy: {inspectEvery: off}}
  - {id: often, path: TABLES/often, policy: {inspectEvery: 6h}}
`, nil, nil)
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
}

// TestPeriodicInspectionFailing: an inspection that fails is logged, not fatal, and tried
// again runner.InspectRetryAfter later, not at every tick; once it succeeds the table is back on its
// inspectEvery.
func TestPeriodicInspectionFailing(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	ctx := context.Background()
	var opens atomic.Int32
	broken := true
	f.srv.tables.SetOpenHook(func(ctx context.Context, tb *tables.Table) (*deltavacuum.Table, error) {
		opens.Add(1)
		if broken {
			return nil, errors.New("table a: the store is unreachable")
		}
		return tb.Open(ctx)
	})
	tick := func(at time.Duration) {
		f.clock.set(t0.Add(at))
		f.srv.Tick(ctx)
		f.srv.Wait()
	}
	tick(0)
	tick(15 * time.Second)
	tick(runner.InspectRetryAfter - time.Second)
	if n := opens.Load(); n != 1 {
		t.Errorf("a failing inspection was tried %d times within %s, want 1", n, runner.InspectRetryAfter)
	}
	broken = false
	tick(runner.InspectRetryAfter)
	if n, pts := opens.Load(), f.inspectionsOfTable(t, "a"); n != 2 || len(pts) != 1 {
		t.Errorf("retry: %d opens, %d inspections, want 2 and 1", n, len(pts))
	}
	tick(runner.InspectRetryAfter + time.Hour)
	tick(runner.InspectRetryAfter + 24*time.Hour - time.Second)
	if n := opens.Load(); n != 2 {
		t.Errorf("inspected again before inspectEvery: %d opens", n)
	}
	tick(runner.InspectRetryAfter + 24*time.Hour)
	if n := len(f.inspectionsOfTable(t, "a")); n != 2 {
		t.Errorf("after inspectEvery: %d inspections, want 2", n)
	}
}

package service

import (
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/service/runner"

	"github.com/deltavacuum/deltavacuum/run"
)

// TestRunsAcrossTables: GET /api/runs lists the runs of every table, newest first, each with
// its state and what an undo can do, a page at a time with the count of all; ?table= keeps
// one table's; the runs page shows the same, with the table, start, duration, files, bytes
// and undo columns.
func TestRunsAcrossTables(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n  - {id: b, path: TABLES/b, policy: {inspectEvery: off}}\n", nil, nil)
	ra := startRun(t, f, "a")
	f.clock.set(t0.Add(5 * time.Second))
	rb := startRun(t, f, "b")
	f.clock.set(t0.Add(10 * time.Second))
	if code, body := f.do(t, "POST", "/api/runs/"+ra+"/undo", "{}"); code != 200 {
		t.Fatalf("undo: %d %v", code, body)
	}
	f.srv.Wait()
	f.clock.set(t0.Add(15 * time.Second))
	ra2 := startRun(t, f, "a") // deletes the files the undo brought back

	code, body := f.do(t, "GET", "/api/runs", "")
	if code != 200 || body["total"].(float64) != 3 {
		t.Fatalf("GET /api/runs: %d %v", code, body)
	}
	items := body["items"].([]any)
	want := []struct{ id, table, state, undo string }{
		{ra2, "a", run.StateCompleted, runner.OfferPossible},
		{rb, "b", run.StateCompleted, runner.OfferNothingKept},
		{ra, "a", run.StateUndone, runner.OfferUndone},
	}
	for i, w := range want {
		it := items[i].(map[string]any)
		if _, reason := offer(it); it["id"] != w.id || it["table"] != w.table || it["state"] != w.state || reason != w.undo {
			t.Errorf("run %d: %v, want %+v", i, it, w)
		}
	}
	_, body = f.do(t, "GET", "/api/runs?limit=1&offset=1", "")
	if items := body["items"].([]any); body["total"].(float64) != 3 || len(items) != 1 || items[0].(map[string]any)["id"] != rb {
		t.Errorf("the second page of one: %v", body)
	}
	_, body = f.do(t, "GET", "/api/runs?table=a", "")
	if body["total"].(float64) != 2 {
		t.Errorf("the runs of a: %v", body)
	}
	_, body = f.do(t, "GET", "/api/runs?table=nope", "")
	if body["total"].(float64) != 0 || len(body["items"].([]any)) != 0 {
		t.Errorf("the runs of no table: %v", body)
	}
	for _, p := range []string{"/api/runs?limit=0", "/api/runs?limit=1001", "/api/runs?offset=-1", "/api/runs?table=a&table=b", "/runs?page=0", "/runs?page=2", "/runs?page=x"} {
		if code, body := f.do(t, "GET", p, ""); code != 400 {
			t.Errorf("GET %s: %d %v, want 400", p, code, body)
		}
	}

	_, page := f.do(t, "GET", "/runs", "")
	html := page["text"].(string)
	for _, s := range []string{`data-run="` + ra2 + `"`, `data-run="` + rb + `"`, `data-state="undone"`, `<a href="/tables/b">b</a>`,
		"Runs 1–3 of 3", "moved to the trash", "cannot be undone", "can be undone (trash)", "<th>Duration</th>", "<th>Undo</th>"} {
		if !strings.Contains(html, s) {
			t.Errorf("the runs page lacks %q", s)
		}
	}
	_, page = f.do(t, "GET", "/runs?table=b", "")
	if html := page["text"].(string); strings.Contains(html, ra) || !strings.Contains(html, rb) || !strings.Contains(html, "Runs of table b") {
		t.Errorf("the runs page of b:\n%s", html)
	}
}

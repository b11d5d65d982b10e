package service

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/service/runner"
)

// TestPreviewRetentionHostile: the one-off retentionHours of a preview refuses, with a 400
// naming it, what is not a number of hours from 0 to 100 years, and anything below a
// retention the table sets itself (the floor a policy never goes below either); below the
// table's default retention the library's safety check refuses it as it refuses the CLI's
// --retain-hours, unless the policy turned the check off. Nothing is ever deleted, nothing
// answers 500.
func TestPreviewRetentionHostile(t *testing.T) {
	f := newFixture(t, `tables:
  - {id: a, path: TABLES/a}
  - {id: floor, path: TABLES/floor, policy: {retentionCheck: disabled}}
  - {id: unchecked, path: TABLES/unchecked, policy: {retentionCheck: disabled}}
`, nil, map[string]map[string]string{"floor": {deltalog.PropDeletedFileRetention: "interval 200 hours"}})
	for _, c := range []struct{ table, body, want string }{
		{"a", `{"retentionHours": "24"}`, "retentionHours"},
		{"a", `{"retentionHours": "NaN"}`, "retentionHours"},
		{"a", `{"retentionHours": NaN}`, ""},
		{"a", `{"retentionHours": Infinity}`, ""},
		{"a", `{"retentionHours": -1}`, "from 0 to"},
		{"a", `{"retentionHours": -0.0001}`, "from 0 to"},
		{"a", `{"retentionHours": 1e999}`, "retentionHours"},
		{"a", `{"retentionHours": 1e308}`, "from 0 to"},
		{"a", `{"retentionHours": 878401}`, "from 0 to"},
		{"a", `{"retentionHours": true}`, "retentionHours"},
		{"a", `{"retentionHours": [24]}`, "retentionHours"},
		{"a", `{"retentionHours": {"h": 24}}`, "retentionHours"},
		{"a", `{"retentionHours": 24, "retentionHours": 48}`, "retentionHours"},
		{"a", `{"RetentionHours": 24}`, "RetentionHours"},
		{"a", `{"retentionHours": 24}`, "refusing to vacuum with a retention of 24 hours"}, // the library's safety check
		{"a", `{"retentionHours": 167.4}`, "refusing to vacuum"},                           // rounded as the library rounds: 167
		{"floor", `{"retentionHours": 199}`, "below the table's own retention of 200 hours"},
		{"floor", `{"retentionHours": 0}`, "below the table's own retention"},
	} {
		code, body := f.do(t, "POST", "/api/tables/"+c.table+"/preview", c.body)
		msg, _ := body["error"].(string)
		if code != 400 || !strings.Contains(msg, c.want) {
			t.Errorf("preview of %s with %s: %d %v, want 400 saying %q", c.table, c.body, code, body, c.want)
		}
	}
	for _, id := range []string{"a", "floor", "unchecked"} {
		for _, p := range []string{"old.parquet", "stray.parquet", "live.parquet"} {
			if !exists(t, filepath.Join(f.dir, id, p)) {
				t.Errorf("%s/%s was deleted", id, p)
			}
		}
	}
	// What the floor and the check let through.
	for _, c := range []struct {
		table, body string
		hours       float64
		files       float64
	}{
		{"a", `{"retentionHours": 167.5}`, 168, 2}, // rounded half up, as the library does
		{"a", `{"retentionHours": 300}`, 300, 0},   // the files are 240 hours old
		{"floor", `{"retentionHours": 200}`, 200, 2},
		{"unchecked", `{"retentionHours": 0}`, 0, 2},
		{"a", `{"retentionHours": null}`, 168, 2}, // none given: the policy's
		{"a", `{}`, 168, 2},
	} {
		code, body := f.do(t, "POST", "/api/tables/"+c.table+"/preview", c.body)
		if code != 200 || body["retentionHours"].(float64) != c.hours || body["numFilesToDelete"].(float64) != c.files {
			t.Errorf("preview of %s with %s: %d %v, want %v hours, %v files", c.table, c.body, code, body, c.hours, c.files)
		}
		if oneOff := c.body != `{}` && !strings.Contains(c.body, "null"); body["oneOffRetention"] != oneOff {
			t.Errorf("preview of %s with %s: oneOffRetention %v", c.table, c.body, body["oneOffRetention"])
		}
	}
	// The run refuses a retention of its own: it runs a preview's plan, at the preview's.
	if code, body := f.do(t, "POST", "/api/tables/a/runs", `{"retentionHours": 24}`); code != 400 {
		t.Errorf("a run with retentionHours: %d %v, want 400", code, body)
	}
}

// TestPreviewRetentionRun: the run of a preview's plan made at a one-off retention is made at
// that retention (the plan is the preview's, digest and all) and says so; a run without it
// is the policy's.
func TestPreviewRetentionRun(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {inspectEvery: off}}\n", nil, nil)
	a := filepath.Join(f.dir, "a")
	code, body := f.do(t, "POST", "/api/tables/a/preview", `{"retentionHours": 300}`)
	if code != 200 || body["numFilesToDelete"].(float64) != 0 {
		t.Fatalf("preview at 300 h: %d %v", code, body)
	}
	plan := body["planDigest"].(string)
	_, page := f.do(t, "GET", "/tables/a/previews/"+plan, "")
	if html := page["text"].(string); !strings.Contains(html, `id="oneoff"`) || !strings.Contains(html, "300 h") {
		t.Errorf("the preview page does not say its retention is one-off:\n%s", html)
	}
	run := runPlan(t, f, plan)
	figs := run["figures"].(map[string]any)
	if run["status"] != "COMPLETED" || figs["retentionHours"].(float64) != 300 || figs["oneOffRetention"] != true || figs["oneOffFrom"] != runner.OneOffPreview || figs["numDeletedFiles"].(float64) != 0 {
		t.Fatalf("the run of the preview at 300 h: %v", run)
	}
	if !exists(t, filepath.Join(a, "old.parquet")) || !exists(t, filepath.Join(a, "stray.parquet")) {
		t.Fatal("the run at 300 h deleted files only the policy's 168 h deletes")
	}
	_, page = f.do(t, "GET", "/runs/"+run["id"].(string), "")
	if html := page["text"].(string); !strings.Contains(html, `id="run-oneoff"`) {
		t.Errorf("the run page does not say the retention was one-off:\n%s", html)
	}
	f.clock.set(t0.Add(60 * 1e9))
	plan, _ = previewDigest(t, f, "a")
	run = runPlan(t, f, plan)
	if figs := run["figures"].(map[string]any); figs["retentionHours"].(float64) != 168 || figs["oneOffRetention"] != nil || figs["oneOffFrom"] != nil || figs["numDeletedFiles"].(float64) != 2 {
		t.Errorf("the policy's run: %v", run)
	}
}

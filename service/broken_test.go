package service

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/runner"
)

// tableInfo is table id as GET /api/tables lists it.
func tableInfo(t *testing.T, f *fixture, id string) map[string]any {
	t.Helper()
	_, body := f.do(t, "GET", "/api/tables", "")
	for _, x := range body["tables"].([]any) {
		if in := x.(map[string]any); in["id"] == id {
			return in
		}
	}
	t.Fatalf("no table %s", id)
	return nil
}

// breakTables makes gone a location that does not exist and plain a folder that is not a
// Delta table.
func breakTables(t *testing.T, f *fixture) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(f.dir, "gone")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(f.dir, "plain", "_delta_log")); err != nil {
		t.Fatal(err)
	}
}

// TestBrokenTables: a table whose location does not exist, or is not a Delta table, is listed
// broken with the reason (GET /api/tables, the tables page, the table page) once the service
// has looked at it (each unknown table at the first tick, in the background; every run,
// preview and inspection looks too), not "not inspected yet" and idle; it is looked at again
// an hour later, and a table that opens again is no longer broken.
func TestBrokenTables(t *testing.T) {
	f := newFixture(t, `tables:
  - {id: a, path: TABLES/a, policy: {inspectEvery: off}}
  - {id: gone, path: TABLES/gone, policy: {inspectEvery: off}}
  - {id: plain, path: TABLES/plain}
`, nil, nil)
	breakTables(t, f)
	ctx := context.Background()
	if in := tableInfo(t, f, "gone"); in["health"] != runner.HealthUnknown || in["broken"] != nil {
		t.Errorf("before any look: %v", in)
	}
	f.srv.Tick(ctx)
	f.srv.Wait()
	for id, want := range map[string]string{"gone": "does not exist", "plain": "is not a Delta table"} {
		in := tableInfo(t, f, id)
		b, _ := in["broken"].(map[string]any)
		if in["health"] != runner.HealthBroken || b == nil || !strings.Contains(b["reason"].(string), want) {
			t.Errorf("%s: %v, want broken: %s", id, in, want)
		}
	}
	if in := tableInfo(t, f, "a"); in["health"] != runner.HealthOK || in["broken"] != nil {
		t.Errorf("a: %v, want ok", in)
	}
	_, page := f.do(t, "GET", "/", "")
	html := page["text"].(string)
	row := html[strings.Index(html, `<tr data-table="gone"`):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, `data-health="broken"`) || !strings.Contains(row, "Broken: ") || !strings.Contains(row, "does not exist") ||
		!strings.Contains(row, `status-broken`) || strings.Contains(row, "not inspected yet") || strings.Contains(row, "idle") {
		t.Errorf("the tables page's row of gone:\n%s", row)
	}
	_, page = f.do(t, "GET", "/tables/plain", "")
	if html := page["text"].(string); !strings.Contains(html, `id="broken"`) || !strings.Contains(html, "is not a Delta table") {
		t.Errorf("the table page of plain has no broken banner:\n%s", html)
	}

	// A preview of a broken table fails, and says so; once fixed, it works, and the table
	// is no longer broken.
	if code, _ := f.do(t, "POST", "/api/tables/gone/preview", "{}"); code != 502 {
		t.Errorf("preview of gone: %d, want 502", code)
	}
	makeTable(t, filepath.Join(f.dir, "gone"), t0, nil)
	if code, body := f.do(t, "POST", "/api/tables/gone/preview", "{}"); code != 200 {
		t.Fatalf("preview of gone, fixed: %d %v", code, body)
	}
	if in := tableInfo(t, f, "gone"); in["health"] != runner.HealthOK {
		t.Errorf("gone, fixed and previewed: %v", in)
	}
	// plain is fixed too: the tick an hour on looks again.
	makeTable(t, filepath.Join(f.dir, "plain"), t0, nil)
	f.clock.set(t0.Add(30 * time.Minute))
	f.srv.Tick(ctx)
	f.srv.Wait()
	if in := tableInfo(t, f, "plain"); in["health"] != runner.HealthBroken {
		t.Errorf("plain, half an hour on: %v, want still broken (not looked at again yet)", in)
	}
	f.clock.set(t0.Add(runner.InspectRetryAfter))
	f.srv.Tick(ctx)
	f.srv.Wait()
	if in := tableInfo(t, f, "plain"); in["health"] != runner.HealthOK {
		t.Errorf("plain, an hour on: %v, want ok", in)
	}
}

// TestCheckTables: what serve --check reads of each configured table: a version for a table,
// the reason for a location that does not exist, a folder that is not a Delta table, and a
// storage option whose variable is not set (a secret given in it never shows).
func TestCheckTables(t *testing.T) {
	dir := t.TempDir()
	makeTable(t, filepath.Join(dir, "a"), t0, nil)
	os.MkdirAll(filepath.Join(dir, "plain"), 0o755)
	yml := "dataDir: state\ntables:\n  - {id: a, path: " + filepath.Join(dir, "a") + "}\n  - {id: gone, path: " + filepath.Join(dir, "gone") + "}\n" +
		"  - {id: plain, path: " + filepath.Join(dir, "plain") + "}\n" +
		"  - {id: s3, path: 's3://bucket/t', storageOptions: {aws_secret_access_key: '${NOT_SET}', aws_access_key_id: '${KEY_ID}'}}\n"
	cfg, err := config.Parse([]byte(yml), "m.yaml", dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]TableCheck{}
	for _, c := range CheckTables(context.Background(), cfg, func(k string) string { return map[string]string{"KEY_ID": "AKIA-very-secret"}[k] }) {
		got[c.ID] = c
	}
	if c := got["a"]; c.Broken != "" || c.Version != 0 || c.Where != filepath.Join(dir, "a") {
		t.Errorf("a: %+v", c)
	}
	for id, want := range map[string]string{"gone": "does not exist", "plain": "is not a Delta table", "s3": "NOT_SET"} {
		if c := got[id]; !strings.Contains(c.Broken, want) || strings.Contains(c.Broken, "AKIA-very-secret") {
			t.Errorf("%s: %+v, want broken: %s", id, c, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "state")); err == nil {
		t.Error("the check created the data directory")
	}
}

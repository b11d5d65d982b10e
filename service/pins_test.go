package service

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPinsAPI: GET, POST and DELETE /api/tables/{id}/pins are run's pins (the CLI's pin, pins
// and unpin): a pin made, listed active, removed; every request the service refuses is
// answered 400 (404 for a pin that is not there) and writes nothing.
func TestPinsAPI(t *testing.T) {
	f := newFixture(t, `tables:
  - {id: a, path: TABLES/a}
`, nil, nil)
	pinsDir := filepath.Join(f.dir, "a", "_deltavacuum")
	for _, body := range []string{
		`{"version": 0, "hours": 0, "reason": "x"}`,
		`{"version": 0, "hours": -1, "reason": "x"}`,
		`{"version": 0, "hours": 1e9, "reason": "x"}`,
		`{"version": 0, "hours": "24", "reason": "x"}`,
		`{"version": 0, "hours": 24, "reason": ""}`,
		`{"version": 0, "hours": 24, "reason": "line\nbreak"}`,
		`{"version": -1, "hours": 24, "reason": "x"}`,
		`{"version": 5, "hours": 24, "reason": "x"}`,
		`{"version": 0, "timestamp": "2026-12-01T00:00:00Z", "hours": 24, "reason": "x"}`,
		`{"hours": 24, "reason": "x"}`,
		`{"version": 0, "hours": 24, "reason": "x", "forever": true}`,
		`{"version": 0, "version": 1, "hours": 24, "reason": "x"}`,
		`{"timestamp": "yesterday", "hours": 24, "reason": "x"}`,
		`[1]`,
	} {
		code, resp := f.do(t, "POST", "/api/tables/a/pins", body)
		if code != 400 || resp["error"] == nil {
			t.Errorf("POST %s: %d %v, want 400 with the reason", body, code, resp)
		}
		if _, err := os.Stat(pinsDir); !os.IsNotExist(err) {
			t.Fatalf("POST %s was refused, yet it wrote %s (%v)", body, pinsDir, err)
		}
	}
	code, pin := f.do(t, "POST", "/api/tables/a/pins", `{"version": 0, "hours": 24, "reason": "Q3 audit"}`)
	if code != 201 || pin["version"] != float64(0) || pin["reason"] != "Q3 audit" {
		t.Fatalf("POST: %d %v", code, pin)
	}
	id := pin["id"].(string)
	code, list := f.do(t, "GET", "/api/tables/a/pins", "")
	pins, _ := list["pins"].([]any)
	if code != 200 || len(pins) != 1 || pins[0].(map[string]any)["state"] != "active" || list["maxPinHours"] != float64(720) {
		t.Fatalf("GET: %d %v", code, list)
	}
	if code, resp := f.do(t, "DELETE", "/api/tables/a/pins/not-a-pin", ""); code != 400 {
		t.Errorf("DELETE of a bad id: %d %v", code, resp)
	}
	if code, resp := f.do(t, "DELETE", "/api/tables/a/pins/0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21", ""); code != 404 {
		t.Errorf("DELETE of a pin that is not there: %d %v", code, resp)
	}
	if code, resp := f.do(t, "DELETE", "/api/tables/a/pins/"+id, ""); code != 204 {
		t.Fatalf("DELETE: %d %v", code, resp)
	}
	if code, list := f.do(t, "GET", "/api/tables/a/pins", ""); code != 200 || len(list["pins"].([]any)) != 0 {
		t.Errorf("after DELETE: %d %v", code, list)
	}
	if code, _ := f.do(t, "GET", "/api/tables/nope/pins", ""); code != 404 {
		t.Errorf("pins of no table: %d", code)
	}
}

// TestBrowserPins: the table page lists the pins, makes one with its form (the current version
// when none is given) and removes it with its button; the readers of the last inspection are
// shown, or that none was found.
func TestBrowserPins(t *testing.T) {
	f := newFixture(t, `tables:
  - {id: a, path: TABLES/a}
`, nil, nil)
	if code, _ := f.do(t, "GET", "/api/tables/a/inspect", ""); code != 200 {
		t.Fatalf("inspect: %d", code)
	}
	b := newBrowser(t, f.http.URL)
	b.nav("/tables/a")
	if !b.has("#pins-none") || !b.has("#readers-none") {
		t.Fatal("the page says nothing of pins or readers")
	}
	b.run(chromedp.SendKeys("#pin-reason", "notebook job", chromedp.ByQuery), chromedp.Click("#pin-create", chromedp.ByQuery))
	b.run(chromedp.WaitVisible("#pins tbody tr", chromedp.ByQuery))
	if row := b.text("#pins tbody tr"); !strings.Contains(row, "notebook job") || !strings.Contains(row, "active") {
		t.Errorf("the pin's row: %q", row)
	}
	b.shot("pinned")
	b.run(chromedp.Click("button.unpin", chromedp.ByQuery), chromedp.WaitVisible("#pins-none", chromedp.ByQuery))
	if pins, _ := filepath.Glob(filepath.Join(f.dir, "a", "_deltavacuum", "lock", "pin-*")); len(pins) != 0 {
		t.Errorf("the pin is still there after Unpin: %v", pins)
	}
}

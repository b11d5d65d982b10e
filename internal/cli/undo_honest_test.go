package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

// TestUndoPromisesOnlyWhatIsKept: on local disk without --trash nothing keeps what a run
// deletes: the run says it cannot be undone (text and --json) instead of "undo can take it
// back"; an undo (and its dry run) is refused before it starts, with one line that says why,
// and leaves the run completed (issue 36, item 3: it printed one identical reason per file and
// marked the run "partially undone" with 0 back). With --trash the run says it can be undone,
// and after the undo the run is "undone", and says it cannot be undone again (item 4).
func TestUndoPromisesOnlyWhatIsKept(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	code, out, errs := runCLI(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff)
	if code != ExitOK {
		t.Fatal(errs)
	}
	if !strings.Contains(out, "cannot be undone: nothing keeps deleted files here") || !strings.Contains(out, "use --trash") || strings.Contains(out, "can be undone") {
		t.Errorf("a run on local disk without --trash:\n%s", out)
	}
	var runs []map[string]any
	_, out, _ = runCLI(t, "runs", dir, "--json")
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("runs --json: %v\n%s", err, out)
	}
	if runs[0]["state"] != "completed" || runs[0]["undo"].(map[string]any)["possible"] != "no" {
		t.Errorf("runs: state %v, undo %v", runs[0]["state"], runs[0]["undo"])
	}
	for _, args := range [][]string{{"undo", dir, "--dry-run"}, {"undo", dir}} {
		code, out, errs := runCLI(t, args...)
		if code != ExitFailure || out != "" || strings.Count(errs, "\n") != 1 ||
			!strings.Contains(errs, "cannot be undone: nothing keeps deleted files here") || !strings.Contains(errs, "nothing was changed") {
			t.Errorf("%v: exit %d, want 1 and one line saying why:\nstdout %q\nstderr %q", args[1:], code, out, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "_deltavacuum", "runs", runs[0]["id"].(string)+".undo.json")); !os.IsNotExist(err) {
		t.Errorf("the refused undo wrote a report: %v", err)
	}
	_, out, _ = runCLI(t, "runs", dir, "--json")
	_ = json.Unmarshal([]byte(out), &runs)
	if runs[0]["state"] != "completed" || runs[0]["undoneAt"] != nil || runs[0]["lastUndo"] != nil {
		t.Errorf("after the refused undo: state %v undoneAt %v lastUndo %v", runs[0]["state"], runs[0]["undoneAt"], runs[0]["lastUndo"])
	}
	code, out, _ = runCLI(t, "undo", dir, "--json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); code != ExitFailure || err != nil || doc["exitCode"] != float64(ExitFailure) || !strings.Contains(doc["error"].(string), "cannot be undone") {
		t.Errorf("undo --json refused: exit %d, %v:\n%s", code, err, out)
	}

	dir = fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	code, out, errs = runCLI(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--trash", "--json")
	if code != ExitOK {
		t.Fatal(errs)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil || res["undo"].(map[string]any)["possible"] != "yes" || res["undo"].(map[string]any)["via"] != "trash" {
		t.Fatalf("--trash --json: %v %v", err, res["undo"])
	}
	if code, _, errs := runCLI(t, "undo", dir); code != ExitOK {
		t.Fatal(errs)
	}
	_, out, _ = runCLI(t, "runs", dir, "--json")
	_ = json.Unmarshal([]byte(out), &runs)
	if runs[0]["state"] != "undone" || runs[0]["undoneAt"] == nil {
		t.Errorf("after a complete undo: %v %v", runs[0]["state"], runs[0]["undoneAt"])
	}
	if u := runs[0]["undo"].(map[string]any); u["possible"] != "no" || !strings.Contains(u["why"].(string), "cannot be undone again") {
		t.Errorf("after a complete undo, runs --json says undo %v", u)
	}
	_, out, _ = runCLI(t, "runs", dir)
	if lines := strings.Split(out, "\n"); len(lines) < 2 || !strings.HasSuffix(strings.TrimSpace(lines[1]), " no") {
		t.Errorf("after a complete undo, runs says:\n%s", out)
	}
}

package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

// TestUndoPromisesOnlyWhatIsKept: on local disk without --trash nothing keeps what a run
// deletes: the run says it cannot be undone (text and --json) instead of "undo can take it
// back"; the undo that brings nothing back leaves the run "partially undone" with why, and
// offers no retry; undo --dry-run reports and succeeds. With --trash the run says it can be
// undone, and after the undo the run is "undone".
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
	if code, out, _ := runCLI(t, "undo", dir, "--dry-run"); code != ExitOK || !strings.Contains(out, "not restorable") {
		t.Errorf("undo --dry-run: exit %d, want 0 and the files it cannot bring back:\n%s", code, out)
	}
	if code, _, _ := runCLI(t, "undo", dir); code != ExitFailure {
		t.Errorf("an undo that restores nothing: exit %d, want 1", code)
	}
	_, out, _ = runCLI(t, "runs", dir, "--json")
	_ = json.Unmarshal([]byte(out), &runs)
	detail, _ := runs[0]["stateDetail"].(string)
	if runs[0]["state"] != "partially undone" || runs[0]["undoneAt"] != nil || !strings.Contains(detail, "cannot come back") || strings.Contains(detail, "retry") {
		t.Errorf("after an undo that restored nothing: state %v undoneAt %v: %s", runs[0]["state"], runs[0]["undoneAt"], detail)
	}
	_, out, _ = runCLI(t, "runs", dir)
	if !strings.Contains(out, "partially undone") || strings.Contains(out, "undo again") {
		t.Errorf("runs:\n%s", out)
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
}

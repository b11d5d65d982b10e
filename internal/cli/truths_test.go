package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

// TestJSONForEveryFailure (issue 36, item 6): --json promises one JSON document on standard
// output for every failure; a mistyped flag, a missing argument or a refusal before any result
// printed none.
func TestJSONForEveryFailure(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"vacuum", dir, "--json", "--retain-hour", "3"}, ExitUsage, "did you mean --retain-hours?"},
		{[]string{"runs", dir, "--json", "--limit", "3"}, ExitUsage, "unknown flag: --limit"},
		{[]string{"undo", "--json"}, ExitUsage, "one TABLE"},
		{[]string{"undo", dir, "--json", "--run", "../x"}, ExitUsage, "is not a run id"},
		{[]string{"undo", dir, "--json"}, ExitFailure, "no run"},
		{[]string{"trash", "purge", dir, "--json"}, ExitUsage, "--older-than"},
		{[]string{"history", dir + "/nope", "--json"}, ExitFailure, "does not exist"},
		{[]string{"inspect", dir, "--json=true", "--top", "x"}, ExitUsage, "invalid argument"},
	} {
		code, out, errs := run(t, tc.args...)
		var doc map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Errorf("%v: exit %d, stdout is not one JSON document (%v):\n%s\nstderr: %s", tc.args, code, err, out, errs)
			continue
		}
		msg, _ := doc["error"].(string)
		if code != tc.code || doc["exitCode"] != float64(tc.code) || !strings.Contains(msg, tc.says) {
			t.Errorf("%v: exit %d, document %v; want exit %d saying %q", tc.args, code, doc, tc.code, tc.says)
		}
	}
	// After "--" every argument is a name: "--json" there asks for nothing.
	if _, out, _ := run(t, "vacuum", "--dry-run", "--", "--json"); out != "" {
		t.Errorf("a table named --json got a JSON document:\n%s", out)
	}
}

// TestTrashRunSaysMoved (issue 36, item 6): a --trash run said "Deleted" for the files it moved
// into the trash; and counts of one said "1 files".
func TestTrashRunSaysMoved(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	code, out, errs := run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--trash")
	if code != ExitOK || !strings.Contains(out, "Moved 7 files (") || !strings.Contains(out, " to the trash _deltavacuum/trash/") || strings.Contains(out, "Deleted") {
		t.Errorf("exit %d:\n%s%s", code, out, errs)
	}
	code, out, _ = run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--dry-run")
	if code != ExitOK || !strings.Contains(out, "Found 0 files (0 bytes) and 0 directories in a total of 1 directory") {
		t.Errorf("the dry run after: exit %d\n%s", code, out)
	}
}

// TestRunsNewestFirst (issue 36, item 6): runs listed oldest first while the service's pages
// list newest first; one order everywhere, newest first (text, --json).
func TestRunsNewestFirst(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	var ids []string
	for range 2 {
		code, out, errs := run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--json")
		var res map[string]any
		if err := json.Unmarshal([]byte(out), &res); code != ExitOK || err != nil {
			t.Fatalf("vacuum: exit %d, %v: %s", code, err, errs)
		}
		ids = append(ids, res["runId"].(string))
	}
	_, out, _ := run(t, "runs", dir, "--json")
	var runs []map[string]any
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 2 || runs[0]["id"] != ids[1] || runs[1]["id"] != ids[0] {
		t.Fatalf("runs --json: %v, want %s then %s:\n%s", err, ids[1], ids[0], out)
	}
	_, out, _ = run(t, "runs", dir)
	if i, j := strings.Index(out, ids[1]), strings.Index(out, ids[0]); i < 0 || j < 0 || i > j {
		t.Errorf("runs, want %s first:\n%s", ids[1], out)
	}
}

package adversarial

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestNewlineInANameForgesNoLine: a file whose name holds a newline and tabs would, printed
// raw, add a line to the DRY RUN that looks like another file (here: the live file). Every
// name is one line, quoted when it must be; --json keeps it raw.
func TestNewlineInANameForgesNoLine(t *testing.T) {
	tb := newLocalTable(t)
	tb.commit(addLine("live.parquet"))
	tb.file("live.parquet", 30*day)
	forged := "x.parquet\nuntracked\t1\t2020-01-01T00:00:00Z\tlive.parquet"
	tb.file(forged, 30*day)
	tb.file("bidi-\u202e.parquet", 30*day) // a right-to-left override: invisible, reorders text
	code, out, stderr := run(t, "vacuum", tb.dir, "--retain-hours", "0", "--conf", checkOff, "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[3], "A real run cannot be undone") {
		t.Fatalf("got %d lines, want 2 files, the summary and whether a real run can be undone:\n%s", len(lines), out)
	}
	for _, l := range lines[:2] {
		if strings.HasSuffix(l, "\tlive.parquet") {
			t.Errorf("a line names the live file: %q", l)
		}
	}
	if !strings.Contains(out, `"x.parquet\nuntracked\t1\t2020-01-01T00:00:00Z\tlive.parquet"`) || !strings.Contains(out, `"bidi-\u202e.parquet"`) {
		t.Errorf("the names are not shown quoted:\n%s", out)
	}
	_, js, _ := run(t, "vacuum", tb.dir, "--retain-hours", "0", "--conf", checkOff, "--dry-run", "--json")
	var doc struct {
		Files []struct{ Path string }
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range doc.Files {
		found = found || f.Path == forged
	}
	if !found {
		t.Errorf("--json does not hold the raw name: %+v", doc.Files)
	}
	tb.mustExist("live.parquet")
}

// TestRetainHoursNaN: NaN is not a negative number.
func TestRetainHoursNaN(t *testing.T) {
	tb := newLocalTable(t)
	code, _, stderr := run(t, "vacuum", tb.dir, "--retain-hours", "NaN", "--conf", checkOff, "--dry-run")
	if code == 0 || !strings.Contains(stderr, "not a number") || strings.Contains(stderr, "less than 0") {
		t.Errorf("exit %d, %q; want a message that the retention is not a number", code, stderr)
	}
}

// TestDeletedBytesAreTheDeletedOnes: the summary of a real run reports the bytes it deleted,
// not those it planned (a file kept by the re-check is not counted).
func TestDeletedBytesAreTheDeletedOnes(t *testing.T) {
	tb := newLocalTable(t)
	tb.file("a.parquet", 30*day) // "data of a.parquet": 17 bytes
	code, out, stderr := run(t, "vacuum", tb.dir, "--retain-hours", "0", "--conf", checkOff)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "Deleted 1 file (17 bytes)") {
		t.Errorf("got %q", out)
	}
	_, js, _ := run(t, "vacuum", tb.dir, "--retain-hours", "0", "--conf", checkOff, "--json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["sizeOfDeletedData"] != float64(0) || doc["numDeletedFiles"] != float64(0) {
		t.Errorf("second run: sizeOfDeletedData %v numDeletedFiles %v, want 0 0", doc["sizeOfDeletedData"], doc["numDeletedFiles"])
	}

	// A planned file that is gone when the executor comes to it is not counted as deleted.
	tb.file("b.parquet", 30*day)
	tb.file("gone.parquet", 30*day)
	ctx := context.Background()
	table, err := deltavacuum.Open(ctx, tb.dir)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := table.Plan(ctx, vacuum.Options{RetainHours: ptr(0.0), DisableRetentionCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(tb.dir, "gone.parquet")); err != nil {
		t.Fatal(err)
	}
	res, err := vacuum.Execute(ctx, table.Store, plan, vacuum.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.SizeOfDataToDelete != 37 || res.SizeOfDeletedData != 17 || res.NumAlreadyGone != 1 {
		t.Errorf("planned %d bytes, deleted %d, %d gone; want 37, 17, 1", res.SizeOfDataToDelete, res.SizeOfDeletedData, res.NumAlreadyGone)
	}
}

// TestLastVacuumInfoBeyondTheLog: a _last_vacuum_info naming a version the log does not have
// made every later LITE a silent no-op; it is corrupt, and LITE says so and what to do.
func TestLastVacuumInfoBeyondTheLog(t *testing.T) {
	tb := newLocalTable(t)
	tb.commit(addLine("a.parquet"))
	tb.commit(removeLine("a.parquet"))
	tb.file("a.parquet", 30*day)
	if err := os.WriteFile(filepath.Join(tb.dir, "_delta_log", "_last_vacuum_info"), []byte(`{"latestCommitVersionOutsideOfRetentionWindow":1000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := vacuumNow(t, tb.dir, "--lite")
	if code != 1 || !strings.Contains(stderr, "corrupt") || !strings.Contains(stderr, "VACUUM FULL") {
		t.Errorf("exit %d, %q; want a refusal saying the file is corrupt and to run VACUUM FULL", code, stderr)
	}
	if code, stderr := vacuumNow(t, tb.dir); code != 0 {
		t.Fatalf("FULL: exit %d: %s", code, stderr)
	}
	if code, stderr := vacuumNow(t, tb.dir, "--lite"); code != 0 {
		t.Errorf("LITE after FULL: exit %d: %s", code, stderr)
	}
}

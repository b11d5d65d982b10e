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

// vacuum --trash, runs, undo and trash purge, as a user runs them.
func TestTrashRunsUndoPurge(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	before := fixtures.Files(t, dir)
	code, out, errs := run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--trash")
	if code != ExitOK {
		t.Fatalf("vacuum --trash: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "reclaimed when the trash is purged") || !strings.Contains(out, "Run ") {
		t.Errorf("vacuum --trash output:\n%s", out)
	}
	if !strings.Contains(errs, "moved to the trash") {
		t.Errorf("no warning that the trash is still billed:\n%s", errs)
	}
	trashed, _ := filepath.Glob(filepath.Join(dir, "_deltavacuum", "trash", "*", "*.parquet"))
	if len(trashed) != 7 {
		t.Fatalf("%d files in the trash, want 7", len(trashed))
	}

	code, out, errs = run(t, "runs", dir, "--json")
	if code != ExitOK {
		t.Fatalf("runs: exit %d: %s", code, errs)
	}
	var runs []map[string]any
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 || runs[0]["status"] != "COMPLETED" || runs[0]["numFiles"] != float64(7) {
		t.Fatalf("runs --json: %v\n%s", err, out)
	}
	id := runs[0]["id"].(string)
	code, out, _ = run(t, "runs", dir)
	if code != ExitOK || !strings.Contains(out, id) || !strings.Contains(out, "trash _deltavacuum/trash/") {
		t.Errorf("runs:\n%s", out)
	}

	code, out, errs = run(t, "undo", dir, "--dry-run")
	if code != ExitOK || !strings.Contains(out, "Would restore 7 files (+7 checksum companions)") {
		t.Fatalf("undo --dry-run: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, "undo", dir, "--run", id, "--json")
	if code != ExitOK {
		t.Fatalf("undo: exit %d: %s", code, errs)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep["numRestored"] != float64(14) {
		t.Fatalf("undo --json: %v\n%s", err, out)
	}
	after := fixtures.Files(t, dir)
	have := map[string]bool{}
	for _, f := range after {
		have[f] = true
	}
	for _, f := range before {
		if !have[f] {
			t.Errorf("%s is not back", f)
		}
	}
	code, out, _ = run(t, "runs", dir)
	if code != ExitOK || !strings.Contains(out, time.Now().UTC().Format("2006-01-02")) {
		t.Errorf("runs after the undo shows no undo time:\n%s", out)
	}

	// A second run, trashed, then purged.
	if code, _, errs = run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--trash=_old"); code != ExitOK {
		t.Fatalf("vacuum --trash=_old: %s", errs)
	}
	code, out, errs = run(t, "trash", "purge", dir, "--trash", "_old", "--older-than", "0", "--json")
	if code != ExitOK {
		t.Fatalf("trash purge: exit %d: %s", code, errs)
	}
	var purge map[string]any
	if err := json.Unmarshal([]byte(out), &purge); err != nil || purge["numFiles"] != float64(14) {
		t.Fatalf("trash purge --json: %v\n%s", err, out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "_old", "*", "*")); len(left) != 0 {
		t.Errorf("left in the trash: %v", left)
	}
	// Undo of the purged run: refused in one line that says when its trash was purged.
	if code, out, errs = run(t, "undo", dir); code != ExitFailure || out != "" || !strings.Contains(errs, "its trash was purged on") {
		t.Errorf("undo of a purged run: exit %d\n%s%s", code, out, errs)
	}
}

func TestUndoHostileFlags(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	for _, args := range [][]string{
		{"undo", dir, "--run", "../../etc"},
		{"undo", dir, "--run", "20261201T153000Z-1A2B3C4D"},
		{"undo", dir, "--run", ""},
		{"trash", "purge", dir},
		{"trash", "purge", dir, "--older-than", "-1h"},
		{"trash", "purge", dir, "--older-than", "1.5d"},
		{"trash", "purge", dir, "--older-than", "soon"},
		{"trash", "purge", dir, "--older-than", "99999999d"},
		{"trash", "purge", dir, "--older-than", "1d", "--trash", "data"},
		{"trash", "purge", dir, "--older-than", "1d", "--trash", "_delta_log"},
		{"trash", "purge", dir, "--older-than", "1d", "--trash", "../_x"},
		{"trash", "purge", dir, "--older-than", "0", "--trash", "_t\n"},
		{"trash", "purge", dir, "--older-than", "0", "--trash", "_deltavacuum/trash\n"},
		{"trash", "purge", dir, "--older-than", "0", "--trash", "_t\x1b[31m"},
		{"vacuum", dir, "--trash=_t\n", "--retain-hours", "0", "--conf", checkOff},
		{"vacuum", dir, "--trash=_t\r", "--retain-hours", "0", "--conf", checkOff},
		{"vacuum", dir, "--trash=", "--retain-hours", "0", "--conf", checkOff},
		{"vacuum", dir, "--trash=part-00000", "--retain-hours", "0", "--conf", checkOff},
		{"vacuum", dir, "--trash=_delta_log/x", "--retain-hours", "0", "--conf", checkOff},
		{"vacuum", dir, "--trash=/tmp/x", "--retain-hours", "0", "--conf", checkOff},
		{"vacuum", dir, "--trash", "--no-run-record", "--retain-hours", "0", "--conf", checkOff},
	} {
		before := fixtures.Files(t, dir)
		code, _, errs := run(t, args...)
		if code == ExitOK {
			t.Errorf("%v: accepted", args)
		}
		if strings.Contains(errs, "panic") {
			t.Errorf("%v: %s", args, errs)
		}
		if len(fixtures.Files(t, dir)) != len(before) {
			t.Fatalf("%v changed the table", args)
		}
	}
	// No run yet: undo says so.
	if code, _, errs := run(t, "undo", dir); code == ExitOK || !strings.Contains(errs, "no run") {
		t.Errorf("undo without runs: exit %d: %s", code, errs)
	}
	if code, out, _ := run(t, "runs", dir); code != ExitOK || !strings.Contains(out, "No run records") {
		t.Errorf("runs without runs: %s", out)
	}
	// --no-run-record keeps none.
	if code, _, errs := run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--no-run-record"); code != ExitOK {
		t.Fatal(errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "_deltavacuum", "runs")); !os.IsNotExist(err) {
		t.Errorf("--no-run-record kept a record: %v", err)
	}
}

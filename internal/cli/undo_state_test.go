package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	dvrun "github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// TestPurgedRunIsNotOfferedUndo (issue 36, item 1): after vacuum --trash and trash purge, runs
// said UNDO yes ("deltavacuum undo brings them back"), and the dry run of the undo listed every
// file "not restorable" with a raw Go error and the absolute path of its trashed copy ("stat
// /…/_deltavacuum/trash/…: no such file or directory", "purged?"). Now the purge keeps a note
// beside the run's record, and runs (text and --json) says the run cannot be undone, since
// when; the undo and its dry run are refused in one line that says so, naming no file.
func TestPurgedRunIsNotOfferedUndo(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	if code, _, errs := run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--trash"); code != ExitOK {
		t.Fatal(errs)
	}
	code, out, errs := run(t, "trash", "purge", dir, "--older-than", "0s")
	if code != ExitOK || !strings.Contains(out, "Deleted 14 files") || !strings.Contains(out, "\nThat run can no longer be undone") {
		t.Fatalf("trash purge: exit %d\n%s%s", code, out, errs)
	}
	var runs []map[string]any
	_, out, _ = run(t, "runs", dir, "--json")
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("runs --json: %v\n%s", err, out)
	}
	id := runs[0]["id"].(string)
	u := runs[0]["undo"].(map[string]any)
	if runs[0]["state"] != "completed" || u["possible"] != "no" || !strings.Contains(u["why"].(string), "cannot be undone: its trash was purged on "+time.Now().UTC().Format("2006-01-02")) {
		t.Errorf("runs --json after the purge: state %v, undo %v", runs[0]["state"], u)
	}
	if p, _ := runs[0]["purged"].(map[string]any); p == nil || p["numFiles"] != float64(14) || p["done"] != true {
		t.Errorf("runs --json: purged %v", runs[0]["purged"])
	}
	_, out, _ = run(t, "runs", dir)
	if !strings.Contains(out, "trash, purged") || !strings.Contains(out, "cannot be undone: its trash was purged on") || strings.Contains(out, " yes") {
		t.Errorf("runs after the purge:\n%s", out)
	}
	for _, args := range [][]string{{"undo", dir, "--dry-run"}, {"undo", dir}, {"undo", dir, "--run", id}} {
		code, out, errs := run(t, args...)
		if code != ExitFailure || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "cannot be undone: its trash was purged on") {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q", args[1:], code, out, errs)
		}
		for _, raw := range []string{"stat ", "no such file", "_deltavacuum/trash/", "purged?"} {
			if strings.Contains(errs, raw) {
				t.Errorf("%v says %q: %s", args[1:], raw, errs)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "_deltavacuum", "runs", id+".undo.json")); !os.IsNotExist(err) {
		t.Errorf("the refused undo wrote a report: %v", err)
	}
}

// TestInterruptedRunOnLocalDisk (issue 36, item 2): after kill -9 on local disk, runs and unlock
// said "deltavacuum undo … --unfinished brings back what it deleted" while the row said UNDO no,
// and that undo called every planned file "not restorable", those never deleted too. Now both
// say that what it deleted is gone and to run VACUUM again; the undo is refused in one line.
func TestInterruptedRunOnLocalDisk(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	id := killedRun(t, dir, "")
	_, out, _ := run(t, "runs", dir)
	if !strings.Contains(out, "what it deleted is gone") || !strings.Contains(out, "run VACUUM again to finish") || strings.Contains(out, "--unfinished") {
		t.Errorf("runs:\n%s", out)
	}
	var runs []map[string]any
	_, out, _ = run(t, "runs", dir, "--json")
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 || runs[0]["undo"].(map[string]any)["possible"] != "no" {
		t.Errorf("runs --json: %v\n%s", err, out)
	}
	code, out, errs := run(t, "unlock", dir)
	if code != ExitOK || !strings.Contains(out, id) || !strings.Contains(out, "what it deleted is gone") || !strings.Contains(out, "run VACUUM again") || strings.Contains(out, "--unfinished") {
		t.Errorf("unlock: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, "undo", dir, "--unfinished", "--run", id)
	if code != ExitFailure || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "what it deleted is gone") {
		t.Errorf("undo --unfinished: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
}

// killedRun leaves in the table at dir what a run killed part-way leaves: its record, RUNNING,
// listing 3 planned files of which it deleted (or, with trash, moved) the first only, and its
// lock ticket, an hour without a heartbeat. It returns the run's id.
func killedRun(t *testing.T, dir, trash string) string {
	t.Helper()
	ctx := context.Background()
	_, out, errs := run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--dry-run", "--json")
	var plan struct {
		Files []struct {
			Path string `json:"path"`
			Size int64  `json:"size"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan.Files) < 3 {
		t.Fatalf("dry run: %v\n%s%s", err, out, errs)
	}
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().Add(-time.Hour)
	id := dvrun.NewID(started)
	rec := &dvrun.Record{ID: id, Table: store.Location(), Status: dvrun.StatusRunning, StartedAt: started, Mode: "FULL",
		Recovery: dvrun.Recovery(ctx, store), NumFiles: 3}
	if trash != "" {
		rec.Trash = dvrun.RunTrash(trash, id)
	}
	for _, f := range plan.Files[:3] {
		rec.Files = append(rec.Files, dvrun.Entry{Path: f.Path, Size: f.Size})
		rec.Bytes += f.Size
	}
	if err := dvrun.WriteRecord(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	first := plan.Files[0].Path
	if trash != "" {
		if err := store.Move(ctx, first, rec.Trash+first); err != nil {
			t.Fatal(err)
		}
	} else if res, err := store.Delete(ctx, []string{first}); err != nil || res[0].Err != nil {
		t.Fatal(err, res)
	}
	if _, err := store.Stat(ctx, first); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("%s is still at its path: %v", first, err)
	}
	never := func() (<-chan time.Time, func()) { return nil, func() {} }
	if _, err := dvrun.Acquire(ctx, store, dvrun.LockOptions{Purpose: dvrun.PurposeVacuum, Run: id, Ticks: never,
		Now: func() time.Time { return started }}); err != nil {
		t.Fatal(err)
	}
	return id
}

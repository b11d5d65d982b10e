package deltavacuum_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// guardTable writes a table with a live file, a file removed 10 days ago and an untracked
// one, all 10 days old.
func guardTable(t *testing.T, now time.Time) (string, *deltavacuum.Table) {
	t.Helper()
	dir := t.TempDir()
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	old := now.Add(-240 * time.Hour)
	actions := []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "g", "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}},
		map[string]any{"add": map[string]any{"path": "live.parquet", "size": 4, "modificationTime": old.UnixMilli(), "dataChange": true}},
		map[string]any{"remove": map[string]any{"path": "old.parquet", "deletionTimestamp": old.UnixMilli(), "dataChange": true}},
	}
	if err := deltalog.WriteCommit(context.Background(), store, 0, actions); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"live.parquet", "old.parquet", "stray.parquet"} {
		writeOld(t, filepath.Join(dir, f), old)
	}
	writeOld(t, filepath.Join(dir, "_delta_log", "00000000000000000000.json"), old)
	return dir, deltavacuum.OpenStore(store)
}

func writeOld(t *testing.T, p string, old time.Time) {
	t.Helper()
	if _, err := os.Stat(p); err != nil {
		if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// TestExpectPlan: a run asked to execute a previewed plan re-plans and runs only when the new
// plan is the previewed one. A file added, a planned file removed or a commit between the
// preview and the run refuses it with a *vacuum.PlanChangedError: nothing deleted, no run
// record, no VACUUM START.
func TestExpectPlan(t *testing.T) {
	now := time.Now().UTC()
	ctx := context.Background()
	moves := map[string]func(t *testing.T, dir string, tbl *deltavacuum.Table){
		"file added": func(t *testing.T, dir string, _ *deltavacuum.Table) {
			writeOld(t, filepath.Join(dir, "stray-2.parquet"), now.Add(-240*time.Hour))
		},
		"planned file removed": func(t *testing.T, dir string, _ *deltavacuum.Table) {
			if err := os.Remove(filepath.Join(dir, "stray.parquet")); err != nil {
				t.Fatal(err)
			}
		},
		"commit": func(t *testing.T, dir string, tbl *deltavacuum.Table) {
			writeOld(t, filepath.Join(dir, "new.parquet"), now.Add(-time.Hour))
			add := map[string]any{"add": map[string]any{"path": "new.parquet", "size": 4, "modificationTime": now.UnixMilli(), "dataChange": true}}
			if err := deltalog.WriteCommit(ctx, tbl.Store, 1, []any{add}); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, move := range moves {
		t.Run(name, func(t *testing.T) {
			dir, tbl := guardTable(t, now)
			preview, err := tbl.Vacuum(ctx, deltavacuum.VacuumOptions{DryRun: true, Options: vacuum.Options{Now: now}})
			if err != nil {
				t.Fatal(err)
			}
			digest := vacuum.Digest(preview.Plan)
			move(t, dir, tbl)
			commits, _ := filepath.Glob(filepath.Join(dir, "_delta_log", "*.json"))
			res, err := tbl.Vacuum(ctx, deltavacuum.VacuumOptions{ExpectPlan: digest, Options: vacuum.Options{Now: now.Add(time.Second)}})
			var pc *vacuum.PlanChangedError
			if !errors.As(err, &pc) || res != nil {
				t.Fatalf("got %v, %v; want a *vacuum.PlanChangedError", res, err)
			}
			if pc.Expected != digest || pc.Got == digest {
				t.Errorf("the error's digests: %+v", pc)
			}
			for _, f := range []string{"old.parquet", "live.parquet"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s was deleted by a refused run", f)
				}
			}
			if name != "planned file removed" {
				if _, err := os.Stat(filepath.Join(dir, "stray.parquet")); err != nil {
					t.Error("stray.parquet was deleted by a refused run")
				}
			}
			after, _ := filepath.Glob(filepath.Join(dir, "_delta_log", "*.json"))
			if len(after) != len(commits) {
				t.Errorf("a refused run committed: %d commits, had %d", len(after), len(commits))
			}
			if _, err := os.Stat(filepath.Join(dir, "_deltavacuum", "runs")); err == nil {
				t.Error("a refused run wrote a run record")
			}
			if rep, err := tbl.Unlock(ctx, run.UnlockOptions{DryRun: true}); err != nil || len(rep.Tickets) != 0 {
				t.Errorf("a refused run left its lock ticket open: %+v %v", rep, err)
			}
		})
	}

	// Unchanged: the run executes the previewed plan, at a later clock.
	dir, tbl := guardTable(t, now)
	preview, err := tbl.Vacuum(ctx, deltavacuum.VacuumOptions{DryRun: true, Options: vacuum.Options{Now: now}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tbl.Vacuum(ctx, deltavacuum.VacuumOptions{ExpectPlan: vacuum.Digest(preview.Plan), Options: vacuum.Options{Now: now.Add(time.Second)}})
	if err != nil || res.NumDeletedFiles != 2 {
		t.Fatalf("the previewed plan: %v, %+v", err, res)
	}
	if _, err := os.Stat(filepath.Join(dir, "stray.parquet")); err == nil {
		t.Error("the previewed plan was not executed")
	}
	// A bogus digest is refused before anything is deleted.
	dir, tbl = guardTable(t, now)
	if _, err := tbl.Vacuum(ctx, deltavacuum.VacuumOptions{ExpectPlan: "not-a-digest", Options: vacuum.Options{Now: now}}); err == nil || errors.Is(err, vacuum.ErrPlanChanged) {
		t.Errorf("a bogus digest: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "stray.parquet")); err != nil {
		t.Error("a run with a bogus digest deleted a file")
	}
}

// TestExpectPlanTrash: a plan previewed to be moved to the trash is not run as one that
// deletes (the undo would be lost), nor the other way round; the digest of a plan without a
// trash is as it was.
func TestExpectPlanTrash(t *testing.T) {
	now := time.Now().UTC()
	ctx := context.Background()
	for _, tc := range []struct{ preview, run string }{{"_deltavacuum/trash/", ""}, {"", "_deltavacuum/trash/"}, {"_deltavacuum/trash/", "_old/"}} {
		dir, tbl := guardTable(t, now)
		preview, err := tbl.Vacuum(ctx, deltavacuum.VacuumOptions{DryRun: true, Trash: tc.preview, Options: vacuum.Options{Now: now}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := tbl.Vacuum(ctx, deltavacuum.VacuumOptions{ExpectPlan: vacuum.Digest(preview.Plan), Trash: tc.run, Options: vacuum.Options{Now: now.Add(time.Second)}})
		if !errors.Is(err, vacuum.ErrPlanChanged) || res != nil {
			t.Errorf("previewed with trash %q, run with %q: %v, %v; want the plan refused", tc.preview, tc.run, res, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "stray.parquet")); err != nil {
			t.Errorf("previewed with trash %q, run with %q: stray.parquet is gone", tc.preview, tc.run)
		}
	}
	_, tbl := guardTable(t, now)
	preview, err := tbl.Vacuum(ctx, deltavacuum.VacuumOptions{DryRun: true, Trash: "_deltavacuum/trash/", Options: vacuum.Options{Now: now}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tbl.Vacuum(ctx, deltavacuum.VacuumOptions{ExpectPlan: vacuum.Digest(preview.Plan), Trash: "_deltavacuum/trash/", Options: vacuum.Options{Now: now.Add(time.Second)}})
	if err != nil || res.NumDeletedFiles != 2 {
		t.Fatalf("the previewed trash plan: %v, %+v", err, res)
	}
}

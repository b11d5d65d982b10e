package deltavacuum_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestInterruptAfterTheLastDelete (issue 36, item 5): a Ctrl-C after the last delete printed
// "Deleted N files", then failed ("interrupted …: context canceled", exit 130), committed
// VACUUM END FAILED and wrote no _last_vacuum_info. Nothing was left to stop: the run ends
// completed, recorded as such in the history, the coverage and its record.
func TestInterruptAfterTheLastDelete(t *testing.T) {
	store := localFixture(t)
	zero := 0.0
	opts := deltavacuum.VacuumOptions{Options: vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true}, DryRun: true}
	dry, err := deltavacuum.OpenStore(store).Vacuum(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	planned := int(dry.NumFilesToDelete + dry.NumChecksumFiles) // every key the run deletes
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts.DryRun = false
	res, err := deltavacuum.OpenStore(&storagetest.CancelAfter{Store: store, N: planned, Cancel: cancel}).Vacuum(ctx, opts)
	if ctx.Err() == nil {
		t.Fatal("the interrupt did not land: the test proves nothing")
	}
	if err != nil || res.Status != vacuum.StatusCompleted || res.NumDeletedFiles != dry.NumFilesToDelete {
		t.Fatalf("got %v, status %s, %d deleted of %d", err, res.Status, res.NumDeletedFiles, dry.NumFilesToDelete)
	}
	bg := context.Background()
	hist, err := deltalog.History(bg, store, 1)
	if err != nil || len(hist) != 1 || hist[0].Operation != "VACUUM END" {
		t.Fatalf("history: %+v, %v", hist, err)
	}
	var params map[string]any
	if err := json.Unmarshal(hist[0].OperationParameters, &params); err != nil || params["status"] != vacuum.StatusCompleted {
		t.Errorf("VACUUM END %s: %v", hist[0].OperationParameters, err)
	}
	if _, err := store.Stat(bg, "_delta_log/_last_vacuum_info"); err != nil {
		t.Errorf("no _last_vacuum_info: %v", err)
	}
	runs, err := deltavacuum.OpenStore(store).Runs(bg)
	if err != nil || len(runs) != 1 || runs[0].Status != run.StatusCompleted {
		t.Errorf("runs: %+v, %v", runs, err)
	}
}

// TestInterruptMidRunCountsEveryFile (issue 36, item 5): an interrupt part-way reports every
// planned file it did not delete, and says so without Go's words; the run ends FAILED.
func TestInterruptMidRunCountsEveryFile(t *testing.T) {
	store := localFixture(t)
	zero := 0.0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := deltavacuum.OpenStore(&storagetest.CancelAfter{Store: store, N: 1, Cancel: cancel}).Vacuum(ctx, deltavacuum.VacuumOptions{
		Options: vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true}, Exec: vacuum.ExecOptions{BatchSize: 1, Concurrency: 1}})
	if !errors.Is(err, context.Canceled) || res == nil || res.Status != vacuum.StatusFailed {
		t.Fatalf("got %v, %+v", err, res)
	}
	if n := res.NumDeletedFiles + int64(len(res.NotReached)); n < res.NumFilesToDelete || len(res.NotReached) == 0 {
		t.Errorf("deleted %d and not reached %d of %d planned", res.NumDeletedFiles, len(res.NotReached), res.NumFilesToDelete)
	}
	if strings.Contains(err.Error(), "context canceled") {
		t.Errorf("message: %s", err)
	}
}

package deltavacuum_test

import (
	"bytes"
	"context"
	"github.com/deltavacuum/deltavacuum/run"
	"os"
	"path/filepath"
	"testing"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// A trash folder that is a regular file on local disk (issue 25, item 5: the run ended
// COMPLETED with every planned file counted already gone, all of them still on disk). Either
// the run is refused before anything is moved, or each file fails: whichever, no file is
// counted deleted or gone, none leaves its place, the run does not end COMPLETED, and no run
// record lists a file as deleted.
func TestVacuumTrashFolderIsAFile(t *testing.T) {
	ctx := context.Background()
	store := localFixture(t)
	root := store.(*local.Store).Root()
	const notAFolder = "a regular file named like the trash folder"
	if err := os.WriteFile(filepath.Join(root, "_t"), []byte(notAFolder), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tableBytes(t, store)
	zero := 0.0
	tbl := deltavacuum.OpenStore(store)
	res, err := tbl.Vacuum(ctx, deltavacuum.VacuumOptions{
		Options: vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true},
		Trash:   "_t/",
	})
	if err == nil {
		t.Errorf("a vacuum into the trash _t/, a regular file, succeeded: %+v", res)
	}
	if res != nil {
		if res.Status == vacuum.StatusCompleted || res.NumDeletedFiles != 0 || res.NumAlreadyGone != 0 {
			t.Errorf("status %s, %d files deleted, %d already gone; want no COMPLETED run and no file counted deleted or gone",
				res.Status, res.NumDeletedFiles, res.NumAlreadyGone)
		}
	}
	after := tableBytes(t, store)
	for k, b := range before {
		if !bytes.Equal(after[k], b) {
			t.Errorf("%s is not in its place, unchanged, after the run", k)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d files after the run, %d before", len(after), len(before))
	}
	runs, err := tbl.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Complete && r.NumFiles != 0 || r.Status == run.StatusCompleted {
			t.Errorf("run record %s: %s, %d files deleted; want none deleted, not COMPLETED", r.ID, r.Status, r.NumFiles)
		}
	}
}

package deltavacuum_test

import (
	"context"
	"github.com/deltavacuum/deltavacuum/run"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/undo"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestSpilledRunIsTheRun: a real run whose plan spilled after every file (DRY RUN, run record,
// deletes, undo) does what the run of the plan held in memory does.
func TestSpilledRunIsTheRun(t *testing.T) {
	ctx := context.Background()
	type outcome struct {
		dry      []vacuum.File
		deleted  int64
		bytes    int64
		left     []string
		restored int64
	}
	old := time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Second) // one time for both copies
	run := func(filesInMemory int) outcome {
		store, err := local.New(fixtures.Copy(t, undoFixture, old))
		if err != nil {
			t.Fatal(err)
		}
		tbl := deltavacuum.OpenStore(store)
		zero, off := 0.0, false
		opts := deltavacuum.VacuumOptions{
			Options: vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true, Now: time.Now().Add(48 * time.Hour),
				FilesInMemory: filesInMemory, SpillDir: t.TempDir()},
			Logging: &off, Trash: run.DefaultTrash,
		}
		dryOpts := opts
		dryOpts.DryRun = true
		dry, err := tbl.Vacuum(ctx, dryOpts)
		if err != nil {
			t.Fatal(err)
		}
		if dry.Files.Spilled() != (filesInMemory > 0) {
			t.Fatalf("files in memory %d: spilled %v", filesInMemory, dry.Files.Spilled())
		}
		var o outcome
		if o.dry, err = dry.Files.Collect(); err != nil {
			t.Fatal(err)
		}
		dry.Plan.Close()
		res, err := tbl.Vacuum(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		res.Plan.Close()
		o.deleted, o.bytes = res.NumDeletedFiles, res.SizeOfDeletedData
		for k := range tableBytes(t, store) {
			o.left = append(o.left, k)
		}
		slices.Sort(o.left)
		u, err := tbl.Undo(ctx, res.RunID, undo.Options{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		o.restored = u.NumRestored
		return o
	}
	want := run(-1)
	if len(want.dry) < 2 || want.deleted == 0 || want.restored == 0 {
		t.Fatalf("the fixture tests nothing: %+v", want)
	}
	for _, n := range []int{1, 2} {
		if got := run(n); !reflect.DeepEqual(got, want) {
			t.Errorf("files in memory %d:\n%+v\nwant\n%+v", n, got, want)
		}
	}
}

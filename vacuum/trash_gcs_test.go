package vacuum_test

import (
	"context"
	"github.com/deltavacuum/deltavacuum/run"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestTrashKeepsTheGenerationCheck: with --trash (run.TrashStore), a GCS file written again
// since the listing stays at its live path and is reported as changed since listing, as
// without a trash.
func TestTrashKeepsTheGenerationCheck(t *testing.T) {
	ctx := context.Background()
	st, plan := gcsTable(t)
	if err := st.Put(ctx, "p=1/old.parquet", []byte("second")); err != nil {
		t.Fatal(err)
	}
	ts, err := run.NewTrashStore(st, "_deltavacuum/trash/run1/")
	if err != nil {
		t.Fatal(err)
	}
	res, err := vacuum.Execute(ctx, ts, plan, vacuum.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, rerr := storage.ReadAll(ctx, st, "p=1/old.parquet")
	if rerr != nil || string(got) != "second" {
		t.Errorf("p=1/old.parquet after a trashed run: %q, %v; want the second write kept in place (dropped %+v, deleted %d)", got, rerr, res.Dropped, res.NumDeletedFiles)
	}
	if len(res.Dropped) == 0 || res.Dropped[0].Reason != vacuum.DropChanged {
		t.Errorf("dropped %+v, want p=1/old.parquet changed since listing", res.Dropped)
	}
	if _, err := st.Stat(ctx, "_deltavacuum/trash/run1/p=1/old.parquet"); err == nil {
		t.Error("a copy of the old generation is left in the trash")
	}
}

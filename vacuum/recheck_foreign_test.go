package vacuum

import (
	"context"
	"testing"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// TestRecheckDistrustsAnotherTablesSnapshot: a START (a library caller's) whose base is
// a snapshot of another table, of just the version before START, is not taken for the
// commits after the plan: they are this table's to read, and here one of them re-adds a
// planned file.
func TestRecheckDistrustsAnotherTablesSnapshot(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.file("a.parquet", 30*day)
	tb.file("b.parquet", 30*day)
	plan := tb.plan(retain0)

	other := newTable(t, tableSpec{location: "mem://bucket/other"})
	ctx := context.Background()
	v, _, err := startAfter(tb, add("a.parquet"))(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	for other.version < v-1 {
		other.commit(commitInfoOnly("WRITE")) // the other table at version START-1
	}
	snap, err := deltalog.Load(ctx, other.store)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(ctx, tb.store, plan, ExecOptions{Start: &Start{Version: v, Base: snap}})
	if err != nil {
		t.Fatal(err)
	}
	if !exists(tb, "a.parquet") || exists(tb, "b.parquet") {
		t.Errorf("dropped %v: a.parquet, re-added after planning, must stay; b.parquet go", res.Dropped)
	}
}

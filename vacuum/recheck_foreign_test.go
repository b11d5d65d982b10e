package vacuum

import (
	"context"
	"testing"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// TestRecheckDistrustsAnotherTablesSnapshot: a RecordStart (a library caller's) that hands
// back a snapshot of another table, of just the version before START, is not taken for the
// commits after the plan: they are this table's to read, and here one of them re-adds a
// planned file.
func TestRecheckDistrustsAnotherTablesSnapshot(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.file("a.parquet", 30*day)
	tb.file("b.parquet", 30*day)
	plan := tb.plan(retain0)

	other := newTable(t, tableSpec{location: "mem://bucket/other"})
	start := startAfter(tb, add("a.parquet"))
	res, err := Execute(context.Background(), tb.store, plan, ExecOptions{
		RecordStart: func(ctx context.Context, p *Plan) (int64, *deltalog.Snapshot, error) {
			v, _, err := start(ctx, p)
			for other.version < v-1 {
				other.commit(commitInfoOnly("WRITE")) // the other table at version START-1
			}
			snap, lerr := deltalog.Load(ctx, other.store)
			if lerr != nil {
				t.Fatal(lerr)
			}
			return v, snap, err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !exists(tb, "a.parquet") || exists(tb, "b.parquet") {
		t.Errorf("dropped %v: a.parquet, re-added after planning, must stay; b.parquet go", res.Dropped)
	}
}

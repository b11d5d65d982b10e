package synthetic

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/bench/tablegen"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

func keys(t *testing.T, s storage.Store) []string {
	t.Helper()
	var out []string
	err := s.Walk(context.Background(), "", func(o storage.Object) error {
		out = append(out, o.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSameAsLocal checks that the synthetic listing is the listing of the same table written
// to disk, entry for entry and in order, and that the plans agree.
func TestSameAsLocal(t *testing.T) {
	ctx := context.Background()
	for _, parts := range []int{0, 3} {
		tb, err := tablegen.New(tablegen.Spec{Live: 2000, Tombstones: 300, Untracked: 50, Partitions: parts, DVFraction: 0.2})
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "table")
		if err := tb.WriteLocal(ctx, dir, nil); err != nil {
			t.Fatal(err)
		}
		loc, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		syn, err := Create(tb, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		want, got := keys(t, loc), keys(t, syn)
		if !slices.Equal(got, want) {
			t.Fatalf("partitions %d: synthetic listing differs from the local one: %d vs %d entries", parts, len(got), len(want))
		}
		for _, k := range want {
			if _, err := syn.Stat(ctx, k); err != nil {
				t.Errorf("Stat(%q): %v", k, err)
			}
		}
		if _, err := syn.Stat(ctx, "part-99999-x.parquet"); err == nil {
			t.Error("Stat of a key that is not served succeeded")
		}
		zero := 0.0
		opts := vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true, Now: time.Now().Add(time.Second)}
		plans := map[string]*vacuum.Plan{}
		for name, s := range map[string]storage.Store{"local": loc, "synthetic": syn} {
			pl, err := vacuum.NewPlanner(ctx, s, opts)
			if err != nil {
				t.Fatal(err)
			}
			if plans[name], err = pl.Plan(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if a, b := plans["local"], plans["synthetic"]; a.NumFilesToDelete != b.NumFilesToDelete || a.NumFilesToDelete != tb.Stale() {
			t.Errorf("partitions %d: local plan deletes %d, synthetic %d, want %d", parts, a.NumFilesToDelete, b.NumFilesToDelete, tb.Stale())
		}
	}
}

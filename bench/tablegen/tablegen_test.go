package tablegen

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

func TestScramble(t *testing.T) {
	for _, total := range []int64{1, 2, 7, 100, 1000, 12345} {
		tb, err := New(Spec{Live: 1, Untracked: total - 1})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		for g := range total {
			r := tb.rank(g)
			if seen[r] || r < 0 || r >= total {
				t.Fatalf("total %d: rank %d of %d repeated or out of range", total, r, g)
			}
			seen[r] = true
			if back := tb.id(r); back != g {
				t.Fatalf("total %d: id(rank(%d)) = %d", total, g, back)
			}
		}
	}
}

// TestWriteLocalAndVacuum generates a small table, plans FULL and LITE vacuums on it, checks
// that they find exactly the files the spec says are stale, vacuums, resets and verifies.
func TestWriteLocalAndVacuum(t *testing.T) {
	for _, parts := range []int{0, 4} {
		t.Run(map[int]string{0: "unpartitioned, multi-part checkpoint", 4: "partitioned"}[parts], func(t *testing.T) {
			ctx := context.Background()
			spec := Spec{Live: 3000, Tombstones: 400, Untracked: 100, Partitions: parts, DVFraction: 0.1, JSONAddFraction: 0.01}
			if parts == 0 {
				spec.CheckpointPartRows = 1000
			}
			tb, err := New(spec)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "table")
			if err := tb.WriteLocal(ctx, dir, nil); err != nil {
				t.Fatal(err)
			}
			if spec.CheckpointPartRows > 0 && tb.CheckpointParts() < 2 {
				t.Fatalf("%d checkpoint parts, want several", tb.CheckpointParts())
			}
			store, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			zero := 0.0
			now := time.Now().Add(time.Second)
			opts := vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true, Now: now}
			pl, err := vacuum.NewPlanner(ctx, store, opts)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := pl.Plan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := plan.NumFilesToDelete, tb.Stale(); got != want {
				t.Errorf("FULL plan deletes %d files, want %d", got, want)
			}
			if got, want := plan.Protected, tb.Live+tb.LiveDVFiles(); got != want {
				t.Errorf("FULL plan protects %d keys, want %d", got, want)
			}
			stale := map[string]bool{}
			tb.StaleKeys(func(k string) { stale[k] = true })
			for _, f := range plan.Files.MustCollect() {
				if !stale[f.Path] {
					t.Fatalf("plan deletes %s, which is not stale", f.Path)
				}
			}
			opts.Mode = vacuum.ModeLite
			pl, err = vacuum.NewPlanner(ctx, store, opts)
			if err != nil {
				t.Fatal(err)
			}
			lite, err := pl.Plan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := lite.NumFilesToDelete, tb.LiteDeletes(); got != want {
				t.Errorf("LITE plan deletes %d files, want %d", got, want)
			}
			res, err := vacuum.Execute(ctx, store, plan, vacuum.ExecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.NumDeletedFiles != tb.Stale() {
				t.Errorf("deleted %d files, want %d", res.NumDeletedFiles, tb.Stale())
			}
			if err := tb.Verify(dir); err != nil {
				t.Fatal(err)
			}
			if err := tb.Reset(ctx, dir, true); err != nil {
				t.Fatal(err)
			}
			pl, err = vacuum.NewPlanner(ctx, store, vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			again, err := pl.Plan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if again.NumFilesToDelete != tb.Stale() {
				t.Errorf("after Reset the plan deletes %d files, want %d", again.NumFilesToDelete, tb.Stale())
			}
		})
	}
}

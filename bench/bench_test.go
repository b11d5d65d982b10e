package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/deltavacuum/deltavacuum/bench/synthetic"
	"github.com/deltavacuum/deltavacuum/bench/tablegen"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The sizes depend on DVBENCH_SCALE: "full" measures the sizes in docs/benchmarks.md (1 M and
// 10 M live files for the planner, 1 M and 5 M adds for replay); anything else runs small
// sizes that finish in seconds. The benchmarks report; they never assert timings.
func full() bool { return os.Getenv("DVBENCH_SCALE") == "full" }

func name(n int64) string {
	switch {
	case n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// logOnly writes the log of a table (no data files) into a temporary directory.
func logOnly(b *testing.B, spec tablegen.Spec) (*tablegen.Table, string) {
	b.Helper()
	t, err := tablegen.New(spec)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := t.WriteLog(dir); err != nil {
		b.Fatal(err)
	}
	return t, dir
}

// BenchmarkLogReplay reads a Parquet checkpoint of N adds (5 % with deletion vectors, 10 % as
// many tombstones) and three JSON commits, and streams the reconciled file actions: the
// planner's first phase.
func BenchmarkLogReplay(b *testing.B) {
	sizes := []int64{100_000, 1_000_000}
	if full() {
		sizes = []int64{1_000_000, 5_000_000}
	}
	for _, n := range sizes {
		b.Run("adds="+name(n), func(b *testing.B) {
			t, dir := logOnly(b, tablegen.Spec{Live: n, Tombstones: n / 10, Partitions: 100, DVFraction: 0.05,
				CheckpointPartRows: 1_000_000})
			store, err := local.New(dir)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			var peak uint64
			base := LiveHeap()
			for b.Loop() {
				h := StartHeapSampler()
				snap, err := deltalog.Load(ctx, store)
				if err != nil {
					b.Fatal(err)
				}
				var adds int64
				err = snap.Files(ctx, store, func(f deltalog.File) error {
					if !f.Removed {
						adds++
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				if adds != t.Live {
					b.Fatalf("%d adds, want %d", adds, t.Live)
				}
				p, _ := h.Stop()
				peak = max(peak, p)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/add")
			b.ReportMetric(float64(peak-min(peak, base))/(1<<20), "peak-heap-MiB")
		})
	}
}

// BenchmarkPlannerMemory plans a FULL vacuum (retention 0) of a synthetic table whose data
// files are never written (bench/synthetic), so that the heap holds only what the planner
// keeps. The number of files to delete is the same at every size (20 k), so the difference
// between two sizes divided by the difference in live files is the planner's memory per live
// file; the metrics per live file are also reported directly.
func BenchmarkPlannerMemory(b *testing.B) {
	sizes := []int64{100_000, 1_000_000}
	if full() {
		sizes = []int64{1_000_000, 10_000_000}
	}
	for _, n := range sizes {
		b.Run("live="+name(n), func(b *testing.B) {
			t, dir := logOnly(b, tablegen.Spec{Live: n, Tombstones: 10_000, Untracked: 10_000, Partitions: 100,
				DVFraction: 0.05, JSONAddFraction: 1e-4, CheckpointPartRows: 1_000_000})
			store, err := synthetic.New(t, dir)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			zero := 0.0
			opts := vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true}
			var peak, retained, base uint64
			for b.Loop() {
				base = LiveHeap()
				h := StartHeapSampler()
				pl, err := vacuum.NewPlanner(ctx, store, opts)
				if err != nil {
					b.Fatal(err)
				}
				plan, err := pl.Plan(ctx)
				if err != nil {
					b.Fatal(err)
				}
				p, _ := h.Stop()
				peak = max(peak, p-min(p, base))
				retained = LiveHeap() - base
				runtime.KeepAlive(pl)
				if plan.NumFilesToDelete != t.Stale() {
					b.Fatalf("plan deletes %d files, want %d", plan.NumFilesToDelete, t.Stale())
				}
			}
			b.ReportMetric(float64(peak)/float64(n), "peak-B/live-file")
			b.ReportMetric(float64(retained)/float64(n), "retained-B/live-file")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(retained)/(1<<20), "retained-heap-MiB")
		})
	}
}

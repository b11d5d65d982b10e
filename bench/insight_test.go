package bench

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/bench/synthetic"
	"github.com/deltavacuum/deltavacuum/bench/tablegen"
	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// BenchmarkInspect compares deltavacuum inspect with a DRY RUN of the same table: on the
// synthetic backend (the listing costs nothing, so the planner's and inspect's own work is
// all that is measured) and on local disk (a real listing). Sizes: live files; 20 % as many
// tombstoned files and 5 % untracked, 100 partitions, 5 % with deletion vectors. The local
// size is DVBENCH_INSPECT_LOCAL (default 100 k; 0 skips it).
func BenchmarkInspect(b *testing.B) {
	spec := func(n int64) tablegen.Spec {
		return tablegen.Spec{Live: n, Tombstones: n / 5, Untracked: n / 20, Partitions: 100, DVFraction: 0.05, CheckpointPartRows: 1_000_000}
	}
	synth := []int64{100_000}
	if full() {
		synth = []int64{1_000_000}
	}
	for _, n := range synth {
		t, dir := logOnly(b, spec(n))
		store, err := synthetic.New(t, dir)
		if err != nil {
			b.Fatal(err)
		}
		inspectVersusDryRun(b, "synthetic/live="+name(n), store, t)
	}
	n := int64(100_000)
	if s := os.Getenv("DVBENCH_INSPECT_LOCAL"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		n = v
	}
	if n == 0 {
		return
	}
	t, err := tablegen.New(spec(n))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := t.WriteLocal(context.Background(), dir, nil); err != nil {
		b.Fatal(err)
	}
	store, err := local.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	inspectVersusDryRun(b, "local/live="+name(n), store, t)
}

// inspectVersusDryRun runs a DRY RUN and an inspection of the same table in turn, each
// iteration, so that both meet the same load, and reports the CPU time (user + system, from
// getrusage) and wall time of each, and their ratios.
func inspectVersusDryRun(b *testing.B, label string, store storage.Store, t *tablegen.Table) {
	ctx := context.Background()
	zero := 0.0
	b.Run(label, func(b *testing.B) {
		var dryCPU, inspCPU, dryWall, inspWall time.Duration
		for b.Loop() {
			c0, w0 := cpuTime(b), time.Now()
			p, err := vacuum.NewPlanner(ctx, store, vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true})
			if err != nil {
				b.Fatal(err)
			}
			plan, err := p.Plan(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if plan.NumFilesToDelete != t.Stale() {
				b.Fatalf("plan deletes %d files, want %d", plan.NumFilesToDelete, t.Stale())
			}
			c1, w1 := cpuTime(b), time.Now()
			r, err := insight.Inspect(ctx, store, insight.Options{RetainHours: &zero})
			if err != nil {
				b.Fatal(err)
			}
			if r.Reclaimable.Files != t.Stale() {
				b.Fatalf("inspect reclaims %d files, want %d", r.Reclaimable.Files, t.Stale())
			}
			c2, w2 := cpuTime(b), time.Now()
			dryCPU, inspCPU = dryCPU+c1-c0, inspCPU+c2-c1
			dryWall, inspWall = dryWall+w1.Sub(w0), inspWall+w2.Sub(w1)
		}
		n := float64(b.N)
		b.ReportMetric(dryCPU.Seconds()*1000/n, "dryrun-cpu-ms/op")
		b.ReportMetric(inspCPU.Seconds()*1000/n, "inspect-cpu-ms/op")
		b.ReportMetric(inspCPU.Seconds()/dryCPU.Seconds(), "cpu-ratio")
		b.ReportMetric(dryWall.Seconds()*1000/n, "dryrun-wall-ms/op")
		b.ReportMetric(inspWall.Seconds()*1000/n, "inspect-wall-ms/op")
		b.ReportMetric(inspWall.Seconds()/dryWall.Seconds(), "wall-ratio")
	})
}

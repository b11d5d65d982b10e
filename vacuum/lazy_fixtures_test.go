package vacuum_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// plainWalker hides the store's lazy walk: the planner then describes every entry.
type plainWalker struct{ storage.Store }

// On local disk the planner describes only the entries the log does not protect (a lazy
// walk); on every fixture table, at a cutoff that falls among its files' times, its plan is
// the one a full description of every entry gives, to each size and time.
func TestFixturesLazyListingOnLocalDisk(t *testing.T) {
	now := time.Now()
	for _, tbl := range fixtures.Tables(t) {
		if _, refused := refusedFixtures[tbl.Name]; refused {
			continue
		}
		t.Run(tbl.Name, func(t *testing.T) {
			dir := fixtures.Copy(t, tbl.Name, now.Add(-30*24*time.Hour))
			store, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, hours := range []float64{0, 24 * 30, 24 * 60} {
				opts := vacuum.Options{RetainHours: ptr(hours), DisableRetentionCheck: true, Now: now}
				plan := func(opts vacuum.Options) *vacuum.Plan {
					p, err := vacuum.NewPlanner(context.Background(), store, opts)
					if err != nil {
						t.Fatal(err)
					}
					plan, err := p.Plan(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					return plan
				}
				lazy := plan(opts)
				opts.Listing = plainWalker{store}
				full := plan(opts)
				if diff := cmp.Diff(full, lazy, cmp.AllowUnexported(vacuum.Plan{}, vacuum.File{}, vacuum.Dir{}), cmp.Transformer("files", func(l vacuum.FileList) []vacuum.File { return l.MustCollect() })); diff != "" {
					t.Fatalf("RETAIN %g HOURS: lazy plan differs (-full +lazy):\n%s", hours, diff)
				}
			}
		})
	}
}

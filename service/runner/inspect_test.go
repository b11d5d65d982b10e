package runner

import (
	"context"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/service/tables"
)

// TestPeriodicInspection: on an injected clock, Tick inspects each table whose inspectEvery
// has passed since its last inspection, never one whose policy says off, never one a run or
// undo holds, never one already being inspected, at most maxPeriodicInspections at once, and
// nothing once shutting down.
func TestPeriodicInspection(t *testing.T) {
	f := newFixture(t, `tables:
  - {id: a, path: TABLES/a}
  - {id: never, path: TABLES/never, policy: {inspectEvery: off}}
  - {id: often, path: TABLES/often, policy: {inspectEvery: 6h}}
`)
	ctx := context.Background()
	count := func(id string) int {
		ins, err := f.db.Inspections(ctx, id, time.Time{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return len(ins)
	}
	tick := func(at time.Duration) {
		f.clock.set(t0.Add(at))
		f.r.Tick(ctx)
		f.r.Wait()
	}
	check := func(when string, want map[string]int) {
		t.Helper()
		for id, n := range want {
			if got := count(id); got != n {
				t.Errorf("%s: %s has %d inspections, want %d", when, id, got, n)
			}
		}
	}
	tick(0) // none kept yet: due at once
	check("first tick", map[string]int{"a": 1, "never": 0, "often": 1})
	tick(time.Minute)
	check("a minute later", map[string]int{"a": 1, "never": 0, "often": 1})
	tick(6*time.Hour - time.Second)
	check("just before 6h", map[string]int{"a": 1, "often": 1})
	tick(6 * time.Hour)
	check("at 6h", map[string]int{"a": 1, "never": 0, "often": 2})
	tick(24 * time.Hour)
	check("at 24h", map[string]int{"a": 2, "never": 0, "often": 3})

	// A table a run or undo holds is skipped, and inspected once it is free.
	if !f.r.hold("a", "undo of test") {
		t.Fatal("could not hold a")
	}
	tick(48 * time.Hour)
	check("a held", map[string]int{"a": 2, "often": 4})
	f.r.release("a")
	tick(48*time.Hour + time.Minute)
	check("a released", map[string]int{"a": 3, "often": 4})

	// A restarted service reads the last inspection from the state database: nothing is due.
	g := f.runner(t)
	g.Tick(ctx)
	g.Wait()
	check("after a restart", map[string]int{"a": 3, "often": 4})
	g.Shutdown(ctx)

	// Inspections that have not finished: neither a second of one table nor a third at once.
	gate := make(chan struct{})
	f.ts.SetOpenHook(func(ctx context.Context, tb *tables.Table) (*deltavacuum.Table, error) {
		<-gate
		return tb.Open(ctx)
	})
	inProgress := func() (int, map[string]string) {
		f.r.mu.Lock()
		defer f.r.mu.Unlock()
		cp := map[string]string{}
		for k, v := range f.r.upkeep.inspecting {
			cp[k] = v
		}
		return f.r.upkeep.periodic, cp
	}
	f.cfg.Tables[1].Policy.InspectEvery = 6 * time.Hour // never, now due too: three due
	f.clock.set(t0.Add(100 * time.Hour))
	f.r.Tick(ctx)
	f.r.Tick(ctx)
	if n, ins := inProgress(); n != maxPeriodicInspections || len(ins) != maxPeriodicInspections {
		t.Errorf("in progress: %d %v, want %d", n, ins, maxPeriodicInspections)
	}
	close(gate)
	f.r.Wait()
	if n, ins := inProgress(); n != 0 || len(ins) != 0 {
		t.Errorf("in progress after the wait: %d %v", n, ins)
	}
	f.r.Tick(ctx)
	f.r.Wait()
	check("the third, at the next tick", map[string]int{"a": 4, "never": 1, "often": 5})

	// Shutting down: no inspection starts, periodic or after a run.
	f.r.Shutdown(ctx)
	f.clock.set(t0.Add(200 * time.Hour))
	f.r.Tick(ctx)
	f.r.Wait()
	a, _ := f.ts.Lookup("a")
	if f.r.inspectLater(a, "after run x", false) {
		t.Error("an inspection started after Shutdown")
	}
	check("after shutdown", map[string]int{"a": 4, "never": 1, "often": 5})
}

package service

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/undo"
)

// operations returns the operations of the commits of the table at dir, in version order.
func operations(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "_delta_log", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	var out []string
	for _, p := range m {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			var a struct {
				CommitInfo *struct {
					Operation string `json:"operation"`
				} `json:"commitInfo"`
			}
			if json.Unmarshal([]byte(line), &a) == nil && a.CommitInfo != nil {
				out = append(out, a.CommitInfo.Operation)
			}
		}
	}
	return out
}

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSoak: 50 tables, each scheduled every minute, at most 8 runs at once, for 24 minutes
// of an injected clock ticked every 15 seconds (as serve ticks) without waiting for the runs,
// while a new untracked file lands in every table each minute. Then every table runs once
// more. Nothing is lost: every run ends COMPLETED, with its VACUUM START and END in the
// table's log and its run record COMPLETED, and every untracked file is deleted; no two runs
// of a table overlap (their STARTs and ENDs alternate in the log); the limit holds; and the
// heap after GC does not grow from the 8th to the 24th minute beyond a generous bound.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test")
	}
	const tables, limit, minutes = 50, 8, 24
	var yml strings.Builder
	fmt.Fprintf(&yml, "maxConcurrentRuns: %d\ntables:\n", limit)
	for i := 0; i < tables; i++ {
		fmt.Fprintf(&yml, "  - {id: t%02d, path: TABLES/t%02d, schedule: {cron: \"* * * * *\", timezone: UTC}}\n", i, i)
	}
	f := newFixture(t, yml.String(), nil, nil)
	ctx := context.Background()
	// The runs' clock stays behind the real one: the library stops a run whose clock leads
	// the store's.
	start := t0.Truncate(time.Minute).Add(-2 * time.Hour)
	f.clock.set(start)
	if err := f.srv.StartScheduler(ctx); err != nil {
		t.Fatal(err)
	}
	old := t0.Add(-10 * 24 * time.Hour)
	stray := func(minute int) {
		for i := 0; i < tables; i++ {
			p := filepath.Join(f.dir, fmt.Sprintf("t%02d", i), fmt.Sprintf("soak-%03d.parquet", minute))
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	maxBusy := 0
	tick := func(at time.Time) {
		f.clock.set(at)
		f.srv.Tick(ctx)
		f.srv.runner.mu.Lock()
		maxBusy = max(maxBusy, len(f.srv.runner.holds.busy))
		f.srv.runner.mu.Unlock()
	}
	heap := map[int]uint64{}
	for m := 1; m <= minutes; m++ {
		stray(m)
		for q := 0; q < 4; q++ {
			tick(start.Add(time.Duration(m)*time.Minute + time.Duration(q)*15*time.Second))
		}
		if m == 8 || m == 16 || m == 24 {
			f.srv.Wait()
			heap[m] = heapAfterGC()
		}
	}
	f.srv.Wait()
	drain := start.Add((minutes + 1) * time.Minute)
	for r := 0; r < tables/limit+2; r++ {
		tick(drain.Add(time.Duration(r) * time.Minute))
		f.srv.Wait()
	}
	if maxBusy > limit {
		t.Errorf("%d tables held at once, the limit is %d", maxBusy, limit)
	}
	runs, err := f.db.Runs(ctx, "", 100000)
	if err != nil {
		t.Fatal(err)
	}
	perTable := map[string]int{}
	ranAfterDrain := map[string]bool{}
	for _, r := range runs {
		if r.Status != "COMPLETED" {
			t.Errorf("run %s of %s: %s %s", r.ID, r.Table, r.Status, r.Error)
		}
		perTable[r.Table]++
		if !r.Started.Before(drain) {
			ranAfterDrain[r.Table] = true
		}
	}
	total := 0
	for i := 0; i < tables; i++ {
		id := fmt.Sprintf("t%02d", i)
		dir := filepath.Join(f.dir, id)
		total += perTable[id]
		if !ranAfterDrain[id] {
			t.Errorf("%s did not run after the last untracked file was written", id)
		}
		ops := operations(t, dir) // the table's first commit has no commitInfo
		if len(ops) != 2*perTable[id] {
			t.Errorf("%s: %d runs in the state, %d commits in the log", id, perTable[id], len(ops))
		}
		for k, op := range ops {
			want := "VACUUM START"
			if k%2 == 1 {
				want = "VACUUM END"
			}
			if op != want {
				t.Fatalf("%s: commit %d is %s, want %s: two runs overlap (%v)", id, k+1, op, want, ops)
			}
		}
		store, _ := local.New(dir)
		recs, err := undo.List(ctx, store)
		if err != nil || len(recs) != perTable[id] {
			t.Errorf("%s: %d run records (%v), %d runs", id, len(recs), err, perTable[id])
		}
		for _, r := range recs {
			if r.Status != undo.StatusCompleted {
				t.Errorf("%s: record %s is %s", id, r.ID, r.Status)
			}
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "soak-*.parquet")); len(m) != 0 {
			t.Errorf("%s: %d untracked files left", id, len(m))
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "_deltavacuum", "runs", "*.heartbeat.json")); len(m) != 0 {
			t.Errorf("%s: heartbeats left: %v", id, m)
		}
	}
	t.Logf("%d runs; most tables held at once %d; heap after GC: minute 8 %d KiB, 16 %d KiB, 24 %d KiB",
		total, maxBusy, heap[8]>>10, heap[16]>>10, heap[24]>>10)
	if total < minutes*limit/2 {
		t.Errorf("only %d runs in %d minutes with %d slots", total, minutes, limit)
	}
	// Flat: what the first 8 minutes left is allowed to double, with 16 MiB of slack for the
	// runtime's and the database's caches; growth with the number of runs would pass it.
	if heap[24] > 2*heap[8]+16<<20 {
		t.Errorf("heap grew from %d KiB (minute 8) to %d KiB (minute 24)", heap[8]>>10, heap[24]>>10)
	}
}

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

	"github.com/deltavacuum/deltavacuum/service/runner"

	"github.com/deltavacuum/deltavacuum/run"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage/local"
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
// while a new untracked file lands in every table each minute, and from minute 12 on, in two
// tables, twenty more a minute in a folder late=1/ (a writer failing more and more). Then every
// table runs once more. Nothing is lost: every run ends COMPLETED, with its VACUUM START and
// END in the table's log and its run record COMPLETED, and every untracked file is deleted;
// no two runs of a table overlap (their STARTs and ENDs alternate in the log); the limit
// holds; and the heap after GC does not grow from the 8th to the 24th minute beyond a generous
// bound. The writers' health: the runs of each table count, between them, every untracked file
// written to it, each run's count is in its run record, the webhook gets an untracked.grew
// event for exactly the runs that found more than the run before at twice its rate (and the two
// failing tables get one naming late=1), and the metrics show each table's last count.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test")
	}
	const tables, limit, minutes = 50, 8, 24
	hook := newHookServer(t)
	var yml strings.Builder
	fmt.Fprintf(&yml, "maxConcurrentRuns: %d\nwebhook: {url: '${HOOK_URL}'}\ntables:\n", limit)
	for i := 0; i < tables; i++ {
		fmt.Fprintf(&yml, "  - {id: t%02d, path: TABLES/t%02d, schedule: {cron: \"* * * * *\", timezone: UTC}}\n", i, i)
	}
	f := newFixture(t, yml.String(), map[string]string{"HOOK_URL": hook.URL}, nil)
	ctx := context.Background()
	// The runs' clock stays behind the real one: the library stops a run whose clock leads
	// the store's.
	start := t0.Truncate(time.Minute).Add(-2 * time.Hour)
	f.clock.set(start)
	if err := f.srv.StartScheduler(ctx); err != nil {
		t.Fatal(err)
	}
	old := t0.Add(-10 * 24 * time.Hour)
	failing := map[string]bool{"t05": true, "t30": true}
	written := map[string]int64{} // untracked files written, by table: makeTable's stray.parquet, then these
	for i := 0; i < tables; i++ {
		written[fmt.Sprintf("t%02d", i)] = 1
	}
	write := func(id, name string) {
		p := filepath.Join(f.dir, id, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		written[id]++
	}
	stray := func(minute int) {
		for i := 0; i < tables; i++ {
			id := fmt.Sprintf("t%02d", i)
			write(id, fmt.Sprintf("soak-%03d.parquet", minute))
			if failing[id] && minute >= 12 {
				for k := range 20 {
					write(id, fmt.Sprintf("late=1/part-%03d-%d.parquet", minute, k))
				}
			}
		}
	}
	maxBusy := 0
	tick := func(at time.Time) {
		f.clock.set(at)
		f.srv.Tick(ctx)
		maxBusy = max(maxBusy, len(f.srv.runner.Held()))
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
	runs := f.runs(t, "", 100000)
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
		recs, err := run.ListRecords(ctx, store)
		if err != nil || len(recs) != perTable[id] {
			t.Errorf("%s: %d run records (%v), %d runs", id, len(recs), err, perTable[id])
		}
		for _, r := range recs {
			if r.Status != run.StatusCompleted {
				t.Errorf("%s: record %s is %s", id, r.ID, r.Status)
			}
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "soak-*.parquet")); len(m) != 0 {
			t.Errorf("%s: %d untracked files left", id, len(m))
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "late=1", "*.parquet")); len(m) != 0 {
			t.Errorf("%s: %d untracked files left in late=1/", id, len(m))
		}
		var counted int64
		for _, r := range recs {
			if r.Untracked == nil {
				t.Errorf("%s: record %s counts no untracked files", id, r.ID)
				continue
			}
			counted += r.Untracked.Files
		}
		if counted != written[id] {
			t.Errorf("%s: the run records count %d untracked files, %d were written", id, counted, written[id])
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "_deltavacuum", "runs", "*.heartbeat.json")); len(m) != 0 {
			t.Errorf("%s: heartbeats left: %v", id, m)
		}
	}
	alerts := soakUntrackedAlerts(t, f, hook, runs, failing)
	t.Logf("%d runs; most tables held at once %d; %d untracked.grew alerts; heap after GC: minute 8 %d KiB, 16 %d KiB, 24 %d KiB",
		total, maxBusy, alerts, heap[8]>>10, heap[16]>>10, heap[24]>>10)
	if total < minutes*limit/2 {
		t.Errorf("only %d runs in %d minutes with %d slots", total, minutes, limit)
	}
	// Flat: what the first 8 minutes left is allowed to double, with 16 MiB of slack for the
	// runtime's and the database's caches; growth with the number of runs would pass it.
	if heap[24] > 2*heap[8]+16<<20 {
		t.Errorf("heap grew from %d KiB (minute 8) to %d KiB (minute 24)", heap[8]>>10, heap[24]>>10)
	}
}

// soakUntrackedAlerts checks the writers' health after the soak: an untracked.grew event for
// exactly the runs whose plan held more untracked files than the table's run before, and twice
// as many per second since it (by the run records the tables keep), each naming the folders and the
// run before; one for each
// failing table naming late=1 as its first folder; the metrics showing each table's last
// count. It returns the number of events.
func soakUntrackedAlerts(t *testing.T, f *fixture, hook *hookServer, runs []runner.RunDoc, failing map[string]bool) int {
	t.Helper()
	ctx := context.Background()
	f.srv.waitWebhooks()
	want := map[string]string{} // run id -> the run before, for the runs that found more
	last := map[string]int64{}  // table -> the untracked files of its last run
	byTable := map[string][]runner.RunDoc{}
	for _, r := range runs {
		byTable[r.Table] = append(byTable[r.Table], r)
	}
	for id, rs := range byTable {
		store, _ := local.New(filepath.Join(f.dir, id))
		sort.Slice(rs, func(i, j int) bool { return rs[i].Started.Before(rs[j].Started) })
		var n []int64 // the untracked files of each run, oldest first
		for i, r := range rs {
			rec, err := run.ReadRecord(ctx, store, r.RecordID)
			if err != nil || rec.Untracked == nil {
				t.Fatalf("%s: the record of run %s: %v", id, r.ID, err)
			}
			n = append(n, rec.Untracked.Files)
			// More files than the run before, and twice as many per second (with one run
			// before: twice as many).
			if i == 0 || n[i] <= n[i-1] {
				continue
			}
			rate, before := float64(n[i]), float64(n[i-1])
			if i >= 2 {
				rate /= rs[i].Started.Sub(rs[i-1].Started).Seconds()
				before /= rs[i-1].Started.Sub(rs[i-2].Started).Seconds()
			}
			if rate >= 2*before {
				want[r.ID] = rs[i-1].ID
			}
		}
		last[id] = n[len(n)-1]
	}
	got := map[string]string{}
	grewIn := map[string]bool{} // failing tables with an alert naming late=1 first
	for _, b := range hook.posts() {
		var ev UntrackedGrewEvent
		if err := json.Unmarshal(b, &ev); err != nil || ev.Event != "untracked.grew" {
			t.Errorf("webhook post %s (%v)", b, err)
			continue
		}
		got[ev.Run] = ev.PreviousRun
		if ev.Untracked.Files <= ev.Previous.Files || len(ev.Folders) == 0 || !strings.Contains(ev.Text, ev.Table) {
			t.Errorf("event %+v", ev)
		}
		if failing[ev.Table] && ev.Folders[0].Folder == "late=1" && strings.Contains(ev.Text, "late=1") {
			grewIn[ev.Table] = true
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("untracked.grew events by run: the run before (-the records +the webhook):\n%s", diff)
	}
	for id := range failing {
		if !grewIn[id] {
			t.Errorf("%s: no untracked.grew event names late=1", id)
		}
	}
	_, m := f.do(t, "GET", "/metrics", "")
	for id, n := range last {
		if line := fmt.Sprintf("deltavacuum_serve_untracked_files{table=%q} %d\n", id, n); !strings.Contains(m["text"].(string), line) {
			t.Errorf("metrics lack %q", line)
		}
	}
	return len(got)
}

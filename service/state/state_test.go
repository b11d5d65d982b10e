package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func open(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var t0 = time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)

func TestRunLifecycle(t *testing.T) {
	ctx := context.Background()
	db := open(t, t.TempDir())
	r := Run{ID: "r1", Table: "sales", Trigger: "api", Mode: "FULL", Started: t0}
	if err := db.StartRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	// One RUNNING run per table, held by the database itself.
	if err := db.StartRun(ctx, Run{ID: "r2", Table: "sales", Trigger: "schedule", Mode: "LITE", Started: t0}); !errors.Is(err, ErrTableBusy) {
		t.Errorf("second run on a busy table: got %v, want ErrTableBusy", err)
	}
	if err := db.StartRun(ctx, Run{ID: "r3", Table: "orders", Trigger: "schedule", Mode: "LITE", Started: t0.Add(time.Second)}); err != nil {
		t.Errorf("a run on another table: %v", err)
	}
	if err := db.StartRun(ctx, Run{ID: "r1", Table: "other", Started: t0}); err == nil {
		t.Error("a run id used twice")
	}
	got, err := db.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := &Run{ID: "r1", Table: "sales", Trigger: "api", Mode: "FULL", Status: StatusRunning, Started: t0, Figures: json.RawMessage("{}")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("running run (-want +got):\n%s", diff)
	}

	if err := db.EndRun(ctx, "r1", StatusCompleted, t0.Add(time.Minute), nil, "", "boom"); err == nil {
		t.Error("COMPLETED with an error accepted")
	}
	if err := db.EndRun(ctx, "r1", StatusFailed, t0.Add(time.Minute), nil, "", ""); err == nil {
		t.Error("FAILED without its error accepted")
	}
	if err := db.EndRun(ctx, "r1", "CANCELLED", t0.Add(time.Minute), nil, "", "x"); err == nil {
		t.Error("an unknown status accepted")
	}
	if err := db.EndRun(ctx, "r1", StatusCompleted, t0.Add(time.Minute), json.RawMessage("{"), "", ""); err == nil {
		t.Error("figures that are not JSON accepted")
	}
	figs := json.RawMessage(`{"numDeletedFiles":3}`)
	if err := db.EndRun(ctx, "r1", StatusCompleted, t0.Add(time.Minute), figs, "20261201T020000Z-1a2b3c4d", ""); err != nil {
		t.Fatal(err)
	}
	if err := db.EndRun(ctx, "r1", StatusFailed, t0.Add(2*time.Minute), nil, "", "late"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("ending twice: got %v, want ErrNotRunning", err)
	}
	if err := db.EndRun(ctx, "nope", StatusFailed, t0, nil, "", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ending an unknown run: got %v, want ErrNotFound", err)
	}
	got, _ = db.Run(ctx, "r1")
	end := t0.Add(time.Minute)
	want = &Run{ID: "r1", Table: "sales", Trigger: "api", Mode: "FULL", Status: StatusCompleted, Started: t0, Ended: &end, Figures: figs, RecordID: "20261201T020000Z-1a2b3c4d"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ended run (-want +got):\n%s", diff)
	}
	// The table is free again.
	if err := db.StartRun(ctx, Run{ID: "r4", Table: "sales", Trigger: "schedule", Mode: "LITE", Started: t0.Add(time.Hour)}); err != nil {
		t.Errorf("after the end: %v", err)
	}
	runs, err := db.Runs(ctx, "sales", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != "r4" || runs[1].ID != "r1" {
		t.Errorf("got %+v, want r4 then r1", runs)
	}
	if all, _ := db.Runs(ctx, "", 2); len(all) != 2 || all[0].ID != "r4" {
		t.Errorf("every table, limit 2: got %+v", all)
	}
	if _, err := db.Run(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("got %v, want ErrNotFound", err)
	}
}

// TestReopen: the state survives a restart, migrations run once, and runs a stopped process
// left RUNNING end FAILED, never COMPLETED.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "new", "data")
	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.StartRun(ctx, Run{ID: "r1", Table: "sales", Trigger: "schedule", Mode: "FULL", Started: t0}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetHandled(ctx, "sales", t0); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = open(t, dir)
	ids, err := db.FailInterrupted(ctx, t0.Add(time.Hour))
	if err != nil || len(ids) != 1 || ids[0] != "r1" {
		t.Fatalf("got %v, %v", ids, err)
	}
	r, _ := db.Run(ctx, "r1")
	if r.Status != StatusFailed || r.Error == "" || r.Ended == nil {
		t.Errorf("got %+v, want FAILED with its reason", r)
	}
	sch, err := db.Schedules(ctx)
	if err != nil || !sch["sales"].Handled.Equal(t0) {
		t.Errorf("got %v, %v", sch, err)
	}
	var v int
	db.db.QueryRow("PRAGMA user_version").Scan(&v)
	if v != SchemaVersion() {
		t.Errorf("schema version %d, want %d", v, SchemaVersion())
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	db := open(t, dir)
	if _, err := db.db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(context.Background(), dir); err == nil {
		t.Error("a database of a newer schema opened")
	}
}

func TestSchedules(t *testing.T) {
	ctx := context.Background()
	db := open(t, t.TempDir())
	if err := db.SetLastFull(ctx, "a", t0); err != nil {
		t.Fatal(err)
	}
	if err := db.SetHandled(ctx, "a", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.SetHandled(ctx, "b", t0); err != nil {
		t.Fatal(err)
	}
	got, err := db.Schedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ScheduleState{"a": {Handled: t0.Add(time.Hour), LastFull: t0}, "b": {Handled: t0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

func TestInspections(t *testing.T) {
	ctx := context.Background()
	db := open(t, t.TempDir())
	for i := 0; i < 5; i++ {
		in := Inspection{Table: "a", At: t0.Add(time.Duration(i) * time.Hour), Version: int64(i), Figures: json.RawMessage(`{"reclaimableBytes":` + string(rune('0'+i)) + `}`)}
		if err := db.AddInspection(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AddInspection(ctx, Inspection{Table: "b", At: t0, Figures: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := db.AddInspection(ctx, Inspection{Table: "a", At: t0, Figures: json.RawMessage(`nope`)}); err == nil {
		t.Error("figures that are not JSON accepted")
	}
	got, err := db.Inspections(ctx, "a", t0.Add(time.Hour), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Version != 3 || got[1].Version != 4 || !got[1].At.Equal(t0.Add(4*time.Hour)) {
		t.Errorf("got %+v, want versions 3 and 4, oldest first", got)
	}
	if got, _ := db.Inspections(ctx, "a", time.Time{}, 100); len(got) != 5 {
		t.Errorf("got %d, want 5", len(got))
	}
}

// TestConcurrentStarts: many goroutines starting a run on one table: exactly one wins.
func TestConcurrentStarts(t *testing.T) {
	ctx := context.Background()
	db := open(t, t.TempDir())
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			err := db.StartRun(ctx, Run{ID: string(rune('a' + i)), Table: "sales", Trigger: "api", Mode: "FULL", Started: t0})
			if err == nil {
				mu.Lock()
				won++
				mu.Unlock()
			} else if !errors.Is(err, ErrTableBusy) {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	if won != 1 {
		t.Errorf("%d runs started on one table, want 1", won)
	}
}

// TestOneProcessPerDataDir: the database is held exclusively: a second service on the same
// data directory (which would end the first one's runs FAILED) cannot open it.
func TestOneProcessPerDataDir(t *testing.T) {
	dir := t.TempDir()
	first := open(t, dir)
	if _, err := first.Schedules(context.Background()); err != nil {
		t.Fatal(err)
	}
	if second, err := Open(context.Background(), dir); err == nil {
		second.Close()
		t.Fatal("a second process opened the state database")
	} else if !strings.Contains(err.Error(), "in use by another process") {
		t.Errorf("got %v, want it to say the directory is in use", err)
	}
	first.Close()
	if second, err := Open(context.Background(), dir); err != nil {
		t.Errorf("after the first closed: %v", err)
	} else {
		second.Close()
	}
}

// TestRunsPage: the runs of every table (or one), newest first, a page at a time, with the
// count of all of them.
func TestRunsPage(t *testing.T) {
	ctx := context.Background()
	db := open(t, t.TempDir())
	for i := range 7 {
		table := []string{"a", "b"}[i%2]
		id := fmt.Sprintf("r%d", i)
		if err := db.StartRun(ctx, Run{ID: id, Table: table, Trigger: "api", Mode: "FULL", Started: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		if err := db.EndRun(ctx, id, StatusCompleted, t0.Add(time.Duration(i)*time.Minute+time.Second), nil, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(runs []Run) (out []string) {
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	for _, c := range []struct {
		table         string
		offset, limit int
		want          []string
		total         int
	}{
		{"", 0, 3, []string{"r6", "r5", "r4"}, 7},
		{"", 3, 3, []string{"r3", "r2", "r1"}, 7},
		{"", 6, 3, []string{"r0"}, 7},
		{"", 9, 3, nil, 7},
		{"a", 0, 10, []string{"r6", "r4", "r2", "r0"}, 4},
		{"b", 1, 1, []string{"r3"}, 3},
		{"nope", 0, 10, nil, 0},
	} {
		runs, total, err := db.RunsPage(ctx, c.table, c.offset, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(runs); total != c.total || !cmp.Equal(got, c.want) || runs == nil {
			t.Errorf("RunsPage(%q, %d, %d) = %v (%d in all), want %v (%d)", c.table, c.offset, c.limit, got, total, c.want, c.total)
		}
	}
}

package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/vacuum"
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
	h := 48.0
	r := Run{ID: "r1", Table: "sales", Requester: ByPage, Mode: "FULL", Asked: t0, RetainHours: &h, OneOffFrom: "preview", PlanDigest: "sha256:abc"}
	if err := db.AddRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := db.AddRun(ctx, Run{ID: "r1", Table: "other", Requester: ByAPI, Mode: "FULL", Asked: t0}); err == nil {
		t.Error("a run id used twice")
	}
	// A second run of one table is the runner's to refuse (it holds the table), not the
	// database's: the database keeps what was asked.
	if err := db.AddRun(ctx, Run{ID: "r2", Table: "sales", Requester: BySchedule, Mode: "LITE", Asked: t0.Add(time.Second)}); err != nil {
		t.Errorf("a second run of the table: %v", err)
	}
	got, err := db.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&r, got); diff != "" {
		t.Errorf("asked run (-want +got):\n%s", diff)
	}
	if got.Trigger() != ByAPI {
		t.Errorf("trigger of a run the page asked for: %q, want api", got.Trigger())
	}

	if err := db.SetCancelled(ctx, "r1", CancelledWhy); err != nil {
		t.Fatal(err)
	}
	if err := db.SetCancelled(ctx, "r1", "cancelled: the service is shutting down"); err != nil {
		t.Fatal(err)
	}
	if err := db.SetCancelled(ctx, "nope", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("cancelling an unknown run: got %v, want ErrNotFound", err)
	}
	if err := db.SetRecord(ctx, "r1", "0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21"); err != nil {
		t.Fatal(err)
	}
	if err := db.SetRecord(ctx, "r1", "0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21"); err != nil {
		t.Errorf("linking a run to its record again: %v", err)
	}
	if err := db.SetRecord(ctx, "r1", "0196f5a2-3c41-7d2e-9b1a-000000000000"); !errors.Is(err, ErrEnded) {
		t.Errorf("linking a run to another record: got %v, want ErrEnded", err)
	}
	if err := db.Refuse(ctx, "r1", t0.Add(time.Minute), "late", false); !errors.Is(err, ErrEnded) {
		t.Errorf("refusing a run linked to its record: got %v, want ErrEnded", err)
	}
	got, _ = db.Run(ctx, "r1")
	want := r
	want.RecordID, want.Cancelled = "0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21", CancelledWhy
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("linked run (-want +got):\n%s", diff)
	}

	if err := db.Refuse(ctx, "r2", t0.Add(time.Minute), "", false); err == nil {
		t.Error("a refusal without its reason accepted")
	}
	if err := db.Refuse(ctx, "r2", time.Time{}, "why", false); err == nil {
		t.Error("a refusal without its time accepted")
	}
	if err := db.Refuse(ctx, "r2", t0.Add(time.Minute), "the plan changed", true); err != nil {
		t.Fatal(err)
	}
	if err := db.Refuse(ctx, "r2", t0.Add(2*time.Minute), "again", false); !errors.Is(err, ErrEnded) {
		t.Errorf("refusing twice: got %v, want ErrEnded", err)
	}
	if err := db.SetRecord(ctx, "r2", "0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21"); !errors.Is(err, ErrEnded) {
		t.Errorf("linking a refused run to a record: got %v, want ErrEnded", err)
	}
	if err := db.Refuse(ctx, "nope", t0, "x", false); !errors.Is(err, ErrNotFound) {
		t.Errorf("refusing an unknown run: got %v, want ErrNotFound", err)
	}
	got, _ = db.Run(ctx, "r2")
	at := t0.Add(time.Minute)
	if diff := cmp.Diff(&Run{ID: "r2", Table: "sales", Requester: BySchedule, Mode: "LITE", Asked: t0.Add(time.Second),
		Refusal: "the plan changed", Refused: &at, PlanChanged: true}, got); diff != "" {
		t.Errorf("refused run (-want +got):\n%s", diff)
	}
	if got.Trigger() != BySchedule {
		t.Errorf("trigger of a scheduled run: %q", got.Trigger())
	}

	runs, err := db.Runs(ctx, "sales", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != "r2" || runs[1].ID != "r1" {
		t.Errorf("got %+v, want r2 then r1", runs)
	}
	if all, _ := db.Runs(ctx, "", 1); len(all) != 1 || all[0].ID != "r2" {
		t.Errorf("every table, limit 1: got %+v", all)
	}
	if _, err := db.Run(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("got %v, want ErrNotFound", err)
	}
}

// CancelledWhy is a cancel's reason in these tests.
const CancelledWhy = "cancelled through the API"

// TestAddRunHostile: a run the service could not have asked for is refused, and nothing is kept.
func TestAddRunHostile(t *testing.T) {
	ctx := context.Background()
	db := open(t, t.TempDir())
	nan, neg, inf := math.NaN(), -1.0, math.Inf(1)
	at := t0
	for _, r := range []Run{
		{Table: "a", Requester: ByAPI, Mode: "FULL", Asked: t0},
		{ID: "x", Requester: ByAPI, Mode: "FULL", Asked: t0},
		{ID: "x", Table: "a", Requester: ByAPI, Mode: "FULL"},
		{ID: "x", Table: "a", Requester: "", Mode: "FULL", Asked: t0},
		{ID: "x", Table: "a", Requester: "root", Mode: "FULL", Asked: t0},
		{ID: "x", Table: "a", Requester: "API", Mode: "FULL", Asked: t0},
		{ID: "x", Table: "a", Requester: ByAPI, Mode: "full", Asked: t0},
		{ID: "x", Table: "a", Requester: ByAPI, Mode: "", Asked: t0},
		{ID: "x", Table: "a", Requester: ByAPI, Mode: "FULL", Asked: t0, RetainHours: &nan},
		{ID: "x", Table: "a", Requester: ByAPI, Mode: "FULL", Asked: t0, RetainHours: &neg},
		{ID: "x", Table: "a", Requester: ByAPI, Mode: "FULL", Asked: t0, RetainHours: &inf},
		{ID: "x", Table: "a", Requester: ByAPI, Mode: "FULL", Asked: t0, RecordID: "r"},
		{ID: "x", Table: "a", Requester: ByAPI, Mode: "FULL", Asked: t0, Cancelled: "why"},
		{ID: "x", Table: "a", Requester: ByAPI, Mode: "FULL", Asked: t0, Refusal: "why"},
		{ID: "x", Table: "a", Requester: ByAPI, Mode: "FULL", Asked: t0, Refused: &at},
		{ID: "x", Table: "a", Requester: ByAPI, Mode: "FULL", Asked: t0, PlanChanged: true},
	} {
		if err := db.AddRun(ctx, r); err == nil {
			t.Errorf("AddRun(%+v) accepted", r)
		}
	}
	if runs, err := db.Runs(ctx, "", 10); err != nil || len(runs) != 0 {
		t.Errorf("kept %v (%v)", runs, err)
	}
	if err := db.AddRun(ctx, Run{ID: "x", Table: "a", Requester: ByFabric, Mode: "LITE", Asked: t0, Refusal: "refused", Refused: &at}); err != nil {
		t.Errorf("a run refused at its start: %v", err)
	}
}

// TestAddRunRetentionByTheLibrarysRule: a one-off retention is checked by the one rule RETAIN n
// HOURS and the CLI's --retain-hours follow (vacuum.RetentionOf): a hundred years is the most,
// and the refusals are the library's.
func TestAddRunRetentionByTheLibrarysRule(t *testing.T) {
	ctx := context.Background()
	db := open(t, t.TempDir())
	most, over, neg := float64(vacuum.MaxRetentionHours), float64(vacuum.MaxRetentionHours)+1, -0.5
	for _, c := range []struct {
		hours float64
		want  error
	}{{over, vacuum.ErrRetentionTooLarge}, {neg, vacuum.ErrNegativeRetention}, {math.NaN(), vacuum.ErrRetentionNotANumber}} {
		h := c.hours
		if err := db.AddRun(ctx, Run{ID: "x", Table: "a", Requester: ByAPI, Mode: "FULL", Asked: t0, RetainHours: &h}); !errors.Is(err, c.want) {
			t.Errorf("retention %v hours: %v, want %v", c.hours, err, c.want)
		}
	}
	if err := db.AddRun(ctx, Run{ID: "x", Table: "a", Requester: ByAPI, Mode: "FULL", Asked: t0, RetainHours: &most}); err != nil {
		t.Errorf("a hundred years: %v", err)
	}
}

// TestReopen: the state survives a restart, and migrations run once.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "new", "data")
	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AddRun(ctx, Run{ID: "r1", Table: "sales", Requester: BySchedule, Mode: "FULL", Asked: t0}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetHandled(ctx, "sales", t0); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = open(t, dir)
	if r, err := db.Run(ctx, "r1"); err != nil || r.Requester != BySchedule || !r.Asked.Equal(t0) {
		t.Errorf("got %+v, %v", r, err)
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

// TestConcurrentAdds: many goroutines adding a run of one id: exactly one is kept.
func TestConcurrentAdds(t *testing.T) {
	ctx := context.Background()
	db := open(t, t.TempDir())
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := db.AddRun(ctx, Run{ID: "r", Table: string(rune('a' + i)), Requester: ByAPI, Mode: "FULL", Asked: t0}); err == nil {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	if won != 1 {
		t.Errorf("%d runs of one id kept, want 1", won)
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
		if err := db.AddRun(ctx, Run{ID: id, Table: table, Requester: ByAPI, Mode: "FULL", Asked: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
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

package service

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"
)

// TestServiceWeek: a week of the service's scheduler loop on an injected clock, ticked every
// 15 minutes as serve ticks (every 15 s) would see it, with real runs on local tables, and a
// restart after a downtime of 3½ hours on the third night. Runs start only inside their
// windows (one window crosses midnight) and at or after their fire; a table never has two
// runs at once (the VACUUM STARTs and ENDs of its log alternate); after the downtime, the
// missed fire whose window is still open runs once at the restart, the missed fires of a table
// without a window merge into one run, and a fire whose window closed during the downtime is
// lost (docs/service.md, Misfires).
func TestServiceWeek(t *testing.T) {
	f := newFixture(t, `maxConcurrentRuns: 2
tables:
  - {id: night, path: TABLES/night, schedule: {cron: "0 2 * * *", timezone: UTC, window: {start: "01:00", end: "05:00"}}}
  - {id: late, path: TABLES/late, schedule: {cron: "30 23 * * *", timezone: UTC, window: {start: "22:00", end: "02:00"}}}
  - {id: early, path: TABLES/early, schedule: {cron: "15 0 * * *", timezone: UTC, window: {start: "00:00", end: "01:00"}}}
  - {id: hourly, path: TABLES/hourly, schedule: {cron: "0 1-3 * * *", timezone: UTC}}
`, nil, nil)
	ctx := context.Background()
	base := t0.Truncate(24 * time.Hour).Add(-8 * 24 * time.Hour) // midnight; the clock stays behind the store's
	f.clock.set(base)
	srv := f.srv
	if err := srv.StartScheduler(ctx); err != nil {
		t.Fatal(err)
	}
	downFrom, downTo := base.Add(2*24*time.Hour+10*time.Minute), base.Add(2*24*time.Hour+3*time.Hour+40*time.Minute)
	restarted := false
	for at := base.Add(15 * time.Minute); !at.After(base.Add(7 * 24 * time.Hour)); at = at.Add(15 * time.Minute) {
		if at.After(downFrom) && at.Before(downTo) {
			continue
		}
		if !at.Before(downTo) && !restarted {
			// The service was stopped at downFrom and starts again now, on the same state.
			srv.Shutdown(ctx)
			f.clock.set(downTo)
			var err error
			srv, err = New(Options{Config: f.srv.cfg, State: f.db, Now: f.clock.now, Getenv: func(string) string { return "" },
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Shutdown(context.Background()) })
			if err := srv.StartScheduler(ctx); err != nil {
				t.Fatal(err)
			}
			srv.Tick(ctx)
			srv.Wait()
			restarted = true
		}
		f.clock.set(at)
		srv.Tick(ctx)
		srv.Wait()
	}
	runs := f.runs(t, "", 10000)
	count := map[string]int{}
	var nightStarts []time.Time
	for _, r := range runs {
		if r.Status != "COMPLETED" {
			t.Errorf("run %+v", r)
		}
		count[r.Table]++
		h := r.Started.UTC().Hour()*60 + r.Started.UTC().Minute()
		inside := map[string]bool{"night": h >= 60 && h < 300, "late": h >= 22*60 || h < 120, "early": h < 60, "hourly": true}
		if !inside[r.Table] {
			t.Errorf("%s started at %s, outside its window", r.Table, r.Started.UTC().Format("Mon 15:04"))
		}
		if r.Table == "night" {
			nightStarts = append(nightStarts, r.Started.UTC())
		}
	}
	// night: 7 fires; the third night's 02:00 was missed and runs at the restart (03:40,
	// inside 01:00-05:00). early: its third-night fire (00:15) fell in the downtime, and its
	// window (00:00-01:00) closed before the restart: lost. hourly (01:00, 02:00 and 03:00
	// without a window): 21 fires, the third night's three merged into one run at the restart.
	want := map[string]int{"night": 7, "late": 7, "early": 6, "hourly": 19}
	for id, n := range want {
		if count[id] != n {
			t.Errorf("%s ran %d times, want %d", id, count[id], n)
		}
	}
	catchUp := false
	for _, s := range nightStarts {
		catchUp = catchUp || s.Equal(downTo)
	}
	if !catchUp {
		t.Errorf("no catch-up run of night at the restart (%s): %v", downTo.Format("Mon 15:04"), nightStarts)
	}
	for id := range want {
		ops := operations(t, filepath.Join(f.dir, id))
		if len(ops) != 2*count[id] {
			t.Errorf("%s: %d commits for %d runs", id, len(ops), count[id])
		}
		for k, op := range ops {
			if (k%2 == 0) != (op == "VACUUM START") {
				t.Fatalf("%s: commit %d is %s: two runs overlap", id, k+1, op)
			}
		}
	}
}

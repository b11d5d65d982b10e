package runner

import (
	"context"
	"time"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/tables"
)

// The writers' health (issue 29, item 4): files no commit names are what failed or unfinished
// writers leave. Each run counts those of its plan (run.UntrackedOf: in its run record); the
// service exposes the last count of each table as metrics and tells the notifier (the webhook's
// untracked.grew) when a run finds more of them than the table's run before (untrackedGrew).

// previousRuns bounds how far back the runs before are looked for (past runs that did not list
// the table: LITE, or refused before planning).
const previousRuns = 50

// counted is a run that counted its untracked files.
type counted struct {
	id      string
	started time.Time
	u       *run.Untracked
}

// noteUntracked records the untracked files u of run id of t (nil: the run did not list the
// table) and alerts when they grew.
func (r *Runner) noteUntracked(ctx context.Context, t *tables.Table, id string, u *run.Untracked) {
	if u == nil {
		return
	}
	r.m.untrackedFiles.WithLabelValues(t.Cfg.ID).Set(float64(u.Files))
	r.m.untrackedBytes.WithLabelValues(t.Cfg.ID).Set(float64(u.Bytes))
	cur, before, err := r.countedRuns(ctx, t.Cfg.ID, id)
	if err != nil {
		r.Log.Warn("reading the runs before, for their untracked files", "run", id, "table", t.Cfg.ID, "error", err.Error())
		return
	}
	cur.u = u
	if !untrackedGrew(cur, before) {
		return
	}
	prev := before[0]
	r.m.untrackedGrew.WithLabelValues(t.Cfg.ID).Inc()
	r.Log.Warn("untracked files grew", "run", id, "table", t.Cfg.ID, "files", u.Files, "previous", prev.u.Files, "previousRun", prev.id)
	if r.notify != nil {
		r.notify.UntrackedGrew(r.life.base, UntrackedGrowth{Table: t.Cfg, Run: id, PreviousRun: prev.id, Untracked: *u, Previous: *prev.u})
	}
}

// growthFactor is how many times the rate of the run before a run's untracked files must be
// for an alert: steady failures vary from run to run, a writer that starts failing more
// multiplies them.
const growthFactor = 2

// untrackedGrew is the alert's rule: run cur's plan holds more untracked files than that of
// the run before it (before, newest first), and at least growthFactor times as many per second
// since that run as that run held per second since its own run before. A run's plan holds the
// untracked files that became older than the cutoff since the run before (which deleted the
// older ones), so a run after a longer gap finds more of them at the same rate of failed
// writes: that is no alert. With one run before only, the spans are taken as equal: at least
// growthFactor times as many files (so the first untracked files after a run that found none
// are one).
func untrackedGrew(cur counted, before []counted) bool {
	if len(before) == 0 || cur.u.Files <= before[0].u.Files {
		return false
	}
	prev := before[0]
	span, prevSpan := cur.started.Sub(prev.started), time.Duration(0)
	if len(before) > 1 {
		prevSpan = prev.started.Sub(before[1].started)
	}
	if span <= 0 || prevSpan <= 0 {
		span, prevSpan = 1, 1
	}
	return float64(cur.u.Files)*prevSpan.Seconds() >= growthFactor*float64(prev.u.Files)*span.Seconds()
}

// countedRuns are run id of table and the two newest runs before it that counted their
// untracked files (their run records say how many), newest first.
func (r *Runner) countedRuns(ctx context.Context, table, id string) (counted, []counted, error) {
	runs, err := r.st.Runs(ctx, table, previousRuns)
	if err != nil {
		return counted{}, nil, err
	}
	var cur counted
	var before []counted
	for _, sr := range runs { // newest first: those after id's are before it
		if sr.ID == id {
			cur = counted{id: id, started: sr.Asked}
			continue
		}
		if cur.id == "" || sr.Refusal != "" {
			continue
		}
		sum, err := r.summary(ctx, sr)
		if err != nil || sum.Err != "" || sum.Untracked == nil {
			continue
		}
		if before = append(before, counted{id: sr.ID, started: sr.Asked, u: sum.Untracked}); len(before) == 2 {
			break
		}
	}
	return cur, before, nil
}

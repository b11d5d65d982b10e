package service

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/deltavacuum/deltavacuum/run"
	"strings"
	"time"
)

// The writers' health (issue 29, item 4): files no commit names are what failed or unfinished
// writers leave. Each run counts those of its plan (run.UntrackedOf: in its run record and in
// its figures here); the service exposes the last count of each table as metrics and posts
// untracked.grew to the webhook when a run finds more of them than the table's run before
// (untrackedGrew), naming the folders where they are.

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
func (r *runner) noteUntracked(ctx context.Context, t *table, id string, u *run.Untracked) {
	if u == nil {
		return
	}
	r.m.untrackedFiles.WithLabelValues(t.cfg.ID).Set(float64(u.Files))
	r.m.untrackedBytes.WithLabelValues(t.cfg.ID).Set(float64(u.Bytes))
	cur, before, err := r.countedRuns(ctx, t.cfg.ID, id)
	if err != nil {
		r.log.Warn("reading the runs before, for their untracked files", "run", id, "table", t.cfg.ID, "error", err.Error())
		return
	}
	cur.u = u
	if !untrackedGrew(cur, before) {
		return
	}
	prev := before[0]
	ev := untrackedGrewEvent(t, id, prev.id, *u, *prev.u)
	r.m.untrackedGrew.WithLabelValues(t.cfg.ID).Inc()
	r.log.Warn("untracked files grew", "run", id, "table", t.cfg.ID, "files", u.Files, "previous", prev.u.Files, "previousRun", prev.id)
	if r.hook != nil {
		r.hook.untrackedGrew(r.life.base, ev)
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
// untracked files, newest first.
func (r *runner) countedRuns(ctx context.Context, table, id string) (counted, []counted, error) {
	runs, err := r.st.Runs(ctx, table, previousRuns)
	if err != nil {
		return counted{}, nil, err
	}
	var cur counted
	var before []counted
	for _, sr := range runs { // newest first: those after id's are before it
		if sr.ID == id {
			cur = counted{id: id, started: sr.Started}
			continue
		}
		var f Figures
		if cur.id == "" || json.Unmarshal(sr.Figures, &f) != nil || f.Untracked == nil {
			continue
		}
		if before = append(before, counted{id: sr.ID, started: sr.Started, u: f.Untracked}); len(before) == 2 {
			break
		}
	}
	return cur, before, nil
}

// untrackedGrewEvent is the webhook's body for run id of t, whose untracked files u are more
// than prev, those of run prevID.
func untrackedGrewEvent(t *table, id, prevID string, u, prev run.Untracked) UntrackedGrewEvent {
	before := map[string]int64{}
	for _, f := range prev.Folders {
		before[f.Folder] = f.Files
	}
	ev := UntrackedGrewEvent{Event: "untracked.grew", Table: t.cfg.ID, Location: t.cfg.Path, Run: id, PreviousRun: prevID,
		Untracked: u, Previous: prev, Folders: []UntrackedFolder{}}
	var where []string
	for _, f := range u.Folders {
		ev.Folders = append(ev.Folders, UntrackedFolder{FolderCount: f, PreviousFiles: before[f.Folder]})
		name := f.Folder
		if name == "" {
			name = "(table root)"
		}
		where = append(where, fmt.Sprintf("%s %d", name, f.Files))
	}
	ev.Text = fmt.Sprintf("deltavacuum serve: table %s: run %s found %d untracked files (%s), %d more than run %s (%d): failed or unfinished writes leave them. Most in: %s",
		t.cfg.ID, id, u.Files, humanBytes(u.Bytes), u.Files-prev.Files, prevID, prev.Files, strings.Join(where, ", "))
	return ev
}

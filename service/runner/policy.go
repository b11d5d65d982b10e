package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/schedule"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/session"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// retainHours is the retention of a run of t: the policy's, but never shorter than a
// delta.deletedFileRetentionDuration the table sets itself; nil (no policy retention) is the
// table's own. A policy shorter than the table's default (not set) retention is passed as
// it is: the library's safety check refuses it unless the policy turned the check off.
func retainHours(snap *deltalog.Snapshot, p config.Policy) (*float64, error) {
	if !p.Retention.Set {
		return nil, nil
	}
	return vacuum.PolicyRetainHours(snap, &p.Retention.Hours)
}

// oneOffHours checks a one-off retention (a preview's retentionHours and the run of its plan, a
// Fabric job's retentionPeriod) before anything runs, by the one rule (vacuum.OneOffRetainHours:
// RETAIN's, never below the table's own retention, the safety check unless the policy turned it
// off). Refusals are ErrInvalid and name no field: the caller says which of its own it was.
func oneOffHours(t *tables.Table, snap *deltalog.Snapshot, h float64) (*float64, error) {
	hours, err := vacuum.OneOffRetainHours(snap, h, !t.Cfg.Policy.RetentionCheck)
	var re *vacuum.RetentionError
	if errors.As(err, &re) {
		err = fmt.Errorf("%w\n(In this service the table's policy turns the check off: retentionCheck: disabled.)", err)
	}
	if err != nil {
		return nil, Of(ErrInvalid, err)
	}
	return hours, nil
}

// request is the VACUUM of t's policy now: its retention (or the one-off retention given,
// checked by oneOffHours), its mode (auto: FULL or LITE by the last FULL run), its trash.
func (r *Runner) request(ctx context.Context, t *tables.Table, dt *deltavacuum.Table, dryRun bool, oneOff *float64) (session.VacuumRequest, error) {
	snap, err := dt.Snapshot(ctx)
	r.noteHealth(ctx, t, err)
	if err != nil {
		return session.VacuumRequest{}, err
	}
	hours, err := retainHours(snap, t.Cfg.Policy)
	if oneOff != nil {
		hours, err = oneOffHours(t, snap, *oneOff)
	}
	if err != nil {
		return session.VacuumRequest{}, err
	}
	// The run plans from this snapshot, advanced by the commits made since (no second read).
	var req session.VacuumRequest
	req.DryRun, req.RetainHours, req.From = dryRun, hours, snap
	switch t.Cfg.Policy.Mode {
	case config.ModeLite:
		req.Mode = vacuum.ModeLite
	case config.ModeAuto:
		sch, err := r.st.Schedules(ctx)
		if err != nil {
			return session.VacuumRequest{}, err
		}
		req.Mode = vacuum.Mode(strings.ToUpper(schedule.FullOrLite(sch[t.Cfg.ID].LastFull, t.Cfg.Policy.FullEvery, r.Now())))
	default:
		req.Mode = vacuum.ModeFull
	}
	if t.Cfg.Policy.Trash {
		req.Trash = run.DefaultTrash
	}
	req.StaleRunAfter, req.LiteFallback = r.staleAfter, true
	req.Discover = r.readerOptions(t)
	return req, nil
}

// readerOptions are where t's readers are beyond its folder (run.ReaderOptions): its
// registered streaming checkpoints, and the tables found under its discover root beside it,
// among which a shallow clone may name its files.
func (r *Runner) readerOptions(t *tables.Table) run.ReaderOptions {
	o := run.ReaderOptions{StreamingCheckpoints: t.Cfg.StreamingCheckpoints, Siblings: []string{}}
	if t.Cfg.Root == "" {
		return o
	}
	for _, other := range r.tables.All() {
		if other != t && other.Cfg.Root == t.Cfg.Root && other.Cfg.Path != "" {
			o.Siblings = append(o.Siblings, other.Cfg.Path)
		}
	}
	return o
}

package insight

import (
	"context"
	"errors"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// inspectLite reports from the log alone, listing nothing, with the plan of VACUUM LITE: the
// planner in LITE mode tells the account of every file the log names (vacuum.Options.
// ObserveLog): the live files, their deletion vectors and the tombstones inside the retention
// of the snapshot, with the sizes the log records, then each candidate of the commits LITE
// reads with the verdict it gave it. Reclaimable is what LITE deletes now. It cannot see
// untracked or hidden files, nor what an earlier VACUUM covered; files count as present, and
// as old but on local disk, where LITE looks at the age of each candidate.
//
// A table LITE refuses (vacuum.ErrCannotVacuumLite: the log no longer reaches back to the
// last VACUUM) is reported with nothing reclaimable, now or later, and a note that VACUUM FULL
// must run once.
func inspectLite(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, s settings) (*Report, error) {
	found, err := s.findReaders(ctx, snap)
	if err != nil {
		return nil, err
	}
	acc := newAccount(snap, s.smallMax)
	planner, err := vacuum.NewPlannerFor(ctx, store, snap, vacuum.Options{Mode: vacuum.ModeLite, RetainHours: s.RetainHours, DisableRetentionCheck: true,
		Now: s.Now, Observe: acc.observe, ObserveLog: true, Readers: found.readers()})
	if err != nil {
		return nil, err
	}
	plan, err := planner.Plan(ctx)
	var refusal error
	if errors.Is(err, vacuum.ErrCannotVacuumLite) {
		refusal, plan, err = err, planner.EmptyPlan(), nil
	}
	if err != nil {
		return nil, err
	}
	acc.settle(nil)
	if refusal != nil {
		acc.entries = nil // LITE deletes none of them, at any cutoff, until FULL has run
	}
	for _, c := range snap.Segment.AllCommits {
		acc.logNames = append(acc.logNames, c)
		acc.files.DeltaLog.Commits.add(c.Size)
	}
	for _, c := range snap.Segment.Checkpoint {
		acc.logNames = append(acc.logNames, c)
		acc.files.DeltaLog.Checkpoints.add(c.Size)
	}
	r, err := acc.report(ctx, store, snap, plan, s)
	if err != nil {
		return nil, err
	}
	if r.Readers, err = readersReport(ctx, store, snap, plan, found, s.price); err != nil {
		return nil, err
	}
	r.Notes = append(r.Notes, "estimate from the log alone (--lite): nothing was listed; reclaimable is what VACUUM LITE deletes now, the files named by the removes and "+
		"cdc actions of the commits it reads that the log no longer protects; untracked and hidden files, and what an earlier VACUUM covered, are not seen; "+
		"files count as present (and as old, but on local disk), sizes are those the log records (0 bytes for a remove without one), and deletion-vector files are counted without their sizes")
	if refusal != nil {
		r.Notes = append(r.Notes, "VACUUM LITE would refuse this table and delete nothing: "+refusal.Error()+
			" (inspect without --lite to see what VACUUM FULL deletes)")
	}
	return r, nil
}

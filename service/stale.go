package service

import (
	"context"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/undo"
)

// checkIdle refuses when the table's own run records show a live run: a RUNNING record whose
// heartbeat (rewritten every minute by its process: a second service, a CLI run) is fresher
// than staleRunAfter. A RUNNING record without a fresh heartbeat is the record of a process
// that died: it is logged as stale, with what to do, and no longer holds the table. It is a
// check, not a lock (see docs/service.md).
func (s *Server) checkIdle(ctx context.Context, t *table, dt *deltavacuum.Table) error {
	runs, err := dt.RunningRuns(ctx, s.now(), s.ops.staleAfter)
	if err != nil {
		return fmt.Errorf("reading the run records of %s: %w", dt.Location, err)
	}
	for _, r := range runs {
		if !r.Stale {
			return fmt.Errorf("%w: the run record %s%s under %s says RUNNING, with a heartbeat at %s (another deltavacuum is vacuuming it; "+
				"if that process died, the record stops holding the table %s after its last heartbeat, and deltavacuum undo %s --unfinished --run %s brings back what it deleted)",
				ErrBusy, r.ID, ".jsonl.gz", undo.RunsDir, r.LastSign.UTC().Format(time.RFC3339), s.ops.staleAfter, dt.Location, r.ID)
		}
	}
	for _, r := range runs {
		s.ops.m.staleRecords.WithLabelValues(t.cfg.ID).Inc()
		s.log.Warn("stale run record", "table", t.cfg.ID, "record", r.ID, "lastHeartbeat", r.LastSign.UTC(), "note", undo.StaleNote(dt.Location, r))
	}
	return nil
}

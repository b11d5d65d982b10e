package deltavacuum_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/session"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/undo"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestSessionVacuumAndRunningRecords: a real run through a session (the CLI's vacuum and
// VACUUM statements) is refused while another run's record is RUNNING with a fresh heartbeat,
// naming it; a record whose heartbeat is older than the stale limit no longer refuses it, and
// the run's warnings say what to do about it; a run's own heartbeat is gone when it ends. The
// library's Table.Vacuum, called without a session, applies the same rule; a DRY RUN is never
// refused.
func TestSessionVacuumAndRunningRecords(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	vias := map[string]func(t *testing.T, tbl *deltavacuum.Table, dryRun bool) (*vacuum.Result, error){
		"session": func(t *testing.T, tbl *deltavacuum.Table, dryRun bool) (*vacuum.Result, error) {
			sess, err := session.NewSession(session.Config{})
			if err != nil {
				t.Fatal(err)
			}
			return sess.Vacuum(ctx, tbl, session.VacuumRequest{DryRun: dryRun})
		},
		"library": func(t *testing.T, tbl *deltavacuum.Table, dryRun bool) (*vacuum.Result, error) {
			return tbl.Vacuum(ctx, deltavacuum.VacuumOptions{DryRun: dryRun})
		},
	}
	for _, tc := range []struct {
		name    string
		beat    time.Duration // before now
		refused bool
	}{{"live", time.Minute, true}, {"stale", undo.DefaultStaleAfter + time.Minute, false}} {
		for via, vacuumOf := range vias {
			t.Run(tc.name+"/"+via, func(t *testing.T) {
				store := localFixture(t)
				started := now.Add(-2 * time.Hour)
				rec := &undo.Record{ID: undo.NewID(started), Table: store.Location(), Status: undo.StatusRunning, StartedAt: started, Mode: "FULL", RetentionHours: 168}
				if err := undo.Write(ctx, store, rec); err != nil {
					t.Fatal(err)
				}
				if err := undo.WriteHeartbeat(ctx, store, rec.ID, now.Add(-tc.beat)); err != nil {
					t.Fatal(err)
				}
				if _, err := vacuumOf(t, deltavacuum.OpenStore(store), true); err != nil {
					t.Fatalf("a DRY RUN beside a RUNNING record: %v", err)
				}
				res, err := vacuumOf(t, deltavacuum.OpenStore(store), false)
				if tc.refused {
					var live *undo.LiveRunError
					if !errors.As(err, &live) || !strings.Contains(err.Error(), rec.ID) {
						t.Fatalf("got %v, want a refusal naming %s", err, rec.ID)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				warned := false
				for _, w := range res.Warnings {
					warned = warned || (strings.Contains(w, rec.ID) && strings.Contains(w, "--unfinished --run "+rec.ID))
				}
				if !warned {
					t.Errorf("no warning about the stale record %s: %q", rec.ID, res.Warnings)
				}
				if _, err := store.Stat(ctx, undo.HeartbeatKey(res.RunID)); !errors.Is(err, storage.ErrNotExist) {
					t.Errorf("the heartbeat of the ended run %s: %v, want it removed", res.RunID, err)
				}
			})
		}
	}
}

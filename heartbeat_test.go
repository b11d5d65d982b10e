package deltavacuum_test

import (
	"context"
	"errors"
	"github.com/deltavacuum/deltavacuum/session"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/undo"
)

// TestSessionVacuumAndRunningRecords: a real run through a session (the CLI's vacuum and
// VACUUM statements) is refused while another run's record is RUNNING with a fresh heartbeat,
// naming it; a record whose heartbeat is older than the stale limit no longer refuses it, and
// the run's warnings say what to do about it; a run's own heartbeat is gone when it ends.
func TestSessionVacuumAndRunningRecords(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	for _, tc := range []struct {
		name    string
		beat    time.Duration // before now
		refused bool
	}{{"live", time.Minute, true}, {"stale", undo.DefaultStaleAfter + time.Minute, false}} {
		t.Run(tc.name, func(t *testing.T) {
			store := localFixture(t)
			started := now.Add(-2 * time.Hour)
			rec := &undo.Record{ID: undo.NewID(started), Table: store.Location(), Status: undo.StatusRunning, StartedAt: started, Mode: "FULL", RetentionHours: 168}
			if err := undo.Write(ctx, store, rec); err != nil {
				t.Fatal(err)
			}
			if err := undo.WriteHeartbeat(ctx, store, rec.ID, now.Add(-tc.beat)); err != nil {
				t.Fatal(err)
			}
			sess, err := session.NewSession(session.Config{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := sess.Vacuum(ctx, deltavacuum.OpenStore(store), session.VacuumRequest{})
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

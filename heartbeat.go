package deltavacuum

import (
	"context"
	"sync"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/undo"
)

// heartbeat rewrites a run's heartbeat every undo.HeartbeatEvery while the run is in
// progress, so that another process can tell it from the RUNNING record of a process that
// died (undo.Running). Its times are the run's clock: the start, plus the time gone since.
type heartbeat struct {
	store storage.Store
	id    string
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

// startHeartbeat writes the first heartbeat (an error: the run does not start) and keeps
// it fresh in the background.
func startHeartbeat(ctx context.Context, store storage.Store, id string, start time.Time) (*heartbeat, error) {
	if err := undo.WriteHeartbeat(ctx, store, id, start); err != nil {
		return nil, err
	}
	h := &heartbeat{store: store, id: id, done: make(chan struct{})}
	began := time.Now()
	bg := context.WithoutCancel(ctx)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		tick := time.NewTicker(undo.HeartbeatEvery)
		defer tick.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-tick.C:
				// A beat that fails is retried at the next tick; the stale limit is many beats.
				_ = undo.WriteHeartbeat(bg, store, id, start.Add(time.Since(began)))
			}
		}
	}()
	return h, nil
}

// stop ends the beats; with remove, it also removes the heartbeat (the record no longer says
// RUNNING, or was never written). Without, the last heartbeat stays: the record still says
// RUNNING, and goes stale from that time, as the record of a process that ended. Safe on nil
// and more than once.
func (h *heartbeat) stop(ctx context.Context, remove bool) {
	if h == nil {
		return
	}
	h.once.Do(func() {
		close(h.done)
		h.wg.Wait()
		if remove {
			h.store.Delete(context.WithoutCancel(ctx), []string{undo.HeartbeatKey(h.id)})
		}
	})
}

// RunningRuns returns the runs the table's records say are RUNNING, each live or stale at
// now by its heartbeat (staleAfter 0: undo.DefaultStaleAfter).
func (t *Table) RunningRuns(ctx context.Context, now time.Time, staleAfter time.Duration) ([]undo.RunState, error) {
	return undo.Running(ctx, t.Store, now, staleAfter)
}

// checkNoLiveRun refuses a run while another is live on the table (its heartbeat fresh).
func (t *Table) checkNoLiveRun(ctx context.Context, now time.Time, staleAfter time.Duration) ([]undo.RunState, error) {
	runs, err := t.RunningRuns(ctx, now, staleAfter)
	if err != nil {
		return nil, err
	}
	var stale []undo.RunState
	for _, r := range runs {
		if !r.Stale {
			return nil, &undo.LiveRunError{Location: t.Location, Run: r}
		}
		stale = append(stale, r)
	}
	return stale, nil
}

package deltavacuum

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/undo"
	"github.com/deltavacuum/deltavacuum/vacuum"
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

// maxMissedBeats is how many beats in a row may fail before the run is stopped: another
// process takes a RUNNING record for dead once its heartbeat is older than the stale limit
// (at least 3 minutes in serve), so a run that cannot renew its heartbeat must not go on
// deleting as if it held the table. Two missed beats stop it with a minute to spare.
const maxMissedBeats = 2

// heartbeatIOTimeout bounds each write of a beat and the removal of the heartbeat when a
// run ends.
var heartbeatIOTimeout = 30 * time.Second

// ErrHeartbeatLost is the cause of a run stopped because its heartbeat could not be renewed.
var ErrHeartbeatLost = errors.New("the run's heartbeat could not be renewed")

// defaultTicks is the clock of the beats: a channel that ticks every undo.HeartbeatEvery,
// and how to stop it. Table.beatTicks replaces it (tests).
func defaultTicks() (<-chan time.Time, func()) {
	t := time.NewTicker(undo.HeartbeatEvery)
	return t.C, t.Stop
}

// startHeartbeat writes the first heartbeat (an error: the run does not start) and keeps
// it fresh in the background. When maxMissedBeats beats in a row fail, lost is called (the
// run stops between batches of deletes); the beats go on being tried.
func startHeartbeat(ctx context.Context, store storage.Store, id string, start time.Time, ticker func() (<-chan time.Time, func()), lost func(error)) (*heartbeat, error) {
	if err := undo.WriteHeartbeat(ctx, store, id, start); err != nil {
		return nil, err
	}
	h := &heartbeat{store: store, id: id, done: make(chan struct{})}
	began := time.Now()
	bg := context.WithoutCancel(ctx)
	if ticker == nil {
		ticker = defaultTicks
	}
	ticks, stopTicks := ticker()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer stopTicks()
		missed := 0
		for {
			select {
			case <-h.done:
				return
			case <-ticks:
				bctx, cancel := context.WithTimeout(bg, heartbeatIOTimeout) // a store that does not answer is a missed beat
				err := undo.WriteHeartbeat(bctx, store, id, start.Add(time.Since(began)))
				cancel()
				if err == nil {
					missed = 0
					continue
				}
				// One failed beat is retried at the next tick; a second in a row stops the run.
				if missed++; missed == maxMissedBeats && lost != nil {
					lost(fmt.Errorf("%w (%s of %s, %d attempts a minute apart: %v): the run stopped so that another process, taking its record for stale, cannot run beside it",
						ErrHeartbeatLost, undo.HeartbeatKey(id), store.Location(), missed, err))
				}
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
			// Also after an interrupt (the run's context is done), but bounded: a store that does
			// not answer leaves the heartbeat, which goes stale as that of an ended process.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), heartbeatIOTimeout)
			defer cancel()
			h.store.Delete(rctx, []string{undo.HeartbeatKey(h.id)})
		}
	})
}

// RunningRuns returns the runs the table's records say are RUNNING, each live or stale at
// now by its heartbeat (staleAfter 0: undo.DefaultStaleAfter).
func (t *Table) RunningRuns(ctx context.Context, now time.Time, staleAfter time.Duration) ([]undo.RunState, error) {
	return undo.Running(ctx, t.Store, now, staleAfter)
}

// CheckNoLiveRun refuses a run while another is live on the table (its heartbeat fresh).
func (t *Table) CheckNoLiveRun(ctx context.Context, now time.Time, staleAfter time.Duration) ([]undo.RunState, error) {
	return t.checkNoLiveRunBeside(ctx, now, staleAfter, nil, nil)
}

// checkNoLiveRunBeside is CheckNoLiveRun for a run of shard (nil: the whole table) at the
// pinned version: the live runs of the other shards of the same count at the same version do
// not refuse it (they are the workers of one run); any other live run does, the whole table's,
// the same shard's, another count's or version's.
func (t *Table) checkNoLiveRunBeside(ctx context.Context, now time.Time, staleAfter time.Duration, shard *vacuum.Shard, version *int64) ([]undo.RunState, error) {
	runs, err := t.RunningRuns(ctx, now, staleAfter)
	if err != nil {
		return nil, err
	}
	var stale []undo.RunState
	for _, r := range runs {
		if r.Stale {
			stale = append(stale, r)
			continue
		}
		if besideShard(r, shard, version) {
			continue
		}
		err := error(&undo.LiveRunError{Location: t.Location, Run: r})
		if shard != nil || r.Shard != "" {
			other := "the whole table"
			if r.Shard != "" {
				other = fmt.Sprintf("shard %s at version %d", r.Shard, r.SnapshotVersion)
			}
			err = fmt.Errorf("%w (it vacuums %s; only the other shards of one count at one pinned version run side by side)", err, other)
		}
		return nil, err
	}
	return stale, nil
}

// besideShard reports whether the live run r is another worker of the sharded run of shard
// at version.
func besideShard(r undo.RunState, shard *vacuum.Shard, version *int64) bool {
	if shard == nil || version == nil || r.Shard == "" {
		return false
	}
	other, err := vacuum.ParseShard(r.Shard)
	return err == nil && other.Count == shard.Count && other.Index != shard.Index && r.SnapshotVersion == *version
}

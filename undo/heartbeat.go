package undo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// heartbeatSuffix ends the name of a run's heartbeat, next to its record: the process of a
// RUNNING run rewrites it every HeartbeatEvery, so that others can tell a run in progress
// from the record of a process that died.
const heartbeatSuffix = ".heartbeat.json"

// HeartbeatEvery is how often a run in progress rewrites its heartbeat.
const HeartbeatEvery = time.Minute

// DefaultStaleAfter is how long a RUNNING record may go without a heartbeat before it is
// taken for the record of a process that died. It is well above HeartbeatEvery, so that a
// slow store or a clock a little off does not make a live run look dead.
const DefaultStaleAfter = 15 * time.Minute

// HeartbeatKey is the key of run id's heartbeat.
func HeartbeatKey(id string) string { return RunsDir + id + heartbeatSuffix }

// Heartbeat is the content of a heartbeat.
type Heartbeat struct {
	Run string    `json:"run"`
	At  time.Time `json:"at"`
}

// WriteHeartbeat records that run id was alive at at.
func WriteHeartbeat(ctx context.Context, store storage.Store, id string, at time.Time) error {
	if !ValidID(id) {
		return fmt.Errorf("run id %q is not valid", id)
	}
	b, _ := json.Marshal(Heartbeat{Run: id, At: at.UTC()})
	return store.Put(ctx, HeartbeatKey(id), b)
}

// ReadHeartbeat returns the time of run id's last heartbeat; false when it has none.
func ReadHeartbeat(ctx context.Context, store storage.Store, id string) (time.Time, bool, error) {
	b, err := storage.ReadAll(ctx, store, HeartbeatKey(id))
	if errors.Is(err, storage.ErrNotExist) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	var h Heartbeat
	if err := json.Unmarshal(b, &h); err != nil || h.Run != id || h.At.IsZero() {
		return time.Time{}, false, fmt.Errorf("the heartbeat %s is not valid", HeartbeatKey(id))
	}
	return h.At, true, nil
}

// RunState is what the records say of a RUNNING run.
type RunState struct {
	ID string `json:"id"`
	// LastSign is the last heartbeat, or the start of the run when it has none.
	LastSign time.Time `json:"lastSign"`
	// Stale is true when LastSign is older than the stale limit: its process is taken for
	// dead, and the record no longer holds the table.
	Stale bool `json:"stale"`
	// Shard and SnapshotVersion are the record's: a sharded run ("I/N") at that version.
	Shard           string `json:"shard,omitempty"`
	SnapshotVersion int64  `json:"snapshotVersion"`
}

// Running returns the RUNNING runs of the table in store, each live or stale at now: live
// while its last sign of life (heartbeat, else start) is less than staleAfter old.
func Running(ctx context.Context, store storage.Store, now time.Time, staleAfter time.Duration) ([]RunState, error) {
	if staleAfter <= 0 {
		staleAfter = DefaultStaleAfter
	}
	runs, err := List(ctx, store)
	if err != nil {
		return nil, err
	}
	var out []RunState
	for _, r := range runs {
		if r.Status != StatusRunning || r.Undone != nil {
			continue // ended, or undone with --unfinished: its process is not coming back
		}
		last := r.StartedAt
		at, ok, err := ReadHeartbeat(ctx, store, r.ID)
		if err != nil {
			return nil, fmt.Errorf("reading the heartbeat of run %s of %s: %w", r.ID, store.Location(), err)
		}
		if ok && at.After(last) {
			last = at
		}
		out = append(out, RunState{ID: r.ID, LastSign: last, Stale: now.Sub(last) >= staleAfter, Shard: r.Shard, SnapshotVersion: r.SnapshotVersion})
	}
	return out, nil
}

// LiveRunError is the refusal of a run while another one is live on the table.
type LiveRunError struct {
	Location string
	Run      RunState
}

func (e *LiveRunError) Error() string {
	return fmt.Sprintf("%s: run %s is in progress (its record %s%s%s says RUNNING, with a sign of life at %s): wait for it to end; "+
		"if its process died, the record stops holding the table once it has had no heartbeat for the stale limit",
		e.Location, e.Run.ID, RunsDir, e.Run.ID, recordSuffix, e.Run.LastSign.UTC().Format(time.RFC3339))
}

// StaleNote is what to do about a stale RUNNING record.
func StaleNote(location string, r RunState) string {
	return fmt.Sprintf("run record %s%s%s of %s says RUNNING but has had no heartbeat since %s: its process is taken for dead; "+
		"deltavacuum undo %s --unfinished --run %s brings back what it deleted", RunsDir, r.ID, recordSuffix, location,
		r.LastSign.UTC().Format(time.RFC3339), location, r.ID)
}

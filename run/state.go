package run

import (
	"context"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The states of a run, as every front end shows them (the CLI's runs, Python, the service's
// API and pages): the one owner of what a run's outcome is.
const (
	// StatePlanned: accepted (the service answered 202), not yet recorded beside the table.
	StatePlanned = "planned"
	// StateRunning: its record says RUNNING and a live process holds the table's lock for it.
	StateRunning   = "running"
	StateCompleted = "completed"
	// StateFailed: it ended FAILED, or its record says RUNNING while no live process holds
	// the table for it (interrupted: killed, or its machine stopped).
	StateFailed = "failed"
	// StatePartiallyUndone: an undo brought some of its files back, not all.
	StatePartiallyUndone = "partially undone"
	// StateUndone: an undo brought every file back (or found it in place).
	StateUndone = "undone"
	// StateUnreadable: its record cannot be read (the reason is in Err).
	StateUnreadable = "unreadable"
)

// RunInfo is one run of a table with its state.
type RunInfo struct {
	Summary
	State string `json:"state"`
	// StateDetail says the state in words: why it failed, how much an undo brought back and
	// what to do about the rest.
	StateDetail string `json:"stateDetail"`
	// Interrupted is set for a RUNNING record no live process holds the table for.
	Interrupted bool `json:"interrupted,omitempty"`
	// Undo is whether deltavacuum undo can bring back what the run deleted, and how.
	Undo *vacuum.Undoability `json:"undo,omitempty"`
}

// Runs lists the runs recorded beside the table in store, oldest first, each with its state. A
// RUNNING record is running only while a live ticket of the table's lock names it.
func Runs(ctx context.Context, store storage.Store, now time.Time, staleAfter time.Duration) ([]RunInfo, error) {
	sums, err := ListRecords(ctx, store)
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	for _, s := range sums {
		if s.Err == "" && s.Status == StatusRunning {
			if live, err = liveRuns(ctx, store, now, staleAfter); err != nil {
				return nil, err
			}
			break
		}
	}
	out := make([]RunInfo, len(sums))
	for i, s := range sums {
		out[i] = InfoOf(s, live[s.ID])
	}
	return out, nil
}

// liveRuns are the run ids the table's live lock tickets name.
func liveRuns(ctx context.Context, store storage.Store, now time.Time, staleAfter time.Duration) (map[string]bool, error) {
	lo := LockOptions{StaleAfter: staleAfter}
	entries, err := listLock(ctx, store)
	if err != nil {
		return nil, err
	}
	l := sortOut(entries)
	live := map[string]bool{}
	for _, id := range l.open("") {
		h, err := judge(ctx, store, id, l.legacy[id], l.beats[id], now, lo.staleAfter())
		if err != nil {
			return nil, err
		}
		if h != nil && h.State == StateLive && h.Ticket != nil && h.Ticket.Run != "" {
			live[h.Ticket.Run] = true
		}
	}
	return live, nil
}

// InfoOf is the state of the run s (live: a live process holds the table's lock for it).
func InfoOf(s Summary, live bool) RunInfo {
	ri := RunInfo{Summary: s}
	if s.Err != "" {
		ri.State, ri.StateDetail = StateUnreadable, "its record cannot be read: "+s.Err
		return ri
	}
	ri.Undo = vacuum.NewUndoability(s.Recovery, s.Trash, true)
	switch {
	case s.Status == StatusRunning && live:
		ri.State, ri.StateDetail = StateRunning, "in progress: a live process holds the table's lock for it"
		return ri
	case s.Status == StatusRunning:
		ri.State, ri.Interrupted = StateFailed, true
		ri.StateDetail = fmt.Sprintf("interrupted: its record says RUNNING, and no live process holds the table for it; deltavacuum undo TABLE --unfinished --run %s brings back what it deleted", s.ID)
	case s.Status == StatusCompleted:
		ri.State, ri.StateDetail = StateCompleted, fmt.Sprintf("deleted %d files (%d bytes)", s.NumFiles, s.Bytes)
	default:
		ri.State, ri.StateDetail = StateFailed, fmt.Sprintf("ended FAILED after deleting %d files (%d bytes)", s.NumFiles, s.Bytes)
	}
	if u := s.LastUndo; u != nil {
		back := u.NumRestored + u.NumPresent
		total := back + u.NumLost + u.NumFailed
		if u.Complete() {
			ri.State, ri.StateDetail = StateUndone, fmt.Sprintf("undone at %s: all %s back", u.At.UTC().Format(time.RFC3339), plural(total, "file"))
			return ri
		}
		ri.State = StatePartiallyUndone
		ri.StateDetail = fmt.Sprintf("undo at %s brought %d of %s back", u.At.UTC().Format(time.RFC3339), back, plural(total, "file"))
		if u.NumLost > 0 {
			ri.StateDetail += fmt.Sprintf("; %s cannot come back (not restorable: %s)", plural(u.NumLost, "file"), lostWhy(s))
		}
		if u.NumFailed > 0 {
			ri.StateDetail += fmt.Sprintf("; %s failed: undo again to retry (deltavacuum undo TABLE --run %s)", plural(u.NumFailed, "file"), s.ID)
		}
	}
	return ri
}

// lostWhy is why files of the run s cannot come back.
func lostWhy(s Summary) string {
	if s.Trash != "" {
		return "no longer in the trash (purged?)"
	}
	if !s.Recovery.Restorable() {
		return "the store kept nothing of them"
	}
	return "the store no longer keeps them"
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

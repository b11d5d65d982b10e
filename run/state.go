package run

import (
	"context"
	"fmt"
	"strings"
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

// Runs lists the runs recorded beside the table in store, newest first (as the service's pages
// list them), each with its state. A RUNNING record is running only while a live ticket of the
// table's lock names it.
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
		out[len(sums)-1-i] = InfoOf(s, live[s.ID])
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

// InfoOf is the state of the run s (live: a live process holds the table's lock for it), and
// what an undo of it can bring back now (RunInfo.Undo): what the store or the trash keeps, less
// what an undo already brought back or a trash purge deleted for good. Every front end reads
// both from here, so none offers an undo that can bring nothing back.
func InfoOf(s Summary, live bool) RunInfo {
	ri := RunInfo{Summary: s}
	if s.Err != "" {
		ri.State, ri.StateDetail = StateUnreadable, "its record cannot be read: "+s.Err
		return ri
	}
	kept := vacuum.NewUndoability(s.Recovery, s.Trash, true)
	switch {
	case s.Status == StatusRunning && live:
		ri.State, ri.StateDetail = StateRunning, "in progress: a live process holds the table's lock for it"
		ri.Undo = kept
		return ri
	case s.Status == StatusRunning:
		ri.State, ri.Interrupted = StateFailed, true
		ri.StateDetail = "interrupted: its record says RUNNING, and no live process holds the table for it; " + InterruptedAdvice(s, "TABLE")
	case s.Status == StatusCompleted:
		ri.State, ri.StateDetail = StateCompleted, deletedPhrase(s)
	default:
		ri.State, ri.StateDetail = StateFailed, "ended FAILED after it "+deletedPhrase(s)
	}
	if u := s.LastUndo; u != nil {
		back := u.NumRestored + u.NumPresent
		total := back + u.NumLost + u.NumFailed
		if u.Complete() {
			ri.State, ri.StateDetail = StateUndone, fmt.Sprintf("undone at %s: all %s back", u.At.UTC().Format(time.RFC3339), plural(total, "file"))
		} else {
			ri.State = StatePartiallyUndone
			ri.StateDetail = fmt.Sprintf("undo at %s brought %d of %s back", u.At.UTC().Format(time.RFC3339), back, plural(total, "file"))
			if u.NumLost > 0 {
				ri.StateDetail += fmt.Sprintf("; %s cannot come back (not restorable: %s)", plural(u.NumLost, "file"), lostWhy(s))
			}
			if u.NumFailed > 0 && s.Purged == nil {
				ri.StateDetail += fmt.Sprintf("; %s failed: undo again to retry (deltavacuum undo TABLE --run %s)", plural(u.NumFailed, "file"), s.ID)
			}
		}
	}
	ri.Undo = undoNow(s, ri, kept)
	if s.Purged != nil && ri.State != StateUndone {
		ri.StateDetail += "; " + ri.Undo.Why
	}
	return ri
}

// undoNow is what an undo of the run s (in the state ri) can bring back now: what kept (the
// store or the trash) keeps of what the run deleted, less what an undo brought back already
// and what a purge of its trash deleted for good.
func undoNow(s Summary, ri RunInfo, kept *vacuum.Undoability) *vacuum.Undoability {
	no := func(why string) *vacuum.Undoability { return &vacuum.Undoability{Possible: vacuum.UndoNo, Why: why} }
	u := s.LastUndo
	switch {
	case ri.State == StateUndone:
		return no(fmt.Sprintf("cannot be undone again: the undo at %s brought every file back", u.At.UTC().Format(time.RFC3339)))
	case s.Purged != nil && (s.Purged.NumLeft == 0 || !s.Purged.Done):
		return no(purgedWhy(s.Purged))
	case s.Purged != nil:
		return &vacuum.Undoability{Possible: vacuum.UndoYes, Via: ViaTrash, Why: fmt.Sprintf(
			"%s, but %s of it stayed in the trash: deltavacuum undo brings those back", strings.TrimPrefix(purgedWhy(s.Purged), "cannot be undone: "), plural(s.Purged.NumLeft, "file"))}
	case ri.State == StatePartiallyUndone && u.NumFailed > 0:
		return &vacuum.Undoability{Possible: kept.Possible, Via: u.Via, Why: fmt.Sprintf(
			"%s failed to come back: deltavacuum undo --run %s tries them again", plural(u.NumFailed, "file"), s.ID)}
	case ri.State == StatePartiallyUndone:
		return no(fmt.Sprintf("cannot be undone further: the %s still missing cannot come back (%s)", plural(u.NumLost, "file"), lostWhy(s)))
	case kept.Possible == vacuum.UndoNo && ri.Interrupted:
		return no("cannot be undone: " + goneWhy(s))
	case s.NumFiles == 0 && !ri.Interrupted:
		return no("cannot be undone: it deleted no files")
	}
	return kept
}

// InterruptedAdvice is what to do about the interrupted run s of table: undo it, where the
// store or its trash keeps what it deleted; otherwise finish it, as nothing brings back what it
// deleted.
func InterruptedAdvice(s Summary, table string) string {
	if vacuum.NewUndoability(s.Recovery, s.Trash, true).Possible == vacuum.UndoNo {
		return goneWhy(s)
	}
	return fmt.Sprintf("deltavacuum undo %s --unfinished --run %s brings back what it deleted", table, s.ID)
}

// goneWhy says that what the run s deleted is gone (the store keeps nothing, and it had no
// trash), and what to do instead.
func goneWhy(s Summary) string {
	why := "what it deleted is gone"
	if d := s.Recovery.Detail; d != "" {
		why += " (" + d + ")"
	}
	return why + "; run VACUUM again to finish"
}

// purgedWhy says that the trash of a run was purged, and when.
func purgedWhy(n *PurgeNote) string {
	if n.At.IsZero() {
		return "cannot be undone: its trash was purged"
	}
	return "cannot be undone: its trash was purged on " + n.At.UTC().Format(time.RFC3339)
}

// deletedPhrase says what the run s did to its files: moved them to its trash, or deleted them.
func deletedPhrase(s Summary) string {
	if s.Trash != "" {
		return fmt.Sprintf("moved %s (%s) to the trash", plural(s.NumFiles, "file"), plural(s.Bytes, "byte"))
	}
	return fmt.Sprintf("deleted %s (%s)", plural(s.NumFiles, "file"), plural(s.Bytes, "byte"))
}

// lostWhy is why files of the run s cannot come back.
func lostWhy(s Summary) string {
	if s.Purged != nil {
		return strings.TrimPrefix(purgedWhy(s.Purged), "cannot be undone: ")
	}
	if s.Trash != "" {
		return "they are no longer in the trash"
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

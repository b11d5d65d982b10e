package run

import (
	"context"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// UnlockOptions control Unlock.
type UnlockOptions struct {
	// Force removes live tickets too: their runs stop before their next batch of deletes.
	Force bool
	// DryRun says what would be removed and removes nothing.
	DryRun bool
	// Now is the clock (nil: time.Now); StaleAfter the stale limit (0: DefaultStaleAfter).
	Now        func() time.Time
	StaleAfter time.Duration
}

// Unlocked is one entry of the lock folder Unlock looked at.
type Unlocked struct {
	Holding
	// Released is set when the entry was removed (or would be, in a dry run).
	Released bool `json:"released"`
	// Kept says why a ticket was left in place.
	Kept string `json:"kept,omitempty"`
	// RunNote, for a released ticket of a run that keeps a record, says what became of that
	// run and what to do about it (RunNote).
	RunNote string `json:"runNote,omitempty"`
}

// UnlockReport is what Unlock found and did.
type UnlockReport struct {
	Table   string     `json:"table"`
	DryRun  bool       `json:"dryRun"`
	Tickets []Unlocked `json:"tickets"`
	// Removed are the keys Unlock removed (or would remove): the tickets it released, their
	// heartbeats, and the entries that refused every run.
	Removed []string `json:"removed"`
}

// Kept counts the tickets left in place.
func (r *UnlockReport) Kept() int {
	n := 0
	for _, t := range r.Tickets {
		if !t.Released {
			n++
		}
	}
	return n
}

// Unlock removes what holds the table's lock for no live process, by the steps of the unlocker
// (lockproto.go): the tickets of processes gone from this host or without a heartbeat for the
// stale limit, the tickets and heartbeats that cannot be read or are dated ahead of this clock,
// and every entry of the lock folder that would refuse a run (a directory, a link, a FIFO, a
// file deltavacuum does not write). A live ticket is kept unless Force; the report says what
// each held. The error is set (errors.Is ErrLocked) when a ticket was kept.
func Unlock(ctx context.Context, store storage.Store, opts UnlockOptions) (*UnlockReport, error) {
	lo := LockOptions{Now: opts.Now, StaleAfter: opts.StaleAfter}
	rep := &UnlockReport{Table: store.Location(), DryRun: opts.DryRun, Tickets: []Unlocked{}, Removed: []string{}}
	u := &unlocker{force: opts.Force, dryRun: opts.DryRun}
	for {
		st := u.next()
		switch st.kind {
		case stepList:
			entries, err := listLock(ctx, store)
			if err != nil {
				return nil, err
			}
			u.listed(entries)
		case stepJudge:
			h, err := judge(ctx, store, st.key, u.listing.legacy[st.key], st.hasBeat, lo.now(), lo.staleAfter())
			if err != nil {
				return rep, err
			}
			v := verdict{}
			if h != nil {
				v = verdict{State: h.State, Holding: *h}
			}
			u.judged(v)
		case stepDelete:
			if err := removeAll(ctx, store, st.keys); err != nil {
				return rep, fmt.Errorf("%s: %w", store.Location(), err)
			}
			u.deleted()
		case stepDone:
			return finishUnlock(ctx, store, rep, u)
		}
	}
}

func finishUnlock(ctx context.Context, store storage.Store, rep *UnlockReport, u *unlocker) (*UnlockReport, error) {
	for _, v := range u.Verdicts {
		if v.State == stateReleased {
			continue
		}
		e := Unlocked{Holding: v.Holding, Released: true}
		if v.State == StateLive && !u.force {
			e.Released = false
			e.Kept = "live: " + v.Holding.Why + "; --force removes it (its run then stops before its next batch of deletes)"
			if t := v.Holding.Ticket; t != nil && t.SameHost() {
				e.Kept = fmt.Sprintf("live: process %d of this host runs, %s; --force removes it (that run then stops before its next batch of deletes)", t.PID, v.Holding.Why)
			}
		}
		if t := v.Holding.Ticket; e.Released && t != nil && t.Run != "" {
			e.RunNote = RunNote(ctx, store, t.Run)
		}
		rep.Tickets = append(rep.Tickets, e)
	}
	for _, f := range u.listing.foreign {
		rep.Tickets = append(rep.Tickets, Unlocked{Holding: foreignHolding(f), Released: true})
	}
	rep.Removed = append(rep.Removed, u.Delete...)
	if k := rep.Kept(); k > 0 {
		return rep, fmt.Errorf("%s: %d live tickets kept (see the list): %w", rep.Table, k, ErrLocked)
	}
	return rep, nil
}

// removeAll deletes keys; a directory key is removed with what is in it (an entry planted in
// the lock folder), never through a link.
func removeAll(ctx context.Context, store storage.Store, keys []string) error {
	for _, k := range keys {
		if k[len(k)-1] != '/' {
			continue
		}
		var inside []string
		err := store.Walk(ctx, k, func(o storage.Object) error {
			if o.Key != k {
				inside = append(inside, o.Key)
			}
			return nil
		})
		if err != nil && !isNotExist(err) {
			return fmt.Errorf("listing %s: %w", k, err)
		}
		// Deepest first: a directory is deleted once what is in it is.
		for i := len(inside) - 1; i >= 0; i-- {
			if err := deleteAll(ctx, store, inside[i:i+1]); err != nil {
				return err
			}
		}
	}
	return deleteAll(ctx, store, keys)
}

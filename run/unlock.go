package run

import (
	"context"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// UnlockOptions control Unlock.
type UnlockOptions struct {
	// Force releases live tickets too: their runs stop at their next heartbeat.
	Force bool
	// DryRun says what would be released and releases nothing.
	DryRun bool
	// Now is the clock (nil: time.Now); StaleAfter the stale limit (0: DefaultStaleAfter).
	Now        func() time.Time
	StaleAfter time.Duration
}

// Unlocked is one ticket Unlock looked at.
type Unlocked struct {
	Holding
	Released bool `json:"released"`
	// Kept says why a ticket was left in place.
	Kept string `json:"kept,omitempty"`
}

// UnlockReport is what Unlock found and did.
type UnlockReport struct {
	Table   string     `json:"table"`
	DryRun  bool       `json:"dryRun"`
	Tickets []Unlocked `json:"tickets"`
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

// Unlock releases the tickets of the table's lock that no live process holds: those of
// processes gone from this host, those without a heartbeat for the stale limit, and those that
// cannot be read or are dated ahead of this clock. A live ticket is kept unless Force; the
// report says what each held. The error is set (errors.Is ErrLocked) when a ticket was kept.
func Unlock(ctx context.Context, store storage.Store, opts UnlockOptions) (*UnlockReport, error) {
	lo := LockOptions{Now: opts.Now, StaleAfter: opts.StaleAfter}
	names, err := listTickets(ctx, store)
	if err != nil {
		return nil, err
	}
	rep := &UnlockReport{Table: store.Location(), DryRun: opts.DryRun, Tickets: []Unlocked{}}
	now := lo.now()
	for _, n := range names.open(^uint64(0)) {
		h, err := judge(ctx, store, n, names.beats[n], now, lo.staleAfter())
		if err != nil {
			return rep, err
		}
		if h == nil {
			continue
		}
		u := Unlocked{Holding: *h}
		if h.State == StateLive && !opts.Force {
			u.Kept = "live: " + h.Why + "; --force releases it (its run stops at its next heartbeat, within " + HeartbeatEvery.String() + ")"
			if h.Ticket != nil && h.Ticket.SameHost() {
				u.Kept = fmt.Sprintf("live: process %d of this host runs, %s; --force releases it (that run then stops at its next heartbeat)", h.Ticket.PID, h.Why)
			}
			rep.Tickets = append(rep.Tickets, u)
			continue
		}
		u.Released = true
		if !opts.DryRun {
			if err := markReleased(ctx, store, n, fmt.Sprintf("deltavacuum unlock (%s: %s)", h.State, h.Why)); err != nil {
				return rep, fmt.Errorf("%s: releasing %s: %w", store.Location(), h.Key, err)
			}
		}
		rep.Tickets = append(rep.Tickets, u)
	}
	if !opts.DryRun {
		cleanUp(ctx, store)
	}
	if k := rep.Kept(); k > 0 {
		return rep, fmt.Errorf("%s: %d live tickets kept (see the list): %w", store.Location(), k, ErrLocked)
	}
	return rep, nil
}

package run

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/uuid"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The table's lock: tickets in LockDir, taken, confirmed and released by the steps of
// lockproto.go (where the protocol and why it is safe are written). This file performs those
// steps on a store, judges the tickets of other processes (live, dead, unreadable), and keeps a
// holder's heartbeat.

// LockDir is the folder of a table's lock, relative to the table root.
const LockDir = "_deltavacuum/lock/"

const (
	ticketSuffix         = ".json"
	beatSuffix           = ".heartbeat"
	legacyReleasedSuffix = ".released" // the numbered queue's release markers
	ticketFormat         = 2
	legacyTicketFormat   = 1
)

// HeartbeatEvery is how often the holder of a ticket rewrites its heartbeat.
const HeartbeatEvery = time.Minute

// DefaultStaleAfter is how long a ticket may go without a heartbeat before another process
// takes it for the ticket of a process that died. It is well above HeartbeatEvery, so that a
// slow store or a clock a little off does not make a live run look dead; a holder that cannot
// renew its heartbeat for maxMissedBeats minutes stops before that.
const DefaultStaleAfter = 15 * time.Minute

// MaxClockSkew is how far ahead of this process's clock a ticket's start or heartbeat may be:
// further ahead, it is taken for corrupt (a forged or broken clock would hold the table for
// ever), and the run is refused until deltavacuum unlock clears it.
const MaxClockSkew = 5 * time.Minute

// maxMissedBeats is how many beats in a row may fail before the holder stops.
const maxMissedBeats = 2

// confirmFresh is how long a confirmation of the ticket vouches for the deletes after it: a
// holder that finds more time gone since (by the monotonic clock, the wall clock or the time
// since boot, whichever says most: a process stopped with SIGSTOP, a frozen VM, a suspended
// laptop) confirms again before it deletes.
var confirmFresh = 10 * time.Second

// leaseOf is how long a process trusts its ticket after it began writing the ticket's last
// sign (its start, then its newest heartbeat): the stale limit less a margin for the clocks of
// other machines, which judge the sign by their own (lockproto.go).
func leaseOf(staleAfter time.Duration) time.Duration {
	return staleAfter - min(MaxClockSkew, staleAfter/3)
}

// heartbeatIOTimeout bounds each write of a beat and the release of a ticket.
var heartbeatIOTimeout = 30 * time.Second

// Purposes of a ticket.
const (
	PurposeVacuum = "vacuum"
	PurposeUndo   = "undo"
	PurposePurge  = "trash purge"
	PurposePin    = "pin"
)

// Ticket is the content of a ticket: who holds the table, for what.
type Ticket struct {
	Format int `json:"format"`
	// ID is the ticket's name in LockDir: a time-ordered UUID no other ticket has.
	ID string `json:"id,omitempty"`
	// Number is the name of a ticket of the numbered queue (format 1, before issue 33).
	Number  uint64 `json:"ticket,omitempty"`
	Table   string `json:"table"`
	Purpose string `json:"purpose"`
	// Run is the id of the run record of the run that holds the ticket, when it keeps one.
	Run string `json:"run,omitempty"`
	// Shard and SnapshotVersion: one worker of a sharded run ("I/N", at that pinned version).
	Shard           string `json:"shard,omitempty"`
	SnapshotVersion *int64 `json:"snapshotVersion,omitempty"`
	Process         `json:",inline"`
	StartedAt       time.Time `json:"startedAt"`
}

// heartbeat is the content of <id>.heartbeat (Ticket: a legacy ticket's number).
type heartbeat struct {
	ID     string    `json:"id,omitempty"`
	Ticket uint64    `json:"ticket,omitempty"`
	At     time.Time `json:"at"`
}

func ticketKey(id string) string { return LockDir + id + ticketSuffix }
func beatKey(id string) string   { return LockDir + id + beatSuffix }

// newTicketID is a new ticket id: a UUID of version 7 (its time first, so that ids sort by the
// time they were made, then random bits: no two processes make the same).
func newTicketID() (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// validTicketID reports whether s is a ticket id: a UUID in its canonical lower-case form.
func validTicketID(s string) bool {
	if len(s) != 36 || strings.ToLower(s) != s {
		return false
	}
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}

// States of a ticket.
const (
	StateLive    = "live"
	StateStale   = "stale"   // no heartbeat for the stale limit
	StateGone    = "gone"    // its process, on this host, no longer runs
	StateCorrupt = "corrupt" // unreadable, dated ahead of this clock, or not a ticket at all
)

// Holding is an entry of the lock folder, as another process judges it.
type Holding struct {
	// Key is the entry's object, relative to the table root.
	Key string `json:"key"`
	// ID is the ticket's id ("" for an entry that is no ticket).
	ID     string  `json:"id,omitempty"`
	Ticket *Ticket `json:"holder,omitempty"`
	State  string  `json:"state"`
	// Admitted is set for a ticket whose holder has the table (its heartbeat is there); a
	// ticket without one is still asking.
	Admitted bool `json:"admitted,omitempty"`
	// LastSign is the newest heartbeat, or the start when it has none.
	LastSign time.Time `json:"lastSign,omitzero"`
	// Why says how the state was told (for a corrupt entry, what is wrong with it).
	Why string `json:"why"`
}

// describe is the holder in one phrase, for messages.
func (h Holding) describe() string {
	if h.Ticket == nil {
		return h.Key
	}
	t := h.Ticket
	what := t.Purpose
	if t.Run != "" {
		what += " (run " + t.Run + ")"
	}
	if t.Shard != "" && t.SnapshotVersion != nil {
		what += fmt.Sprintf(" of shard %s at version %d", t.Shard, *t.SnapshotVersion)
	}
	if !h.Admitted {
		what += ", still taking the lock,"
	}
	host := "host " + t.Host
	if t.SameHost() {
		host = "this host (" + t.Host + ")"
	}
	return fmt.Sprintf("%s, process %d on %s, started %s, last heartbeat %s (ticket %s)",
		what, t.PID, host, t.StartedAt.UTC().Format(time.RFC3339), h.LastSign.UTC().Format(time.RFC3339), h.Key)
}

// ErrLocked is matched (errors.Is) by the refusal of a table another process holds.
var ErrLocked = errors.New("the table is held by another deltavacuum")

// HeldError is the refusal of a table another process holds, or whose lock cannot be read.
type HeldError struct {
	Location string
	Holding  Holding
	// StaleAfter is the stale limit the holder was judged by.
	StaleAfter time.Duration
}

func (e *HeldError) Error() string {
	if e.Holding.State == StateCorrupt {
		return fmt.Sprintf("%s: the lock entry %s cannot be trusted (%s); nothing was done. "+
			"If no deltavacuum is working on this table, deltavacuum unlock %s shows it and clears it",
			e.Location, e.Holding.Key, e.Holding.Why, e.Location)
	}
	return fmt.Sprintf("%s: held by %s; nothing was done. Wait for it to end. If that process is gone, "+
		"deltavacuum unlock %s removes its lock (it shows what the lock held, and refuses a live holder unless --force); "+
		"a holder on another host goes stale after %s without a heartbeat", e.Location, e.Holding.describe(), e.Location, e.StaleAfter)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *HeldError) Is(target error) bool { return target == ErrLocked }

// LockOptions describe the ticket a process takes.
type LockOptions struct {
	Purpose string
	// Run is the id of the run record the holder keeps ("" when none).
	Run string
	// Shard and Version: a worker of a sharded run (vacuum.Options.Shard at that pinned
	// version); nil: the whole table.
	Shard   *vacuum.Shard
	Version *int64
	// Now is the clock of the ticket and its heartbeats (nil: time.Now).
	Now func() time.Time
	// StaleAfter is the stale limit (0: DefaultStaleAfter).
	StaleAfter time.Duration
	// Ticks, when set (tests), ticks the heartbeats instead of a clock of HeartbeatEvery.
	Ticks func() (<-chan time.Time, func())
	// Wait is how long to wait for a holder to finish before refusing (0: refuse at once).
	Wait time.Duration
}

func (o *LockOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *LockOptions) staleAfter() time.Duration {
	if o.StaleAfter > 0 {
		return o.StaleAfter
	}
	return DefaultStaleAfter
}

// Lock is a ticket this process holds.
type Lock struct {
	store  storage.Store
	ticket Ticket
	// takenOver are the tickets of dead processes this one deleted to take the table.
	takenOver []Holding

	lost      chan struct{}
	lostOnce  sync.Once
	mu        sync.Mutex
	cause     error
	bound     []context.CancelCauseFunc
	confirmed instant // the last time the ticket was seen in place
	signAt    instant // when the newest heartbeat written began to be written
	lease     time.Duration
	// tidy removes the lock folders this ticket made, for a run that ends having done nothing.
	tidy *folderTidier
	// pinKeys are the pins the listing that admitted this ticket showed (pins.go).
	pinKeys   []string
	done      chan struct{}
	wg        sync.WaitGroup
	release   sync.Once
	releaseEr error
}

// Ticket is the ticket held.
func (l *Lock) Ticket() Ticket { return l.ticket }

// TakenOver returns the tickets of processes found dead (gone, or stale) that this lock
// deleted to take the table: their runs, if they kept a record, were interrupted.
func (l *Lock) TakenOver() []Holding { return l.takenOver }

// Lost is closed when the lock can no longer be trusted: its ticket is no longer there
// (unlock --force, or a process that took it for dead), or its heartbeat could not be renewed
// maxMissedBeats times in a row. Cause says why.
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// Cause is why the lock was lost (nil while it is not).
func (l *Lock) Cause() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cause
}

// ErrLockLost is the cause of a run stopped because it could no longer show it held the table.
var ErrLockLost = errors.New("the run's lock on the table could not be kept")

func (l *Lock) lose(err error) {
	l.lostOnce.Do(func() {
		l.mu.Lock()
		l.cause = err
		close(l.lost)
		stops := l.bound
		l.bound = nil
		l.mu.Unlock()
		for _, stop := range stops {
			stop(err) // at once: the run stops before its next batch of deletes
		}
	})
}

// Bind returns ctx cancelled, with the lock's Cause, as soon as the lock is lost; stop releases
// it.
func (l *Lock) Bind(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.lost:
		cancel(l.cause)
	default:
		l.bound = append(l.bound, cancel)
	}
	return ctx, func() { cancel(nil) }
}

// errTicketGone is the cause of a lock whose ticket another process deleted.
func (l *Lock) errTicketGone() error {
	return fmt.Errorf("%w: its ticket %s was removed by another process (deltavacuum unlock --force, or a process that took it for dead): the run stopped",
		ErrLockLost, ticketKey(l.ticket.ID))
}

// expired loses the lock when the process is past its lease: it was away (stopped, suspended)
// so long that another process may have taken its ticket for stale.
func (l *Lock) expired(at instant) error {
	l.mu.Lock()
	gone := at.since(l.signAt)
	l.mu.Unlock()
	if gone >= l.lease {
		l.lose(fmt.Errorf("%w: %s went by since its last heartbeat, by this machine's clocks (the process was stopped or suspended?), "+
			"and after %s another process may take its ticket for stale: the run stopped rather than delete beside it",
			ErrLockLost, gone.Round(time.Second), l.lease))
		return l.Cause()
	}
	return nil
}

// Confirm shows that the lock still holds the table: its lease has not run out, and its
// ticket is there (one Stat). A ticket that is gone, or that cannot be looked at, loses the
// lock (fail closed) and the error says why. A run confirms before every batch of deletes and
// before it reports success.
func (l *Lock) Confirm(ctx context.Context) error {
	if err := l.Cause(); err != nil {
		return err
	}
	at := readClocks()
	if err := l.expired(at); err != nil {
		return err
	}
	step := confirmStep(l.ticket.ID)
	_, err := l.store.Stat(ctx, step.key)
	switch {
	case errors.Is(err, storage.ErrNotExist):
		l.lose(l.errTicketGone())
		return l.Cause()
	case err != nil && ctx.Err() != nil:
		return ctx.Err() // the run was stopped for another reason
	case err != nil:
		l.lose(fmt.Errorf("%w: its ticket %s could not be looked at (%v): the run stopped rather than go on without knowing", ErrLockLost, step.key, err))
		return l.Cause()
	}
	l.mu.Lock()
	if at.after(l.confirmed) {
		l.confirmed = at
	}
	l.mu.Unlock()
	return nil
}

// Fresh confirms the lock unless a confirmation vouches for now (confirmFresh, by every clock):
// the check a holder makes right before it deletes.
func (l *Lock) Fresh(ctx context.Context) error {
	if err := l.Cause(); err != nil {
		return err
	}
	at := readClocks()
	if err := l.expired(at); err != nil {
		return err
	}
	l.mu.Lock()
	last := l.confirmed
	l.mu.Unlock()
	if at.since(last) < confirmFresh {
		return nil
	}
	return l.Confirm(ctx)
}

// Guard returns d deleting only while the lock holds: each Delete call (a batch) first
// confirms the ticket, and again right before the delete if the confirmation is no longer
// fresh (the process was stopped in between).
func (l *Lock) Guard(d vacuum.Deleter) vacuum.Deleter { return &guarded{Deleter: d, lock: l} }

type guarded struct {
	vacuum.Deleter
	lock *Lock
}

func (g *guarded) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	if err := g.lock.Confirm(ctx); err != nil {
		return nil, err
	}
	if err := g.lock.Fresh(ctx); err != nil {
		return nil, err
	}
	return g.Deleter.Delete(ctx, keys)
}

// DeleteIfUnchanged keeps a conditional deleter conditional under the guard.
func (g *guarded) DeleteIfUnchanged(ctx context.Context, keys, versions []string) ([]storage.DeleteResult, error) {
	cd, ok := g.Deleter.(storage.ConditionalDeleter)
	if !ok {
		return g.Delete(ctx, keys)
	}
	if err := g.lock.Confirm(ctx); err != nil {
		return nil, err
	}
	if err := g.lock.Fresh(ctx); err != nil {
		return nil, err
	}
	return cd.DeleteIfUnchanged(ctx, keys, versions)
}

// Acquire takes a ticket on the table in store, before anything is read for the work it
// guards, by the steps of the acquirer (lockproto.go). It fails with a *HeldError (errors.Is
// ErrLocked) when a live process holds the table for work this one cannot run beside, or when
// an entry of the lock cannot be trusted; a refusal leaves the lock folder as it was found.
func Acquire(ctx context.Context, store storage.Store, opts LockOptions) (*Lock, error) {
	if opts.Purpose == "" {
		return nil, errors.New("lock: no purpose")
	}
	if opts.Shard != nil && opts.Version == nil {
		return nil, errors.New("lock: a shard needs its pinned version")
	}
	deadline := time.Now().Add(opts.Wait)
	for {
		l, err := acquireOnce(ctx, store, opts)
		var he *HeldError
		if err == nil || !errors.As(err, &he) || he.Holding.State == StateCorrupt || time.Now().After(deadline) {
			return l, err
		}
		if err := sleep(ctx, time.Second); err != nil {
			return nil, err
		}
	}
}

func acquireOnce(ctx context.Context, store storage.Store, opts LockOptions) (*Lock, error) {
	t := Ticket{Format: ticketFormat, Table: store.Location(), Purpose: opts.Purpose, Run: opts.Run, Process: Self(), StartedAt: opts.now().UTC()}
	if opts.Shard != nil {
		t.Shard = opts.Shard.String()
		v := *opts.Version
		t.SnapshotVersion = &v
	}
	tidy := newFolderTidier(ctx, store)
	a := newAcquirer(defaultBounds)
	lease := leaseOf(opts.staleAfter())
	var signAt instant // when the ticket of this attempt began to be written
	var listed []lockEntry
	// fail deletes what this process may have written (its ticket: a put that failed may still
	// have been stored) and returns err.
	fail := func(err error) (*Lock, error) {
		if a.mine != "" || t.ID != "" {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), heartbeatIOTimeout)
			_, _ = store.Delete(rctx, []string{ticketKey(t.ID), beatKey(t.ID)})
			tidy.restore(rctx)
			cancel()
		}
		return nil, err
	}
	for {
		if a.mine != "" && readClocks().since(signAt) >= lease {
			a.expire() // away too long: what was listed and judged is no evidence now
		}
		st := a.next()
		switch st.kind {
		case stepPut:
			signAt = readClocks()
			id, err := newTicketID()
			if err != nil {
				return nil, err
			}
			t.ID, t.StartedAt = id, opts.now().UTC()
			b, err := json.Marshal(t)
			if err != nil {
				return nil, err
			}
			err = store.PutIfAbsent(ctx, ticketKey(id), b)
			if err != nil && !errors.Is(err, storage.ErrExist) {
				return fail(fmt.Errorf("%s: taking the lock (writing %s): %w; nothing was done", store.Location(), ticketKey(id), err))
			}
			a.put(id, err != nil)
		case stepList:
			entries, err := listLock(ctx, store)
			if err != nil {
				return fail(err)
			}
			listed = entries
			a.listed(entries)
		case stepJudge:
			h, err := judge(ctx, store, st.key, a.listing.legacy[st.key], st.hasBeat, opts.now(), opts.staleAfter())
			if err != nil {
				return fail(err)
			}
			v := verdict{}
			if h != nil {
				v = verdict{State: h.State, Holding: *h}
				v.Fits = h.Ticket != nil && compatible(t, *h.Ticket)
			}
			a.judged(v)
		case stepDelete:
			if err := deleteAll(ctx, store, st.keys); err != nil {
				return fail(fmt.Errorf("%s: the lock: %w; nothing was done", store.Location(), err))
			}
			a.deleted()
		case stepBeat:
			signAt = readClocks()
			if err := writeBeat(ctx, store, t.ID, opts.now()); err != nil {
				return fail(fmt.Errorf("%s: taking the lock (writing %s): %w; nothing was done", store.Location(), st.key, err))
			}
			a.beaten()
		case stepPause:
			// A wait for a ticket above (it refuses when it sees this one), or a pause before a
			// new ticket; jittered.
			d := time.Duration(5+rand.IntN(10)) * time.Millisecond
			if a.phase == phPause {
				d = time.Duration(20*st.attempt+rand.IntN(30)) * time.Millisecond
			}
			if err := sleep(ctx, d); err != nil {
				return fail(err)
			}
			a.paused()
		case stepDone:
			switch a.outcome {
			case acqAdmitted:
				l := &Lock{store: store, ticket: t, lost: make(chan struct{}), done: make(chan struct{}), confirmed: signAt, signAt: signAt, lease: lease, tidy: tidy,
					pinKeys: pinKeys(listed)}
				for _, v := range a.TakenOff {
					l.takenOver = append(l.takenOver, v.Holding)
				}
				l.beat(ctx, opts)
				return l, nil
			case acqRefused:
				tidy.restore(ctx)
				h := a.Refusal.Holding
				if a.Foreign != nil {
					h = foreignHolding(*a.Foreign)
				}
				return nil, &HeldError{Location: store.Location(), Holding: h, StaleAfter: opts.staleAfter()}
			default:
				return fail(fmt.Errorf("%s: taking the lock: the ticket ids this process made were taken %d times in a row; try again", store.Location(), a.puts))
			}
		}
	}
}

// foreignHolding describes an entry of the lock folder that is no ticket.
func foreignHolding(e lockEntry) Holding {
	what := "a file that is not a ticket, a heartbeat or anything else deltavacuum writes"
	switch {
	case e.Dir:
		what = "a directory, where deltavacuum writes only files"
	case e.Link:
		what = "a symbolic link, where deltavacuum writes only files"
	}
	return Holding{Key: foreignKey(e), State: StateCorrupt, Why: "it is " + what}
}

// deleteAll deletes keys; a key already gone is no error.
func deleteAll(ctx context.Context, store storage.Store, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	res, err := store.Delete(ctx, keys)
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Err != nil {
			return fmt.Errorf("deleting %s: %w", r.Key, r.Err)
		}
	}
	return nil
}

// compatible reports whether mine may run beside the live ticket other: two workers of one
// sharded run (the same count, the same pinned version, other shards).
func compatible(mine, other Ticket) bool {
	if mine.Purpose != PurposeVacuum || other.Purpose != PurposeVacuum || mine.Shard == "" || other.Shard == "" ||
		mine.SnapshotVersion == nil || other.SnapshotVersion == nil || *mine.SnapshotVersion != *other.SnapshotVersion {
		return false
	}
	a, err1 := vacuum.ParseShard(mine.Shard)
	b, err2 := vacuum.ParseShard(other.Shard)
	return err1 == nil && err2 == nil && a.Count == b.Count && a.Index != b.Index
}

// judge reads ticket id (a legacy one when legacy; its heartbeat too when the listing showed
// one) and tells its state at now; nil when it was deleted since the listing. An error is a
// failure to read (the store), not a corrupt ticket.
func judge(ctx context.Context, store storage.Store, id string, legacy, hasBeat bool, now time.Time, staleAfter time.Duration) (*Holding, error) {
	h := &Holding{Key: ticketKey(id), ID: id}
	b, err := storage.ReadAll(ctx, store, ticketKey(id))
	corrupt := func(why string) (*Holding, error) {
		h.State, h.Why = StateCorrupt, why
		return h, nil
	}
	switch {
	case errors.Is(err, storage.ErrNotExist):
		return nil, nil // deleted since the listing: released, or taken over
	case errors.Is(err, storage.ErrSymlink), errors.Is(err, storage.ErrNotRegular):
		return corrupt("it is not a regular file: " + err.Error())
	case err != nil:
		return nil, fmt.Errorf("%s: reading the lock ticket %s: %w; nothing was done", store.Location(), ticketKey(id), err)
	}
	var t Ticket
	if err := json.Unmarshal(b, &t, json.RejectUnknownMembers(true)); err != nil {
		return corrupt("it is not a ticket this deltavacuum reads: " + err.Error())
	}
	switch {
	case legacy && t.Format != legacyTicketFormat, !legacy && t.Format != ticketFormat:
		return corrupt(fmt.Sprintf("format %d under a name of format %d", t.Format, map[bool]int{true: legacyTicketFormat, false: ticketFormat}[legacy]))
	case legacy && fmt.Sprintf("%020d", t.Number) != id:
		return corrupt(fmt.Sprintf("it names ticket %d, its file name ticket %s", t.Number, id))
	case !legacy && t.ID != id:
		return corrupt(fmt.Sprintf("it names ticket %q, its file name %q", t.ID, id))
	case t.Purpose == "" || t.StartedAt.IsZero():
		return corrupt("it names no purpose or no start")
	}
	h.Ticket = &t
	h.Admitted = hasBeat || legacy
	if t.StartedAt.After(now.Add(MaxClockSkew)) {
		return corrupt(fmt.Sprintf("its start %s is ahead of this clock (%s) by more than %s", t.StartedAt.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), MaxClockSkew))
	}
	h.LastSign = t.StartedAt
	if hasBeat {
		b, err := storage.ReadAll(ctx, store, beatKey(id))
		switch {
		case errors.Is(err, storage.ErrNotExist):
		case errors.Is(err, storage.ErrSymlink), errors.Is(err, storage.ErrNotRegular):
			return corrupt(fmt.Sprintf("its heartbeat %s is not a regular file: %v", beatKey(id), err))
		case err != nil:
			return nil, fmt.Errorf("%s: reading the heartbeat %s: %w; nothing was done", store.Location(), beatKey(id), err)
		default:
			var hb heartbeat
			err := json.Unmarshal(b, &hb, json.RejectUnknownMembers(true))
			if err != nil || hb.At.IsZero() || (legacy && hb.Ticket != t.Number) || (!legacy && hb.ID != id) {
				why := "it is not a heartbeat of this ticket"
				if err != nil {
					why = err.Error()
				}
				return corrupt(fmt.Sprintf("its heartbeat %s is unreadable: %s", beatKey(id), why))
			}
			if hb.At.After(now.Add(MaxClockSkew)) {
				return corrupt(fmt.Sprintf("its heartbeat %s is dated %s, ahead of this clock (%s) by more than %s",
					beatKey(id), hb.At.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), MaxClockSkew))
			}
			if hb.At.After(h.LastSign) {
				h.LastSign = hb.At
			}
		}
	}
	switch {
	case t.Gone():
		h.State, h.Why = StateGone, fmt.Sprintf("process %d of this host (%s) no longer runs", t.PID, t.Host)
	case now.Sub(h.LastSign) >= staleAfter:
		h.State, h.Why = StateStale, fmt.Sprintf("no heartbeat since %s (the stale limit is %s)", h.LastSign.UTC().Format(time.RFC3339), staleAfter)
	default:
		h.State, h.Why = StateLive, "heartbeat at "+h.LastSign.UTC().Format(time.RFC3339)
	}
	return h, nil
}

// beat keeps the heartbeat fresh in the background, and watches for the ticket's removal by
// another process.
func (l *Lock) beat(ctx context.Context, opts LockOptions) {
	bg := context.WithoutCancel(ctx)
	ticks, stop := opts.Ticks, func() {}
	var ch <-chan time.Time
	if ticks != nil {
		ch, stop = ticks()
	} else {
		tk := time.NewTicker(HeartbeatEvery)
		ch, stop = tk.C, tk.Stop
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer stop()
		missed := 0
		for {
			select {
			case <-l.done:
				return
			case <-ch:
				bctx, cancel := context.WithTimeout(bg, heartbeatIOTimeout) // a store that does not answer is a missed beat
				// The ticket first: a beat is not written for a ticket another process removed.
				_, err := l.store.Stat(bctx, ticketKey(l.ticket.ID))
				if errors.Is(err, storage.ErrNotExist) {
					l.lose(l.errTicketGone())
					cancel()
					return
				}
				if err == nil {
					at := readClocks()
					if l.expired(at) != nil {
						cancel()
						return // a beat now would not bring back a ticket others may have taken
					}
					if err = writeBeat(bctx, l.store, l.ticket.ID, opts.now()); err == nil {
						l.mu.Lock()
						if at.after(l.confirmed) {
							l.confirmed = at
						}
						l.signAt = at
						l.mu.Unlock()
					}
				}
				cancel()
				if err == nil {
					missed = 0
					continue
				}
				if missed++; missed == maxMissedBeats {
					l.lose(fmt.Errorf("%w (the heartbeat %s of %s failed %d times in a row, a minute apart: %v): the run stopped so that another process, taking its ticket for stale, cannot run beside it",
						ErrLockLost, beatKey(l.ticket.ID), l.store.Location(), missed, err))
				}
			}
		}
	}()
}

func writeBeat(ctx context.Context, store storage.Store, id string, at time.Time) error {
	b, err := json.Marshal(heartbeat{ID: id, At: at.UTC()})
	if err != nil {
		return err
	}
	return store.Put(ctx, beatKey(id), b)
}

// Release ends the heartbeat and deletes the ticket and its heartbeat (releaseStep). Also after
// a cancellation (bounded in time). Safe on nil and more than once.
func (l *Lock) Release(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.release.Do(func() {
		close(l.done)
		l.wg.Wait()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), heartbeatIOTimeout)
		defer cancel()
		if err := deleteAll(rctx, l.store, releaseStep(l.ticket.ID).keys); err != nil {
			l.releaseEr = fmt.Errorf("%s: releasing the lock ticket %s: %w (it goes stale %s after its last heartbeat, or deltavacuum unlock removes it)",
				l.store.Location(), ticketKey(l.ticket.ID), err, DefaultStaleAfter)
		}
	})
	return l.releaseEr
}

// listLock lists LockDir: its entries, directories and links included (a directory's contents
// are not listed). A missing folder has none.
func listLock(ctx context.Context, store storage.Store) ([]lockEntry, error) {
	var out []lockEntry
	err := store.Walk(ctx, LockDir, func(o storage.Object) error {
		if o.Key == LockDir {
			return nil
		}
		name := strings.TrimSuffix(strings.TrimPrefix(o.Key, LockDir), "/")
		out = append(out, lockEntry{Name: name, Dir: o.IsDir, Link: o.IsLink})
		if o.IsDir {
			return storage.SkipDir
		}
		return nil
	})
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: listing the lock %s: %w; nothing was done", store.Location(), LockDir, err)
	}
	return out, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

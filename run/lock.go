package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The lock of a table is a queue of numbered tickets in LockDir, each an object written with
// the store's put-if-absent: <ticket>.json. A process that wants the table lists the folder,
// writes the ticket after the highest it saw (if another process took that number first, it
// lists again), then lists once more and looks at every ticket below its own that is not
// released (<ticket>.released): a live one it cannot run beside refuses it (it releases its own
// ticket and fails); a stale one (no heartbeat for the stale limit, or a process of this host
// that is gone) it releases, saying so; an unreadable one refuses it (fail closed).
//
// Why this is safe: tickets are taken in increasing order and never taken twice (put-if-absent),
// and the highest ticket is never deleted, so a ticket below mine was written before I listed
// the folder to choose mine, and my second listing sees it (the listings of every store here are
// strongly consistent: local disk, S3, Azure, GCS). Of two processes that could not run side by
// side, the one with the higher ticket sees the other and steps back: at most one goes on. A
// process that dies leaves its ticket; the next process takes over at once when the holder ran
// on this host and is gone, otherwise after the stale limit.
//
// The workers of a sharded run (the shards of one count at one pinned version) hold tickets
// side by side; any other pair is exclusive.

// LockDir is the folder of a table's lock, relative to the table root.
const LockDir = "_deltavacuum/lock/"

const (
	ticketSuffix   = ".json"
	releasedSuffix = ".released"
	beatSuffix     = ".heartbeat"
	ticketDigits   = 20
	ticketFormat   = 1
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

// maxMissedBeats is how many beats in a row may fail before the holder stops: others take the
// ticket for stale after the stale limit (at least 3 minutes in serve), so a run that cannot
// renew its heartbeat must not go on deleting as if it held the table.
const maxMissedBeats = 2

// heartbeatIOTimeout bounds each write of a beat and the release of a ticket.
var heartbeatIOTimeout = 30 * time.Second

// Purposes of a ticket.
const (
	PurposeVacuum = "vacuum"
	PurposeUndo   = "undo"
	PurposePurge  = "trash purge"
)

// Ticket is the content of a ticket: who holds the table, for what.
type Ticket struct {
	Format  int    `json:"format"`
	Number  uint64 `json:"ticket"`
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

// heartbeat is the content of <ticket>.heartbeat.
type heartbeat struct {
	Ticket uint64    `json:"ticket"`
	At     time.Time `json:"at"`
}

// released is the content of <ticket>.released.
type released struct {
	Ticket uint64    `json:"ticket"`
	At     time.Time `json:"at"`
	By     Process   `json:"by"`
	Why    string    `json:"why"`
}

func ticketName(n uint64) string { return fmt.Sprintf("%0*d", ticketDigits, n) }
func ticketKey(n uint64) string  { return LockDir + ticketName(n) + ticketSuffix }
func beatKey(n uint64) string    { return LockDir + ticketName(n) + beatSuffix }
func releasedKey(n uint64) string {
	return LockDir + ticketName(n) + releasedSuffix
}

// States of a ticket that is not released.
const (
	StateLive    = "live"
	StateStale   = "stale"   // no heartbeat for the stale limit
	StateGone    = "gone"    // its process, on this host, no longer runs
	StateCorrupt = "corrupt" // unreadable, or dated ahead of this clock
)

// Holding is a ticket that is not released, as another process judges it.
type Holding struct {
	// Key is the ticket's object, relative to the table root.
	Key    string  `json:"key"`
	Number uint64  `json:"ticket"`
	Ticket *Ticket `json:"holder,omitempty"`
	State  string  `json:"state"`
	// LastSign is the newest heartbeat, or the start when it has none.
	LastSign time.Time `json:"lastSign,omitzero"`
	// Why says how the state was told (for a corrupt ticket, what is wrong with it).
	Why string `json:"why"`
}

// Held reports whether the ticket still holds the table: live, or unreadable (fail closed).
func (h Holding) Held() bool { return h.State == StateLive || h.State == StateCorrupt }

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
		return fmt.Sprintf("%s: the lock ticket %s cannot be trusted (%s); nothing was done. "+
			"If no deltavacuum is working on this table, deltavacuum unlock %s clears it",
			e.Location, e.Holding.Key, e.Holding.Why, e.Location)
	}
	return fmt.Sprintf("%s: held by %s; nothing was done. Wait for it to end. If that process is gone, "+
		"deltavacuum unlock %s removes its lock (it shows what the lock held, and refuses a live holder on this host unless --force); "+
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
	// TakenOver are the tickets of dead processes this one released to take the table.
	takenOver []Holding

	lost      chan struct{}
	lostOnce  sync.Once
	mu        sync.Mutex
	cause     error
	bound     []context.CancelCauseFunc
	done      chan struct{}
	wg        sync.WaitGroup
	release   sync.Once
	releaseEr error
}

// Ticket is the ticket held.
func (l *Lock) Ticket() Ticket { return l.ticket }

// TakenOver returns the tickets of processes found dead (gone, or stale) that this lock
// released to take the table: their runs, if they kept a record, were interrupted.
func (l *Lock) TakenOver() []Holding { return l.takenOver }

// Lost is closed when the lock can no longer be trusted: its heartbeat could not be renewed
// maxMissedBeats times in a row, or another process released it (unlock --force). Cause says why.
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

// Acquire takes a ticket on the table in store, before anything is read for the work it
// guards. It fails with a *HeldError (errors.Is ErrLocked) when a live process holds the table
// for work this one cannot run beside, or when a ticket below it cannot be read.
func Acquire(ctx context.Context, store storage.Store, opts LockOptions) (*Lock, error) {
	if opts.Purpose == "" {
		return nil, errors.New("lock: no purpose")
	}
	if (opts.Shard == nil) != (opts.Version == nil) && opts.Shard != nil {
		return nil, errors.New("lock: a shard needs its pinned version")
	}
	t := Ticket{Format: ticketFormat, Table: store.Location(), Purpose: opts.Purpose, Run: opts.Run, Process: Self(), StartedAt: opts.now().UTC()}
	if opts.Shard != nil {
		t.Shard = opts.Shard.String()
		v := *opts.Version
		t.SnapshotVersion = &v
	}
	var err error
	for attempt := 0; ; attempt++ {
		var names ticketNames
		if names, err = listTickets(ctx, store); err != nil {
			return nil, err
		}
		if names.max == math.MaxUint64 {
			return nil, &HeldError{Location: store.Location(), StaleAfter: opts.staleAfter(), Holding: Holding{Key: ticketKey(names.max), Number: names.max, State: StateCorrupt,
				Why: "its number is the highest a ticket can have: remove the folder " + LockDir + " by hand while no deltavacuum works on the table"}}
		}
		t.Number = names.max + 1
		b, merr := json.Marshal(t)
		if merr != nil {
			return nil, merr
		}
		err = store.PutIfAbsent(ctx, ticketKey(t.Number), b)
		if err == nil {
			break
		}
		if !errors.Is(err, storage.ErrExist) {
			return nil, fmt.Errorf("%s: taking the lock (writing %s): %w; nothing was done", store.Location(), ticketKey(t.Number), err)
		}
		if attempt >= 50 {
			return nil, fmt.Errorf("%s: taking the lock: %d tickets in a row were taken by other processes first; try again", store.Location(), attempt+1)
		}
		// Another process took that number: list again.
		if err := sleep(ctx, time.Duration(attempt+1)*5*time.Millisecond); err != nil {
			return nil, err
		}
	}
	l := &Lock{store: store, ticket: t, lost: make(chan struct{}), done: make(chan struct{})}
	if err := l.admit(ctx, opts); err != nil {
		l.giveUp(ctx, "refused: "+err.Error())
		return nil, err
	}
	l.beat(ctx, opts)
	return l, nil
}

// admit looks at every ticket below l's that is not released: it fails on one that holds the
// table against l, and releases those of dead processes.
func (l *Lock) admit(ctx context.Context, opts LockOptions) error {
	names, err := listTickets(ctx, l.store)
	if err != nil {
		return err
	}
	now := opts.now()
	var dead []Holding
	for _, n := range names.open(l.ticket.Number) {
		h, err := judge(ctx, l.store, n, names.beats[n], now, opts.staleAfter())
		if err != nil {
			return err
		}
		if h == nil {
			continue // released (and cleaned up) since the listing
		}
		switch {
		case h.State == StateCorrupt, h.State == StateLive && !compatible(l.ticket, *h.Ticket):
			return &HeldError{Location: l.store.Location(), Holding: *h, StaleAfter: opts.staleAfter()}
		case h.State == StateStale || h.State == StateGone:
			dead = append(dead, *h)
		}
	}
	for _, h := range dead {
		why := fmt.Sprintf("taken over by ticket %s: %s", ticketName(l.ticket.Number), h.Why)
		if err := markReleased(ctx, l.store, h.Number, why); err != nil {
			return fmt.Errorf("%s: releasing the ticket %s of a dead process: %w", l.store.Location(), h.Key, err)
		}
		l.takenOver = append(l.takenOver, h)
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

// judge reads ticket n (and its heartbeat, when the listing showed one) and tells its state
// at now; nil when it was released and removed since the listing. An error is a failure to
// read (the store), not a corrupt ticket.
func judge(ctx context.Context, store storage.Store, n uint64, hasBeat bool, now time.Time, staleAfter time.Duration) (*Holding, error) {
	h := &Holding{Key: ticketKey(n), Number: n}
	b, err := storage.ReadAll(ctx, store, ticketKey(n))
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil // removed by a cleanup after its release (a ticket is never removed before)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading the lock ticket %s: %w; nothing was done", store.Location(), ticketKey(n), err)
	}
	corrupt := func(why string) (*Holding, error) {
		h.State, h.Why = StateCorrupt, why
		return h, nil
	}
	var t Ticket
	if err := json.Unmarshal(b, &t, json.RejectUnknownMembers(true)); err != nil {
		return corrupt("it is not a ticket this deltavacuum reads: " + err.Error())
	}
	switch {
	case t.Format != ticketFormat:
		return corrupt(fmt.Sprintf("format %d, this deltavacuum reads format %d", t.Format, ticketFormat))
	case t.Number != n:
		return corrupt(fmt.Sprintf("it names ticket %d, its file name ticket %d", t.Number, n))
	case t.Purpose == "" || t.StartedAt.IsZero():
		return corrupt("it names no purpose or no start")
	}
	h.Ticket = &t
	if t.StartedAt.After(now.Add(MaxClockSkew)) {
		return corrupt(fmt.Sprintf("its start %s is ahead of this clock (%s) by more than %s", t.StartedAt.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), MaxClockSkew))
	}
	h.LastSign = t.StartedAt
	if hasBeat {
		b, err := storage.ReadAll(ctx, store, beatKey(n))
		switch {
		case errors.Is(err, storage.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("%s: reading the heartbeat %s: %w; nothing was done", store.Location(), beatKey(n), err)
		default:
			var hb heartbeat
			if err := json.Unmarshal(b, &hb, json.RejectUnknownMembers(true)); err != nil || hb.Ticket != n || hb.At.IsZero() {
				why := "it is not a heartbeat of this ticket"
				if err != nil {
					why = err.Error()
				}
				return corrupt(fmt.Sprintf("its heartbeat %s is unreadable: %s", beatKey(n), why))
			}
			if hb.At.After(now.Add(MaxClockSkew)) {
				return corrupt(fmt.Sprintf("its heartbeat %s is dated %s, ahead of this clock (%s) by more than %s",
					beatKey(n), hb.At.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), MaxClockSkew))
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

// markReleased writes the release marker of ticket n (kept when one is there already).
func markReleased(ctx context.Context, store storage.Store, n uint64, why string) error {
	b, err := json.Marshal(released{Ticket: n, At: time.Now().UTC(), By: Self(), Why: why})
	if err != nil {
		return err
	}
	if err := store.PutIfAbsent(ctx, releasedKey(n), b); err != nil && !errors.Is(err, storage.ErrExist) {
		return err
	}
	return nil
}

// beat writes the first heartbeat and keeps it fresh in the background; it also watches for a
// release of the ticket by another process.
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
				err := l.writeBeat(bctx, opts.now())
				if err == nil && l.releasedByOther(bctx) {
					l.lose(fmt.Errorf("%w: its ticket %s was released by another process (deltavacuum unlock --force, or a process that took it for dead): the run stopped",
						ErrLockLost, ticketKey(l.ticket.Number)))
				}
				cancel()
				if err == nil {
					missed = 0
					continue
				}
				if missed++; missed == maxMissedBeats {
					l.lose(fmt.Errorf("%w (the heartbeat %s of %s failed %d times in a row, a minute apart: %v): the run stopped so that another process, taking its ticket for stale, cannot run beside it",
						ErrLockLost, beatKey(l.ticket.Number), l.store.Location(), missed, err))
				}
			}
		}
	}()
}

// releasedByOther reports whether the ticket was released (a marker is there, or the ticket was
// removed by a cleanup after its release) while this process still holds it.
func (l *Lock) releasedByOther(ctx context.Context) bool {
	if _, err := l.store.Stat(ctx, releasedKey(l.ticket.Number)); err == nil {
		return true
	}
	_, err := l.store.Stat(ctx, ticketKey(l.ticket.Number))
	return errors.Is(err, storage.ErrNotExist)
}

func (l *Lock) writeBeat(ctx context.Context, at time.Time) error {
	b, err := json.Marshal(heartbeat{Ticket: l.ticket.Number, At: at.UTC()})
	if err != nil {
		return err
	}
	return l.store.Put(ctx, beatKey(l.ticket.Number), b)
}

// Release ends the heartbeat and releases the ticket, then removes the released tickets below
// the highest. Also after a cancellation (bounded in time). Safe on nil and more than once.
func (l *Lock) Release(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.release.Do(func() {
		close(l.done)
		l.wg.Wait()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), heartbeatIOTimeout)
		defer cancel()
		if err := markReleased(rctx, l.store, l.ticket.Number, "released by its holder"); err != nil {
			l.releaseEr = fmt.Errorf("%s: releasing the lock ticket %s: %w (it goes stale %s after its last heartbeat, or deltavacuum unlock removes it)",
				l.store.Location(), ticketKey(l.ticket.Number), err, DefaultStaleAfter)
			return
		}
		cleanUp(rctx, l.store)
	})
	return l.releaseEr
}

// giveUp releases a ticket that was refused.
func (l *Lock) giveUp(ctx context.Context, why string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), heartbeatIOTimeout)
	defer cancel()
	_ = markReleased(rctx, l.store, l.ticket.Number, why)
}

// cleanUp deletes the released tickets below the highest (never the highest: the numbers
// only grow): first a ticket and its heartbeat, then its marker, so that a cleanup cut short
// never leaves a ticket without its marker. At most 1000 tickets at a time.
func cleanUp(ctx context.Context, store storage.Store) {
	names, err := listTickets(ctx, store)
	if err != nil {
		return
	}
	var first, markers []string
	for _, n := range names.all {
		if n == names.max || !names.released[n] {
			continue
		}
		if names.tickets[n] {
			first = append(first, ticketKey(n))
		}
		if names.beats[n] {
			first = append(first, beatKey(n))
		}
		markers = append(markers, releasedKey(n))
		if len(markers) == 1000 {
			break
		}
	}
	if len(first) > 0 {
		res, err := store.Delete(ctx, first)
		if err != nil {
			return
		}
		for _, r := range res {
			if r.Err != nil {
				return // a marker whose ticket is still there stays
			}
		}
	}
	if len(markers) > 0 {
		_, _ = store.Delete(ctx, markers)
	}
}

// ticketNames is a listing of LockDir.
type ticketNames struct {
	max      uint64
	all      []uint64 // every number named, ascending
	tickets  map[uint64]bool
	released map[uint64]bool
	beats    map[uint64]bool
}

// open returns the tickets below n that are not released, ascending.
func (t ticketNames) open(below uint64) []uint64 {
	var out []uint64
	for _, n := range t.all {
		if n < below && t.tickets[n] && !t.released[n] {
			out = append(out, n)
		}
	}
	return out
}

// listTickets lists LockDir. A name that is not of a ticket, marker or heartbeat is ignored; a
// number too large for a ticket is taken as the highest (Acquire then refuses).
func listTickets(ctx context.Context, store storage.Store) (ticketNames, error) {
	out := ticketNames{tickets: map[uint64]bool{}, released: map[uint64]bool{}, beats: map[uint64]bool{}}
	seen := map[uint64]bool{}
	err := store.Walk(ctx, LockDir, func(o storage.Object) error {
		if o.IsDir {
			if o.Key != LockDir {
				return storage.SkipDir
			}
			return nil
		}
		name := strings.TrimPrefix(o.Key, LockDir)
		if len(name) <= ticketDigits {
			return nil
		}
		digits, suffix := name[:ticketDigits], name[ticketDigits:]
		var set map[uint64]bool
		switch suffix {
		case ticketSuffix:
			set = out.tickets
		case releasedSuffix:
			set = out.released
		case beatSuffix:
			set = out.beats
		default:
			return nil
		}
		for _, c := range digits {
			if c < '0' || c > '9' {
				return nil
			}
		}
		n, err := strconv.ParseUint(digits, 10, 64)
		if err != nil {
			n = math.MaxUint64 // beyond any ticket: refused, never wrapped round
		}
		set[n] = true
		if !seen[n] {
			seen[n] = true
			out.all = append(out.all, n)
		}
		out.max = max(out.max, n)
		return nil
	})
	if errors.Is(err, storage.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("%s: listing the lock %s: %w; nothing was done", store.Location(), LockDir, err)
	}
	sort.Slice(out.all, func(i, j int) bool { return out.all[i] < out.all[j] })
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

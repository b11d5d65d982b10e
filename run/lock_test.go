package run

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

func stores(t *testing.T) map[string]storage.Store {
	t.Helper()
	l, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return map[string]storage.Store{"local": l, "mem": mem.New("mem://t")}
}

func shardOpts(t *testing.T, shard string, version int64) LockOptions {
	t.Helper()
	s, err := vacuum.ParseShard(shard)
	if err != nil {
		t.Fatal(err)
	}
	return LockOptions{Purpose: PurposeVacuum, Shard: &s, Version: &version}
}

// TestLockExcludes: while a process holds the table, every other ticket is refused with a
// message naming the holder and unlock, except the other shards of the same count at the same
// pinned version; after the release the table is free again.
func TestLockExcludes(t *testing.T) {
	ctx := context.Background()
	whole := LockOptions{Purpose: PurposeVacuum, Run: "20261201T000000Z-0000000a"}
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				name    string
				held    []LockOptions
				want    LockOptions
				refused bool
			}{
				{"whole beside whole", []LockOptions{whole}, whole, true},
				{"undo beside a run", []LockOptions{whole}, LockOptions{Purpose: PurposeUndo}, true},
				{"purge beside an undo", []LockOptions{{Purpose: PurposeUndo}}, LockOptions{Purpose: PurposePurge}, true},
				{"shard beside whole", []LockOptions{whole}, shardOpts(t, "0/2", 5), true},
				{"whole beside shard", []LockOptions{shardOpts(t, "0/2", 5)}, whole, true},
				{"other shard, same count and version", []LockOptions{shardOpts(t, "0/2", 5)}, shardOpts(t, "1/2", 5), false},
				{"three workers of one run", []LockOptions{shardOpts(t, "0/3", 5), shardOpts(t, "2/3", 5)}, shardOpts(t, "1/3", 5), false},
				{"same shard twice", []LockOptions{shardOpts(t, "0/2", 5)}, shardOpts(t, "0/2", 5), true},
				{"another count", []LockOptions{shardOpts(t, "0/2", 5)}, shardOpts(t, "1/3", 5), true},
				{"another version", []LockOptions{shardOpts(t, "0/2", 5)}, shardOpts(t, "1/2", 6), true},
				{"a worker beside a foreign one in the group", []LockOptions{shardOpts(t, "0/2", 5), shardOpts(t, "1/3", 5)}, shardOpts(t, "1/2", 5), true},
			} {
				t.Run(tc.name, func(t *testing.T) {
					var held []*Lock
					for _, o := range tc.held {
						l, err := Acquire(ctx, store, o)
						if err != nil {
							// The last setup case holds a foreign worker beside the group on purpose:
							// it is refused by the group, so write its ticket as a live one by hand.
							l = plantLive(t, store, o)
						}
						held = append(held, l)
					}
					l, err := Acquire(ctx, store, tc.want)
					if tc.refused {
						var he *HeldError
						if !errors.As(err, &he) || !errors.Is(err, ErrLocked) {
							t.Fatalf("got %v, want a refusal", err)
						}
						self := Self()
						for _, s := range []string{"deltavacuum unlock " + store.Location(), fmt.Sprintf("process %d", self.PID), self.Host} {
							if !strings.Contains(err.Error(), s) {
								t.Errorf("the refusal does not say %q: %v", s, err)
							}
						}
					} else if err != nil {
						t.Fatalf("refused: %v", err)
					}
					l.Release(ctx)
					for _, h := range held {
						if h != nil {
							h.Release(ctx)
						}
					}
					releaseAll(t, store)
					// Free again.
					l, err = Acquire(ctx, store, whole)
					if err != nil {
						t.Fatalf("after every release: %v", err)
					}
					l.Release(ctx)
				})
			}
		})
	}
}

// plantLive writes a live ticket of this process with opts, as Acquire would, without its
// checks (a worker that got in before the others).
func plantLive(t *testing.T, store storage.Store, o LockOptions) *Lock {
	t.Helper()
	names, err := listTickets(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	tk := Ticket{Format: ticketFormat, Number: names.max + 1, Table: store.Location(), Purpose: o.Purpose, Process: Self(), StartedAt: time.Now().UTC()}
	if o.Shard != nil {
		tk.Shard = o.Shard.String()
		tk.SnapshotVersion = o.Version
	}
	writeTicket(t, store, tk)
	return &Lock{store: store, ticket: tk, lost: make(chan struct{}), done: make(chan struct{})}
}

// releaseAll releases every open ticket (the planted ones included).
func releaseAll(t *testing.T, store storage.Store) {
	t.Helper()
	if _, err := Unlock(context.Background(), store, UnlockOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
}

func writeTicket(t *testing.T, store storage.Store, tk Ticket) {
	t.Helper()
	b, err := json.Marshal(tk)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(context.Background(), ticketKey(tk.Number), b); err != nil {
		t.Fatal(err)
	}
}

// TestLockRace: processes that ask for the table at the same moment: exactly one gets it,
// whatever the interleaving (many rounds, on local disk and in memory).
func TestLockRace(t *testing.T) {
	ctx := context.Background()
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for round := 0; round < 40; round++ {
				var won atomic.Int32
				var wg sync.WaitGroup
				locks := make([]*Lock, 6)
				for i := range locks {
					wg.Add(1)
					go func() {
						defer wg.Done()
						o := LockOptions{Purpose: PurposeVacuum}
						if i%3 == 2 {
							v := int64(round)
							s := vacuum.Shard{Index: i % 2, Count: 2 + i%2}
							o.Shard, o.Version = &s, &v
						}
						l, err := Acquire(ctx, store, o)
						if err == nil {
							won.Add(1)
							locks[i] = l
						} else if !errors.Is(err, ErrLocked) {
							t.Errorf("round %d: %v", round, err)
						}
					}()
				}
				wg.Wait()
				if n := won.Load(); n != 1 {
					t.Fatalf("round %d: %d processes hold the table, want exactly 1", round, n)
				}
				for _, l := range locks {
					l.Release(ctx)
				}
			}
			names, err := listTickets(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			if len(names.all) != 1 {
				t.Errorf("after the rounds the lock folder names %d tickets, want only the highest: %v", len(names.all), names.all)
			}
		})
	}
}

// TestLockRaceOnEveryBackend: the lock rests on each store's put-if-absent and on listings that
// show what was written before them: the S3, Azure and GCS test servers too, not only local
// disk and memory. Processes that ask at the same moment: exactly one gets the table.
func TestLockRaceOnEveryBackend(t *testing.T) {
	ctx := context.Background()
	for _, b := range storagetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			store := b.New(t)
			for round := range 6 {
				var won atomic.Int32
				var wg sync.WaitGroup
				locks := make([]*Lock, 4)
				for i := range locks {
					wg.Add(1)
					go func() {
						defer wg.Done()
						l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum})
						if err == nil {
							won.Add(1)
							locks[i] = l
						} else if !errors.Is(err, ErrLocked) {
							t.Errorf("round %d: %v", round, err)
						}
					}()
				}
				wg.Wait()
				if n := won.Load(); n != 1 {
					t.Fatalf("round %d: %d processes hold the table, want exactly 1", round, n)
				}
				for _, l := range locks {
					l.Release(ctx)
				}
			}
		})
	}
}

// TestLockTakesOverTheDead: the ticket of a process of this host that no longer runs (its PID
// free, or reused by another process) is taken over at once, and said so; one of another host
// only once its heartbeat is older than the stale limit.
func TestLockTakesOverTheDead(t *testing.T) {
	ctx := context.Background()
	if Self().Boot == "" {
		t.Skip("this system does not identify its boot: no ticket is taken for one of this host")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := cmd.ProcessState.Pid()
	now := time.Now().UTC()
	other := Self()
	other.Host = "another-host"
	reused := Self()
	reused.Start = "ticks:1" // this PID, another process
	dead := Self()
	dead.PID, dead.Start = deadPID, ""
	for _, tc := range []struct {
		name  string
		proc  Process
		beat  time.Duration // before now; 0: none
		taken bool
		state string
	}{
		{"killed on this host", dead, time.Second, true, StateGone},
		{"PID reused on this host", reused, time.Second, true, StateGone},
		{"another host, fresh heartbeat", other, time.Minute, false, StateLive},
		{"another host, no heartbeat for the limit", other, DefaultStaleAfter + time.Minute, true, StateStale},
		{"this host, alive, no heartbeat for the limit", Self(), DefaultStaleAfter + time.Minute, true, StateStale},
		{"this host, alive", Self(), time.Second, false, StateLive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := mem.New("mem://t")
			tk := Ticket{Format: ticketFormat, Number: 1, Table: "mem://t", Purpose: PurposeVacuum, Run: "20261201T000000Z-0000000b", Process: tc.proc, StartedAt: now.Add(-tc.beat)}
			writeTicket(t, store, tk)
			l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum})
			if !tc.taken {
				var he *HeldError
				if !errors.As(err, &he) || he.Holding.State != tc.state {
					t.Fatalf("got %v, want a refusal by a %s ticket", err, tc.state)
				}
				return
			}
			if err != nil {
				t.Fatalf("not taken over: %v", err)
			}
			defer l.Release(ctx)
			if got := l.TakenOver(); len(got) != 1 || got[0].State != tc.state || got[0].Ticket.Run != tk.Run {
				t.Fatalf("taken over: %+v, want the %s ticket of run %s", got, tc.state, tk.Run)
			}
			if _, err := store.Stat(ctx, releasedKey(1)); err != nil {
				t.Errorf("the dead ticket is not marked released: %v", err)
			}
		})
	}
}

// TestLockFailsClosed: a ticket or heartbeat that cannot be read, or that is dated ahead of the
// clock by more than MaxClockSkew, refuses every run (naming the file and unlock) until unlock
// clears it; unlock refuses a live holder of this host unless forced.
func TestLockFailsClosed(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC()
	good := Ticket{Format: ticketFormat, Number: 1, Table: "mem://t", Purpose: PurposeVacuum, Process: Self(), StartedAt: now}
	goodJSON, _ := json.Marshal(good)
	farBeat, _ := json.Marshal(heartbeat{Ticket: 1, At: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)})
	for _, tc := range []struct {
		name          string
		ticket, beat  string
		startedAhead  time.Duration
		wantInMessage string
	}{
		{"not JSON", `{"format":1,`, "", 0, "not a ticket"},
		{"unknown member", strings.Replace(string(goodJSON), `{`, `{"owner":"x",`, 1), "", 0, "owner"},
		{"duplicate member", strings.Replace(string(goodJSON), `{`, `{"ticket":1,`, 1), "", 0, "duplicate"},
		{"wrong number", strings.Replace(string(goodJSON), `"ticket":1`, `"ticket":2`, 1), "", 0, "names ticket 2"},
		{"newer format", strings.Replace(string(goodJSON), `"format":1`, `"format":2`, 1), "", 0, "format 2"},
		{"no purpose", strings.Replace(string(goodJSON), `"purpose":"vacuum"`, `"purpose":""`, 1), "", 0, "no purpose"},
		{"start in year 9999", "", "", 100 * 365 * 24 * time.Hour, "ahead of this clock"},
		{"heartbeat in year 9999", string(goodJSON), string(farBeat), 0, "ahead of this clock"},
		{"heartbeat truncated", string(goodJSON), `{"ticket":1,"at":"20`, 0, "heartbeat"},
		{"heartbeat of another ticket", string(goodJSON), `{"ticket":7,"at":"` + now.Format(time.RFC3339) + `"}`, 0, "heartbeat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := mem.New("mem://t")
			body := tc.ticket
			if body == "" {
				tk := good
				tk.StartedAt = now.Add(tc.startedAhead)
				b, _ := json.Marshal(tk)
				body = string(b)
			}
			if err := store.PutIfAbsent(ctx, ticketKey(1), []byte(body)); err != nil {
				t.Fatal(err)
			}
			if tc.beat != "" {
				if err := store.Put(ctx, beatKey(1), []byte(tc.beat)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum})
			var he *HeldError
			if !errors.As(err, &he) || he.Holding.State != StateCorrupt {
				t.Fatalf("got %v, want a refusal by a corrupt ticket", err)
			}
			for _, s := range []string{ticketKey(1), "deltavacuum unlock mem://t", tc.wantInMessage} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("the refusal does not say %q: %v", s, err)
				}
			}
			rep, err := Unlock(ctx, store, UnlockOptions{})
			if err != nil || len(rep.Tickets) != 1 || !rep.Tickets[0].Released || rep.Tickets[0].State != StateCorrupt {
				t.Fatalf("unlock: %+v, %v", rep, err)
			}
			l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum})
			if err != nil {
				t.Fatalf("after unlock: %v", err)
			}
			l.Release(ctx)
		})
	}
}

// TestUnlock: unlock shows what each ticket held; it releases stale and dead ones, and keeps a
// live holder unless --force (that holder then loses its lock at its next heartbeat).
func TestUnlock(t *testing.T) {
	ctx := context.Background()
	store := mem.New("mem://t")
	ticks := make(chan time.Time)
	live, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum, Run: "20261201T000000Z-0000000c",
		Ticks: func() (<-chan time.Time, func()) { return ticks, func() {} }})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release(ctx)
	rep, err := Unlock(ctx, store, UnlockOptions{})
	if !errors.Is(err, ErrLocked) || rep.Kept() != 1 || !strings.Contains(rep.Tickets[0].Kept, "this host") || rep.Tickets[0].Ticket.Run != "20261201T000000Z-0000000c" {
		t.Fatalf("unlock of a live holder: %+v, %v", rep, err)
	}
	if _, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum}); !errors.Is(err, ErrLocked) {
		t.Fatalf("the holder kept by unlock no longer holds: %v", err)
	}
	rep, err = Unlock(ctx, store, UnlockOptions{Force: true, DryRun: true})
	if err != nil || !rep.Tickets[0].Released {
		t.Fatalf("unlock --force --dry-run: %+v, %v", rep, err)
	}
	if _, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum}); !errors.Is(err, ErrLocked) {
		t.Fatalf("a dry run released the lock: %v", err)
	}
	if _, err := Unlock(ctx, store, UnlockOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	ticks <- time.Now() // the holder's next beat finds its ticket released
	select {
	case <-live.Lost():
		if !errors.Is(live.Cause(), ErrLockLost) || !strings.Contains(live.Cause().Error(), "released by another process") {
			t.Errorf("cause: %v", live.Cause())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the holder did not lose its lock after unlock --force")
	}
	l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum})
	if err != nil {
		t.Fatalf("after unlock --force: %v", err)
	}
	l.Release(ctx)
}

// failingBeats fails the heartbeat writes as fails says.
type failingBeats struct {
	*mem.Store
	mu    sync.Mutex
	fails []bool
}

func (s *failingBeats) Put(ctx context.Context, key string, data []byte) error {
	if strings.HasSuffix(key, beatSuffix) {
		s.mu.Lock()
		fail := len(s.fails) > 0 && s.fails[0]
		if len(s.fails) > 0 {
			s.fails = s.fails[1:]
		}
		s.mu.Unlock()
		if fail {
			return errors.New("503 SlowDown")
		}
	}
	return s.Store.Put(ctx, key, data)
}

// TestLockLostWhenTheHeartbeatFails: two failed beats in a row lose the lock (others would soon
// take the ticket for stale); one failed beat renewed at the next does not.
func TestLockLostWhenTheHeartbeatFails(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		beats []bool
		lost  bool
	}{{[]bool{true, true}, true}, {[]bool{true, false, true}, false}} {
		t.Run(fmt.Sprint(tc.beats), func(t *testing.T) {
			store := &failingBeats{Store: mem.New("mem://t"), fails: tc.beats}
			ticks := make(chan time.Time)
			l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum, Ticks: func() (<-chan time.Time, func()) { return ticks, func() {} }})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release(ctx)
			for range tc.beats {
				ticks <- time.Now()
			}
			ticks <- time.Now() // taken once the beat before it is done
			if got := l.Cause() != nil; got != tc.lost {
				t.Fatalf("lost = %v (%v), want %v", got, l.Cause(), tc.lost)
			}
			if tc.lost && !errors.Is(l.Cause(), ErrLockLost) {
				t.Errorf("cause: %v", l.Cause())
			}
		})
	}
}

// TestLockPlantedNumbers: a ticket number planted at the top of the range refuses (fail
// closed) rather than wrapping round to a number below live tickets; names that are not
// tickets are ignored.
func TestLockPlantedNumbers(t *testing.T) {
	ctx := context.Background()
	store := mem.New("mem://t")
	store.PutAt(LockDir+"99999999999999999999.json", []byte("{}"), time.Now())
	store.PutAt(LockDir+"notes.txt", []byte("hello"), time.Now())
	if _, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum}); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "by hand") {
		t.Fatalf("got %v, want a refusal", err)
	}
	store = mem.New("mem://t")
	store.PutAt(LockDir+"notes.txt", []byte("hello"), time.Now())
	store.PutAt(LockDir+"1.json", []byte("garbage"), time.Now())
	l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum})
	if err != nil {
		t.Fatalf("names that are not tickets: %v", err)
	}
	l.Release(ctx)
}

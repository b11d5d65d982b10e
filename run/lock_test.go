package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

// plantLive writes a live, admitted ticket of this process with opts (its heartbeat too), as
// Acquire would, without its checks (a worker that got in before the others).
func plantLive(t *testing.T, store storage.Store, o LockOptions) *Lock {
	t.Helper()
	id, err := newTicketID()
	if err != nil {
		t.Fatal(err)
	}
	tk := Ticket{Format: ticketFormat, ID: id, Table: store.Location(), Purpose: o.Purpose, Process: Self(), StartedAt: time.Now().UTC()}
	if o.Shard != nil {
		tk.Shard = o.Shard.String()
		tk.SnapshotVersion = o.Version
	}
	writeTicket(t, store, tk)
	if err := writeBeat(context.Background(), store, id, time.Now()); err != nil {
		t.Fatal(err)
	}
	return &Lock{store: store, ticket: tk, lost: make(chan struct{}), done: make(chan struct{})}
}

// releaseAll removes every ticket (the planted ones included).
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
	key := ticketKey(tk.ID)
	if tk.Format == legacyTicketFormat {
		key = LockDir + fmt.Sprintf("%020d", tk.Number) + ticketSuffix
	}
	if err := store.PutIfAbsent(context.Background(), key, b); err != nil {
		t.Fatal(err)
	}
}

// lockFolder lists what is under LockDir (names and sizes): what a refusal must leave as it was.
func lockFolder(t *testing.T, store storage.Store) []string {
	t.Helper()
	var out []string
	err := store.Walk(context.Background(), "", func(o storage.Object) error {
		out = append(out, fmt.Sprintf("%s %d %t", o.Key, o.Size, o.IsDir))
		return nil
	})
	if err != nil && !errors.Is(err, storage.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// TestLockRace: processes that ask for the table at the same moment: exactly one gets it,
// whatever the interleaving (many rounds, on local disk and in memory); the others leave
// nothing behind, and after the last release the lock folder is empty.
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
				entries, err := listLock(ctx, store)
				if err != nil {
					t.Fatal(err)
				}
				if len(entries) != 2 {
					t.Fatalf("round %d: the lock folder holds %v, want the holder's ticket and heartbeat alone", round, entries)
				}
				for _, l := range locks {
					l.Release(ctx)
				}
			}
			if entries, err := listLock(ctx, store); err != nil || len(entries) != 0 {
				t.Errorf("after the last release the lock folder holds %v (%v)", entries, err)
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
			if entries, err := listLock(ctx, store); err != nil || len(entries) != 0 {
				t.Errorf("after the last release the lock folder holds %v (%v)", entries, err)
			}
		})
	}
}

// TestLockTakesOverTheDead: the ticket of a process of this host that no longer runs (its PID
// free, or reused by another process) is taken over at once, and said so; one of another host,
// or of this host's name in another PID namespace (another container), only once its
// heartbeat is older than the stale limit.
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
	container := dead
	container.PIDNamespace = "pid:[4026531999]" // that PID is free here, not there
	for _, tc := range []struct {
		name  string
		proc  Process
		beat  time.Duration // before now; 0: none
		taken bool
		state string
	}{
		{"killed on this host", dead, time.Second, true, StateGone},
		{"PID reused on this host", reused, time.Second, true, StateGone},
		{"another container of this host, its PID free here", container, time.Second, false, StateLive},
		{"another container of this host, no heartbeat for the limit", container, DefaultStaleAfter + time.Minute, true, StateStale},
		{"another host, fresh heartbeat", other, time.Minute, false, StateLive},
		{"another host, no heartbeat for the limit", other, DefaultStaleAfter + time.Minute, true, StateStale},
		{"this host, alive, no heartbeat for the limit", Self(), DefaultStaleAfter + time.Minute, true, StateStale},
		{"this host, alive", Self(), time.Second, false, StateLive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := mem.New("mem://t")
			id, _ := newTicketID()
			tk := Ticket{Format: ticketFormat, ID: id, Table: "mem://t", Purpose: PurposeVacuum, Run: "20261201T000000Z-0000000b", Process: tc.proc, StartedAt: now.Add(-tc.beat)}
			writeTicket(t, store, tk)
			if err := writeBeat(ctx, store, id, now.Add(-tc.beat)); err != nil {
				t.Fatal(err)
			}
			before := lockFolder(t, store)
			l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum})
			if !tc.taken {
				var he *HeldError
				if !errors.As(err, &he) || he.Holding.State != tc.state {
					t.Fatalf("got %v, want a refusal by a %s ticket", err, tc.state)
				}
				if after := lockFolder(t, store); !slices.Equal(before, after) {
					t.Errorf("the refusal changed the folder:\n%v\n%v", before, after)
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
			for _, k := range []string{ticketKey(id), beatKey(id)} {
				if _, err := store.Stat(ctx, k); !errors.Is(err, storage.ErrNotExist) {
					t.Errorf("%s of the dead ticket is still there: %v", k, err)
				}
			}
		})
	}
}

// TestSameHostNeedsThePIDNamespace: a process of this host name and boot in another PID
// namespace is not of this host (its PID means nothing here).
func TestSameHostNeedsThePIDNamespace(t *testing.T) {
	if Self().Boot == "" {
		t.Skip("this system does not identify its boot")
	}
	p := Self()
	if !p.SameHost() {
		t.Fatal("this process is not of its own host")
	}
	p.PIDNamespace = "pid:[1]"
	if p.SameHost() || p.Gone() {
		t.Errorf("a process in another PID namespace: SameHost %t, Gone %t, want false, false", p.SameHost(), p.Gone())
	}
	p = Self()
	p.Boot = "another-boot"
	if p.SameHost() {
		t.Error("a process of another boot is of this host")
	}
}

// TestLockFailsClosed: a ticket or heartbeat that cannot be read, or that is dated ahead of the
// clock by more than MaxClockSkew, refuses every run (naming the file and unlock, and leaving
// the folder as it was) until unlock clears it.
func TestLockFailsClosed(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC()
	id, _ := newTicketID()
	good := Ticket{Format: ticketFormat, ID: id, Table: "mem://t", Purpose: PurposeVacuum, Process: Self(), StartedAt: now}
	goodJSON, _ := json.Marshal(good)
	farBeat, _ := json.Marshal(heartbeat{ID: id, At: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)})
	for _, tc := range []struct {
		name          string
		ticket, beat  string
		startedAhead  time.Duration
		wantInMessage string
	}{
		{"not JSON", `{"format":2,`, "", 0, "not a ticket"},
		{"unknown member", strings.Replace(string(goodJSON), `{`, `{"owner":"x",`, 1), "", 0, "owner"},
		{"duplicate member", strings.Replace(string(goodJSON), `{`, `{"id":"x",`, 1), "", 0, "duplicate"},
		{"another id", strings.Replace(string(goodJSON), id, "0190a1b2-0000-7000-8000-000000000001", 1), "", 0, "names ticket"},
		{"older format under a new name", strings.Replace(string(goodJSON), `"format":2`, `"format":1`, 1), "", 0, "format 1"},
		{"newer format", strings.Replace(string(goodJSON), `"format":2`, `"format":3`, 1), "", 0, "format 3"},
		{"no purpose", strings.Replace(string(goodJSON), `"purpose":"vacuum"`, `"purpose":""`, 1), "", 0, "no purpose"},
		{"start in year 9999", "", "", 100 * 365 * 24 * time.Hour, "ahead of this clock"},
		{"heartbeat in year 9999", string(goodJSON), string(farBeat), 0, "ahead of this clock"},
		{"heartbeat truncated", string(goodJSON), `{"id":"` + id + `","at":"20`, 0, "heartbeat"},
		{"heartbeat of another ticket", string(goodJSON), `{"id":"x","at":"` + now.Format(time.RFC3339) + `"}`, 0, "heartbeat"},
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
			if err := store.PutIfAbsent(ctx, ticketKey(id), []byte(body)); err != nil {
				t.Fatal(err)
			}
			if tc.beat != "" {
				if err := store.Put(ctx, beatKey(id), []byte(tc.beat)); err != nil {
					t.Fatal(err)
				}
			}
			before := lockFolder(t, store)
			_, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum})
			var he *HeldError
			if !errors.As(err, &he) || he.Holding.State != StateCorrupt {
				t.Fatalf("got %v, want a refusal by a corrupt ticket", err)
			}
			for _, s := range []string{ticketKey(id), "deltavacuum unlock mem://t", tc.wantInMessage} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("the refusal does not say %q: %v", s, err)
				}
			}
			if after := lockFolder(t, store); !slices.Equal(before, after) {
				t.Errorf("the refusal changed the folder:\n%v\n%v", before, after)
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

// TestLockFolderEntries: every entry of the lock folder that refuses a run (a directory or a
// link where a ticket would be, a FIFO named like a ticket, a file deltavacuum does not write,
// a ticket of the numbered queue still open) is named in the refusal, which leaves the folder
// as it was, and unlock shows it and clears it. What is left of the numbered queue once
// released, heartbeats without their ticket and a local store's temporary files refuse nothing.
func TestLockFolderEntries(t *testing.T) {
	ctx := context.Background()
	id, _ := newTicketID()
	now := time.Now().UTC()
	legacy := Ticket{Format: legacyTicketFormat, Number: 41, Table: "x", Purpose: PurposeVacuum, Process: Self(), StartedAt: now}
	gone := legacy
	gone.Number = 42
	gone.Process.Host = "another-host"
	gone.StartedAt = now.Add(-DefaultStaleAfter - time.Hour)
	for _, tc := range []struct {
		name    string
		plant   func(t *testing.T, dir string, store storage.Store)
		refused string // in the refusal; "" for none
	}{
		{"a directory named like a ticket", func(t *testing.T, dir string, _ storage.Store) {
			mkdir(t, filepath.Join(dir, LockDir, id+ticketSuffix, "inside"))
		}, "a directory"},
		{"a link named like a ticket", func(t *testing.T, dir string, _ storage.Store) {
			mkdir(t, filepath.Join(dir, LockDir))
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, LockDir, id+ticketSuffix)); err != nil {
				t.Fatal(err)
			}
		}, "a symbolic link"},
		{"a FIFO named like a ticket", func(t *testing.T, dir string, _ storage.Store) {
			mkdir(t, filepath.Join(dir, LockDir))
			if err := syscall.Mkfifo(filepath.Join(dir, LockDir, id+ticketSuffix), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"a file deltavacuum does not write", func(t *testing.T, dir string, _ storage.Store) {
			mkdir(t, filepath.Join(dir, LockDir))
			if err := os.WriteFile(filepath.Join(dir, LockDir, "notes.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not a ticket"},
		{"a live ticket of the numbered queue", func(t *testing.T, _ string, store storage.Store) {
			writeTicket(t, store, legacy)
		}, "held by"},
		{"a released ticket of the numbered queue, a stray heartbeat, a temporary file", func(t *testing.T, dir string, store storage.Store) {
			writeTicket(t, store, legacy)
			put(t, store, LockDir+"00000000000000000041.released", "{}")
			put(t, store, beatKey(id), `{"id":"`+id+`","at":"2026-01-01T00:00:00Z"}`)
			if err := os.WriteFile(filepath.Join(dir, LockDir, ".x.json.0123456789abcdef.tmp"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"a dead ticket of the numbered queue", func(t *testing.T, _ string, store storage.Store) {
			writeTicket(t, store, gone)
		}, ""},
		{"a pin, which the lock leaves alone", func(t *testing.T, _ string, store storage.Store) {
			put(t, store, pinKey(id), "{}")
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			store, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			tc.plant(t, dir, store)
			before := lockFolder(t, store)
			l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum})
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				l.Release(ctx)
				if _, err := Unlock(ctx, store, UnlockOptions{Force: true}); err != nil {
					t.Fatal(err)
				}
				if _, err := store.Stat(ctx, pinKey(id)); strings.Contains(tc.name, "pin") && err != nil {
					t.Errorf("unlock --force removed a pin: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), LockDir) {
				t.Fatalf("got %v, want a refusal naming the entry (%q)", err, tc.refused)
			}
			if after := lockFolder(t, store); !slices.Equal(before, after) {
				t.Errorf("the refusal changed the folder:\n%v\n%v", before, after)
			}
			rep, err := Unlock(ctx, store, UnlockOptions{Force: strings.Contains(tc.name, "live")})
			if err != nil || len(rep.Removed) == 0 {
				t.Fatalf("unlock: %+v, %v", rep, err)
			}
			if _, err := os.Stat("/etc/passwd"); err != nil {
				t.Fatalf("unlock followed the link: %v", err)
			}
			l, err = Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum})
			if err != nil {
				t.Fatalf("after unlock: %v", err)
			}
			l.Release(ctx)
		})
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func put(t *testing.T, store storage.Store, key, body string) {
	t.Helper()
	if err := store.Put(context.Background(), key, []byte(body)); err != nil {
		t.Fatal(err)
	}
}

// TestRefusalLeavesNoFolder: on local disk, where a ticket makes the folders on its way, a
// refused process removes the lock folders it made and only those: a table without
// _deltavacuum/ has none after the refusal; one with run records keeps them.
func TestRefusalLeavesNoFolder(t *testing.T) {
	ctx := context.Background()
	for _, pre := range []string{"", "_deltavacuum/runs/r.jsonl.gz"} {
		t.Run(fmt.Sprintf("before: %q", pre), func(t *testing.T) {
			dir := t.TempDir()
			store, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			if pre != "" {
				put(t, store, pre, "x")
			}
			before := lockFolder(t, store)
			tidy := newFolderTidier(ctx, store)
			id, _ := newTicketID()
			put(t, store, ticketKey(id), "{}")
			if err := deleteAll(ctx, store, []string{ticketKey(id)}); err != nil {
				t.Fatal(err)
			}
			tidy.restore(ctx)
			if after := lockFolder(t, store); !slices.Equal(before, after) {
				t.Errorf("the folder is not as it was:\n%v\n%v", before, after)
			}
		})
	}
}

// TestUnlock: unlock shows what each ticket held; it removes stale and dead ones, and keeps a
// live holder unless --force (that holder then stops before its next batch of deletes).
func TestUnlock(t *testing.T) {
	ctx := context.Background()
	store := mem.New("mem://t")
	live, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum, Run: "20261201T000000Z-0000000c",
		Ticks: func() (<-chan time.Time, func()) { return nil, func() {} }})
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
	if err := live.Confirm(ctx); err != nil {
		t.Fatalf("confirm before --force: %v", err)
	}
	if _, err := Unlock(ctx, store, UnlockOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	// The next confirmation (before a batch of deletes) finds the ticket gone.
	if err := live.Confirm(ctx); !errors.Is(err, ErrLockLost) || !strings.Contains(err.Error(), "removed by another process") {
		t.Fatalf("confirm after --force: %v", err)
	}
	select {
	case <-live.Lost():
	default:
		t.Fatal("the holder did not lose its lock after unlock --force")
	}
	l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum})
	if err != nil {
		t.Fatalf("after unlock --force: %v", err)
	}
	l.Release(ctx)
}

// TestLockLease: a holder that was away longer than its lease (stopped, suspended: by the
// monotonic clock, or the time since boot, whatever the wall clock says) stops before it
// deletes again, even though its ticket is still there; within the lease, a confirmation older
// than confirmFresh is made again before a delete.
func TestLockLease(t *testing.T) {
	ctx := context.Background()
	real := readClocks
	defer func() { readClocks = real }()
	base := time.Now()
	var mono, boot time.Duration
	readClocks = func() instant {
		// The wall clock stands still (time.Time without a monotonic reading); the others move.
		return instant{at: base.Add(mono), boot: time.Hour + boot}
	}
	store := mem.New("mem://t")
	l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum, Ticks: func() (<-chan time.Time, func()) { return nil, func() {} }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	d := l.Guard(store)
	if _, err := d.Delete(ctx, []string{"x"}); err != nil {
		t.Fatalf("within the lease: %v", err)
	}
	boot = leaseOf(DefaultStaleAfter) // a suspended laptop: only the time since boot moved
	if _, err := d.Delete(ctx, []string{"x"}); !errors.Is(err, ErrLockLost) || !strings.Contains(err.Error(), "suspended") {
		t.Fatalf("past the lease: %v, want the run stopped", err)
	}
	if _, err := store.Stat(ctx, ticketKey(l.Ticket().ID)); err != nil {
		t.Fatalf("the ticket is still there, yet the holder must stop: %v", err)
	}
}

// countingStats counts the Stats of the store (the confirmations).
type countingStats struct {
	*mem.Store
	stats atomic.Int32
}

func (s *countingStats) Stat(ctx context.Context, key string) (storage.Object, error) {
	s.stats.Add(1)
	return s.Store.Stat(ctx, key)
}

// TestGuardConfirmsEveryBatch: each Delete call through the guard looks at the ticket first.
func TestGuardConfirmsEveryBatch(t *testing.T) {
	ctx := context.Background()
	store := &countingStats{Store: mem.New("mem://t")}
	l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum, Ticks: func() (<-chan time.Time, func()) { return nil, func() {} }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	d := l.Guard(store)
	before := store.stats.Load()
	for range 3 {
		if _, err := d.Delete(ctx, []string{"x"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := store.stats.Load() - before; got != 3 {
		t.Errorf("%d confirmations for 3 batches, want 3", got)
	}
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
			store := &failingBeats{Store: mem.New("mem://t"), fails: append([]bool{false}, tc.beats...)} // the first beat is the admission
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

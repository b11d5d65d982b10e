package run

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// flakyStats fails the Stats of the store (the confirmations) while fail is set: with the
// context's error once the context is done (a client gives up), else as an unreachable store.
type flakyStats struct {
	*mem.Store
	fail atomic.Bool
}

func (s *flakyStats) Stat(ctx context.Context, key string) (storage.Object, error) {
	if s.fail.Load() {
		if err := ctx.Err(); err != nil {
			return storage.Object{}, err
		}
		return storage.Object{}, errors.New("503 ServiceUnavailable")
	}
	return s.Store.Stat(ctx, key)
}

func noTicks() (<-chan time.Time, func()) { return nil, func() {} }

// TestConfirmTellsAStopFromAFailure: a confirmation cut short because the run was stopped
// (its context done) returns the context's error and keeps the lock (the run ends as
// interrupted, and releases its ticket); a ticket that cannot be looked at while the run goes
// on loses the lock (fail closed: the run stops rather than delete without knowing).
func TestConfirmTellsAStopFromAFailure(t *testing.T) {
	ctx := context.Background()
	store := &flakyStats{Store: mem.New("mem://t")}
	l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum, Ticks: noTicks})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	store.fail.Store(true)

	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.Confirm(stopped); !errors.Is(err, context.Canceled) {
		t.Fatalf("confirm of a stopped run: %v, want context.Canceled", err)
	}
	if err := l.Cause(); err != nil {
		t.Fatalf("a stopped confirmation lost the lock: %v", err)
	}

	if err := l.Confirm(ctx); !errors.Is(err, ErrLockLost) {
		t.Fatalf("confirm against a store that cannot answer: %v, want ErrLockLost", err)
	}
	if !errors.Is(l.Cause(), ErrLockLost) {
		t.Errorf("cause: %v", l.Cause())
	}
}

// conditionalMem is a store whose deletes can be conditional (as S3's, GCS's and Azure's
// are); it counts them.
type conditionalMem struct {
	*mem.Store
	conditional atomic.Int32
}

func (s *conditionalMem) DeleteIfUnchanged(ctx context.Context, keys, _ []string) ([]storage.DeleteResult, error) {
	s.conditional.Add(1)
	return s.Store.Delete(ctx, keys)
}

// TestGuardKeepsConditionalDeletesGuarded: through the guard a conditional delete stays
// conditional and is confirmed first, like a plain one; once the ticket is gone (unlock
// --force) the next conditional batch deletes nothing and says the lock was lost.
func TestGuardKeepsConditionalDeletesGuarded(t *testing.T) {
	ctx := context.Background()
	store := &conditionalMem{Store: mem.New("mem://t")}
	for _, k := range []string{"a.parquet", "b.parquet"} {
		if err := store.Put(ctx, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum, Ticks: noTicks})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	d, ok := l.Guard(store).(storage.ConditionalDeleter)
	if !ok {
		t.Fatal("the guard hides the store's conditional delete")
	}
	if _, err := d.DeleteIfUnchanged(ctx, []string{"a.parquet"}, []string{"v1"}); err != nil {
		t.Fatal(err)
	}
	if store.conditional.Load() != 1 {
		t.Fatalf("%d conditional deletes, want 1", store.conditional.Load())
	}
	if _, err := store.Stat(ctx, "a.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("a.parquet after its batch: %v", err)
	}

	if _, err := Unlock(ctx, store, UnlockOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DeleteIfUnchanged(ctx, []string{"b.parquet"}, []string{"v1"}); !errors.Is(err, ErrLockLost) {
		t.Fatalf("a conditional batch after unlock --force: %v, want ErrLockLost", err)
	}
	if _, err := store.Stat(ctx, "b.parquet"); err != nil {
		t.Fatalf("b.parquet was deleted after the lock was lost: %v", err)
	}
}

// TestAcquireWaitsThenRefuses: a run told to wait for a holder waits (a second between looks)
// and is still refused, with no lock, when the holder stays; one stopped while it waits
// returns why, with no lock either. Nothing of it is left in the lock folder.
func TestAcquireWaitsThenRefuses(t *testing.T) {
	ctx := context.Background()
	store := mem.New("mem://t")
	plantLive(t, store, LockOptions{Purpose: PurposeVacuum})
	before := lockFolder(t, store)
	l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum, Wait: 1500 * time.Millisecond, Ticks: noTicks})
	if l != nil || !errors.Is(err, ErrLocked) {
		t.Fatalf("waiting on a holder that stays: lock %v, error %v; want no lock and ErrLocked", l, err)
	}

	stopped, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	l, err = Acquire(stopped, store, LockOptions{Purpose: PurposeVacuum, Wait: time.Hour, Ticks: noTicks})
	if l != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stopped while it waits: lock %v, error %v; want no lock and the context's error", l, err)
	}
	if after := lockFolder(t, store); len(after) != len(before) {
		t.Errorf("lock folder %v after the refusals, was %v", after, before)
	}
}

// storedThenFailed stores a ticket, then answers its write with an error (a timeout after
// the store took the request).
type storedThenFailed struct{ *mem.Store }

func (s *storedThenFailed) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := s.Store.PutIfAbsent(ctx, key, data); err != nil {
		return err
	}
	return errors.New("i/o timeout")
}

// TestFailedTicketWriteLeavesNothing: a ticket whose write failed may still have been stored;
// the refused run deletes it, so the folder is left as it was found (no ticket that would
// hold the table until it is stale).
func TestFailedTicketWriteLeavesNothing(t *testing.T) {
	ctx := context.Background()
	store := &storedThenFailed{mem.New("mem://t")}
	l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum, Ticks: noTicks})
	if l != nil || err == nil {
		t.Fatalf("a ticket write that failed: lock %v, error %v", l, err)
	}
	if left := lockFolder(t, store.Store); len(left) != 0 {
		t.Errorf("left in the lock folder: %v", left)
	}
}

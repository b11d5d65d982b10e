package run

import (
	"context"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// hangingWrites is a store whose writes and deletes never answer once hang is set: they return
// only when their context ends.
type hangingWrites struct {
	*mem.Store
	hang  bool
	tried chan struct{}
}

func (h *hangingWrites) wait(ctx context.Context) error {
	select {
	case h.tried <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return ctx.Err()
}

func (h *hangingWrites) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if h.hang {
		return h.wait(ctx)
	}
	return h.Store.PutIfAbsent(ctx, key, data)
}

func (h *hangingWrites) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	if h.hang {
		return nil, h.wait(ctx)
	}
	return h.Store.Delete(ctx, keys)
}

// TestReleaseIsBounded: when a run ends after an interrupt, the release of its ticket is tried
// (the run's context is done, the release is not) but does not wait for ever on a store that
// does not answer: the run ends, and the ticket left goes stale (its error says so).
func TestReleaseIsBounded(t *testing.T) {
	old := heartbeatIOTimeout
	heartbeatIOTimeout = 50 * time.Millisecond
	t.Cleanup(func() { heartbeatIOTimeout = old })
	store := &hangingWrites{Store: mem.New("mem://t"), tried: make(chan struct{}, 1)}
	never := func() (<-chan time.Time, func()) { return make(chan time.Time), func() {} }
	ctx, cancel := context.WithCancel(context.Background())
	l, err := Acquire(ctx, store, LockOptions{Purpose: PurposeVacuum, Ticks: never})
	if err != nil {
		t.Fatal(err)
	}
	store.hang = true
	cancel() // the interrupt
	done := make(chan error)
	go func() { done <- l.Release(ctx) }()
	select {
	case <-store.tried:
	case <-time.After(time.Minute):
		t.Fatal("the release was not tried after the interrupt")
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("a release that could not be written reported no error")
		}
	case <-time.After(time.Minute):
		t.Fatal("Release waits for ever on a store that does not answer")
	}
}

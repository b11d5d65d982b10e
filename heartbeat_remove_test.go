package deltavacuum

import (
	"context"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/undo"
)

// hangingDeletes is a store whose deletes never answer: they return only when their context ends.
type hangingDeletes struct {
	*mem.Store
	deleted chan struct{}
}

func (h *hangingDeletes) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	close(h.deleted)
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestHeartbeatRemovalIsBounded: when a run ends after an interrupt, the removal of its heartbeat
// is tried (the run's context is done, the removal is not) but does not wait for ever on a store
// that does not answer: the run ends, and the heartbeat left goes stale.
func TestHeartbeatRemovalIsBounded(t *testing.T) {
	old := heartbeatIOTimeout
	heartbeatIOTimeout = 50 * time.Millisecond
	t.Cleanup(func() { heartbeatIOTimeout = old })
	store := &hangingDeletes{Store: mem.New("mem://t"), deleted: make(chan struct{})}
	never := func() (<-chan time.Time, func()) { return make(chan time.Time), func() {} }
	ctx, cancel := context.WithCancel(context.Background())
	id := undo.NewID(time.Now())
	h, err := startHeartbeat(ctx, store, id, time.Now(), never, func(error) {})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Stat(context.Background(), undo.HeartbeatKey(id)); err != nil {
		t.Fatalf("no heartbeat written: %v", err)
	}
	cancel() // the interrupt
	done := make(chan struct{})
	go func() { h.stop(ctx, true); close(done) }()
	select {
	case <-store.deleted:
	case <-time.After(time.Minute):
		t.Fatal("the heartbeat's removal was not tried after the interrupt")
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("stop waits for ever on a store whose deletes do not answer")
	}
}

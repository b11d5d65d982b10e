package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// batchBackend is a Backend whose batches are refused (ErrBatchUnsupported), accepted, or
// fail as a whole, counting each kind of request.
type batchBackend struct {
	mode    string // "refuse", "accept", "fail-once" (a 5xx-like failure, then accept)
	delay   time.Duration
	batches atomic.Int64
	singles atomic.Int64
	mu      sync.Mutex
	deleted map[string]bool
}

func (b *batchBackend) List(context.Context, string, ListOptions, func(Page) error) error { return nil }
func (b *batchBackend) Head(context.Context, string) (Entry, error) {
	return Entry{}, storage.ErrNotExist
}
func (b *batchBackend) ReadRange(context.Context, string, string, int64, int64) (io.ReadCloser, error) {
	return nil, errors.New("no reads")
}
func (b *batchBackend) Put(context.Context, string, []byte, bool) error { return nil }
func (b *batchBackend) DeleteDirEntity(context.Context, string) error   { return nil }
func (b *batchBackend) Retryable(error) bool                            { return false }
func (b *batchBackend) markDeleted(name string)                         { b.mu.Lock(); b.deleted[name] = true; b.mu.Unlock() }
func (b *batchBackend) DeleteOne(_ context.Context, name string) error {
	b.singles.Add(1)
	b.markDeleted(name)
	return nil
}
func newBatchBackend(mode string, delay time.Duration) *batchBackend {
	return &batchBackend{mode: mode, delay: delay, deleted: map[string]bool{}}
}

func (b *batchBackend) DeleteBatch(ctx context.Context, names []string) ([]error, error) {
	n := b.batches.Add(1)
	time.Sleep(b.delay) // keep the batch in flight while the others are ready to go
	switch {
	case b.mode == "refuse":
		return nil, fmt.Errorf("%w: HTTP 400 (Either WorkspaceId or ArtifactId are missing)", ErrBatchUnsupported)
	case b.mode == "fail-once" && n == 1:
		return nil, errors.New("HTTP 500 after retries")
	}
	for _, name := range names {
		b.markDeleted(name)
	}
	return make([]error, len(names)), nil
}

func keysN(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprintf("part-%03d.parquet", i)
	}
	return ks
}

func checkAllDeleted(t *testing.T, b *batchBackend, ks []string, res []storage.DeleteResult) {
	t.Helper()
	for _, r := range res {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Key, r.Err)
		}
	}
	for _, k := range ks {
		if !b.deleted[k] {
			t.Errorf("%s not deleted", k)
		}
	}
}

// A service that refuses batches is sent one batch, however many are ready to go at once, and
// the other stores of the same scope send none.
func TestBatchRefusalRememberedPerScope(t *testing.T) {
	scope := "test://" + t.Name()
	ks := keysN(40)
	b1 := newBatchBackend("refuse", 20*time.Millisecond)
	s1 := New(b1, Config{BatchSize: 4, Concurrency: 8, BatchScope: scope})
	res, err := s1.Delete(context.Background(), ks)
	if err != nil {
		t.Fatal(err)
	}
	checkAllDeleted(t, b1, ks, res)
	if got := b1.batches.Load(); got != 1 {
		t.Errorf("%d batches sent to a service that refuses them, want 1 (the probe)", got)
	}
	if got := b1.singles.Load(); got != int64(len(ks)) {
		t.Errorf("%d single deletes, want %d", got, len(ks))
	}
	if !s1.BatchDisabled() || BatchRefusal(scope) == nil {
		t.Errorf("BatchDisabled = %v, BatchRefusal = %v after a refusal", s1.BatchDisabled(), BatchRefusal(scope))
	}

	// Another table on the same host: no batch at all.
	b2 := newBatchBackend("refuse", 0)
	s2 := New(b2, Config{BatchSize: 4, Concurrency: 8, BatchScope: scope})
	if !s2.BatchDisabled() || s2.DeleteBatchSize() != 1 {
		t.Errorf("a new store of a refused scope: BatchDisabled = %v, DeleteBatchSize = %d", s2.BatchDisabled(), s2.DeleteBatchSize())
	}
	res, err = s2.Delete(context.Background(), ks)
	if err != nil {
		t.Fatal(err)
	}
	checkAllDeleted(t, b2, ks, res)
	if got := b2.batches.Load(); got != 0 {
		t.Errorf("%d batches sent by a store of a refused scope, want 0", got)
	}

	// Another scope is not affected.
	b3 := newBatchBackend("accept", 0)
	s3 := New(b3, Config{BatchSize: 4, Concurrency: 8, BatchScope: scope + "-other"})
	res, err = s3.Delete(context.Background(), ks)
	if err != nil {
		t.Fatal(err)
	}
	checkAllDeleted(t, b3, ks, res)
	if b3.batches.Load() != 10 || b3.singles.Load() != 0 || s3.BatchDisabled() {
		t.Errorf("other scope: %d batches, %d singles, BatchDisabled %v; want 10, 0, false", b3.batches.Load(), b3.singles.Load(), s3.BatchDisabled())
	}
}

// Without a scope, a store keeps its refusal to itself (and still sends a single probe).
func TestBatchRefusalWithoutScopeIsPerStore(t *testing.T) {
	ks := keysN(12)
	b1 := newBatchBackend("refuse", 10*time.Millisecond)
	s1 := New(b1, Config{BatchSize: 3, Concurrency: 4})
	if _, err := s1.Delete(context.Background(), ks); err != nil {
		t.Fatal(err)
	}
	if b1.batches.Load() != 1 || !s1.BatchDisabled() {
		t.Errorf("%d batches, BatchDisabled %v; want 1, true", b1.batches.Load(), s1.BatchDisabled())
	}
	b2 := newBatchBackend("accept", 0)
	s2 := New(b2, Config{BatchSize: 3, Concurrency: 4})
	if _, err := s2.Delete(context.Background(), ks); err != nil {
		t.Fatal(err)
	}
	if b2.batches.Load() != 4 || s2.BatchDisabled() {
		t.Errorf("second store: %d batches, BatchDisabled %v; want 4, false", b2.batches.Load(), s2.BatchDisabled())
	}
}

// A probe that fails as a whole (not a refusal) decides nothing: its keys are reported failed,
// the next batch probes again, and batches stay on.
func TestBatchProbeFailureDecidesNothing(t *testing.T) {
	scope := "test://" + t.Name()
	ks := keysN(8)
	b := newBatchBackend("fail-once", 10*time.Millisecond)
	s := New(b, Config{BatchSize: 4, Concurrency: 4, BatchScope: scope})
	res, err := s.Delete(context.Background(), ks)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, r := range res {
		if r.Err != nil {
			failed++
		}
	}
	if failed != 4 {
		t.Errorf("%d keys failed, want the 4 of the failed batch", failed)
	}
	if s.BatchDisabled() || BatchRefusal(scope) != nil {
		t.Error("a failed batch turned batches off")
	}
	if b.batches.Load() != 2 || b.singles.Load() != 0 {
		t.Errorf("%d batches, %d singles; want 2, 0", b.batches.Load(), b.singles.Load())
	}
}

// A delete waiting for another store's probe ends with its context.
func TestBatchProbeWaitEndsWithContext(t *testing.T) {
	bs := &batchSupport{}
	if send, probe, err := bs.begin(context.Background()); !send || !probe || err != nil {
		t.Fatalf("first begin: %v %v %v", send, probe, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := bs.begin(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("begin while a probe is in flight: %v, want the context's error", err)
	}
	bs.end(true, nil)
	if send, probe, err := bs.begin(context.Background()); !send || probe || err != nil {
		t.Fatalf("begin after an accepted probe: %v %v %v", send, probe, err)
	}
}

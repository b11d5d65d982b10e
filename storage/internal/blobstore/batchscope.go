package blobstore

import (
	"context"
	"errors"
	"sync"
)

// batchSupport is what is known of whether a service takes batch deletes. It starts unknown;
// the first batch sent is a probe, and the other batches wait for its answer, so that a
// service that refuses batches is sent one batch, not one per chunk in flight. A batch that
// gets per-key answers means accepted; one the backend reports as ErrBatchUnsupported means
// refused, for good; a batch that fails otherwise (a network error, a 5xx after retries)
// decides nothing, and the next batch probes again.
type batchSupport struct {
	mu       sync.Mutex
	accepted bool
	refused  error         // why the service refused batches; nil until it did
	probing  chan struct{} // non-nil while a probe is in flight; closed when it ends
}

// scopes are the batch supports shared by every store of one service, for the life of the
// process: one table's refusal sends the stores of the next tables on the same host straight
// to single deletes.
var scopes = struct {
	mu sync.Mutex
	m  map[string]*batchSupport
}{m: map[string]*batchSupport{}}

// batchSupportFor returns the shared batch support of scope, or a store's own when scope is "".
func batchSupportFor(scope string) *batchSupport {
	if scope == "" {
		return &batchSupport{}
	}
	scopes.mu.Lock()
	defer scopes.mu.Unlock()
	b := scopes.m[scope]
	if b == nil {
		b = &batchSupport{}
		scopes.m[scope] = b
	}
	return b
}

// BatchRefusal returns why the service of scope refused batch deletes in this process, or nil
// when none of its stores was refused one (for tests and diagnostics).
func BatchRefusal(scope string) error {
	scopes.mu.Lock()
	b := scopes.m[scope]
	scopes.mu.Unlock()
	if b == nil {
		return nil
	}
	return b.refusal()
}

func (b *batchSupport) refusal() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refused
}

// begin is called before a batch is sent. It reports send=false when the service refused
// batches; otherwise send=true, with probe=true when this batch is the one whose answer
// decides (the caller then calls end with probe=true). It waits while another probe is in
// flight, and returns ctx's error if ctx ends first.
func (b *batchSupport) begin(ctx context.Context) (send, probe bool, err error) {
	for {
		b.mu.Lock()
		switch {
		case b.refused != nil:
			b.mu.Unlock()
			return false, false, nil
		case b.accepted:
			b.mu.Unlock()
			return true, false, nil
		case b.probing == nil:
			b.probing = make(chan struct{})
			b.mu.Unlock()
			return true, true, nil
		}
		wait := b.probing
		b.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return false, false, ctx.Err()
		}
	}
}

// end records the outcome of a batch: err is DeleteBatch's error (nil when the batch got its
// per-key answers).
func (b *batchSupport) end(probe bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case errors.Is(err, ErrBatchUnsupported):
		if b.refused == nil {
			b.refused = err
		}
	case err == nil:
		b.accepted = true
	}
	if probe && b.probing != nil {
		close(b.probing)
		b.probing = nil
	}
}

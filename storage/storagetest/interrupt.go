package storagetest

import (
	"context"
	"sync"

	"github.com/deltavacuum/deltavacuum/storage"
)

// CancelAfter is a store whose Delete calls Cancel once N keys in all were passed to it (after
// deleting them): an interrupt (Ctrl-C) that lands while batches are in flight, or, with N the
// number of planned files, right after the last delete.
type CancelAfter struct {
	storage.Store
	N      int
	Cancel context.CancelFunc

	mu   sync.Mutex
	seen int
}

// Delete implements storage.Store.
func (s *CancelAfter) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	res, err := s.Store.Delete(ctx, keys)
	s.mu.Lock()
	s.seen += len(keys)
	if s.seen >= s.N {
		s.Cancel()
	}
	s.mu.Unlock()
	return res, err
}

package blobstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Delete implements storage.Store. Files go first, in batches of Config.BatchSize (or singly,
// concurrently, when the store has no batches or refused one), with at most
// Config.Concurrency requests in flight across the store; keys a batch failed with a
// retryable error are retried with backoff. Directory keys follow, one by one, in the order
// given: the marker or directory entity is deleted only when nothing is below it.
func (s *Store) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	return s.delete(ctx, keys, nil)
}

var _ storage.ConditionalDeleter = (*Store)(nil)

// DeleteIfUnchanged implements storage.ConditionalDeleter: a file key with a version is
// deleted singly, with the backend's precondition (VersionDeleter); on a store without
// conditional deletes such a key fails, so that no version is ever ignored.
func (s *Store) DeleteIfUnchanged(ctx context.Context, keys, versions []string) ([]storage.DeleteResult, error) {
	if len(versions) != len(keys) {
		return nil, fmt.Errorf("delete: %d versions for %d keys", len(versions), len(keys))
	}
	return s.delete(ctx, keys, versions)
}

// delete is Delete, with versions[i] the precondition of keys[i] when versions is not nil.
func (s *Store) delete(ctx context.Context, keys, versions []string) ([]storage.DeleteResult, error) {
	res := make([]storage.DeleteResult, len(keys))
	var files, conditional, dirs []int
	vd, canCondition := s.b.(VersionDeleter)
	canCondition = canCondition && s.cfg.ConditionalDeletes
	for i, k := range keys {
		res[i].Key = k
		switch {
		case !storage.ValidKey(k):
			res[i].Err = invalidKey(k)
		case k == "":
			res[i].Err = errors.New("refusing to delete the store root")
		case strings.HasSuffix(k, "/"):
			dirs = append(dirs, i)
		case versions != nil && versions[i] != "" && !canCondition:
			res[i].Err = fmt.Errorf("delete %s: this store cannot delete on the condition that the object is unchanged; not deleted", k)
		case versions != nil && versions[i] != "":
			conditional = append(conditional, i)
		default:
			files = append(files, i)
		}
		if res[i].Err == nil {
			res[i].Err = errNotAttempted
		}
	}
	var wg sync.WaitGroup
	batch := s.cfg.BatchSize
	if batch > 1 && s.refusal() == nil && len(files) > 1 {
		for start := 0; start < len(files); start += batch {
			chunk := files[start:min(start+batch, len(files))]
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.deleteChunk(ctx, keys, chunk, res)
			}()
		}
	} else {
		s.deleteSingles(ctx, keys, files, res, &wg)
	}
	s.concurrently(ctx, conditional, res, &wg, func(i int) error {
		return vd.DeleteOneIf(ctx, s.cfg.Root+keys[i], versions[i])
	})
	wg.Wait()
	for _, i := range dirs {
		if err := ctx.Err(); err != nil {
			res[i].Err = err
			continue
		}
		res[i].Gone, res[i].Err = s.deleteDir(ctx, keys[i])
	}
	err := ctx.Err()
	for i := range res {
		if res[i].Err != nil && res[i].Err != errNotAttempted {
			res[i].Err = s.explain(res[i].Err)
		}
		if res[i].Err == errNotAttempted {
			if err != nil {
				res[i].Err = err
			} else {
				res[i].Err = errors.New("delete not attempted") // never expected
			}
		}
	}
	return res, err
}

// errNotAttempted marks the results of keys not dealt with yet.
var errNotAttempted = errors.New("not attempted")

func (s *Store) deleteSingles(ctx context.Context, keys []string, idx []int, res []storage.DeleteResult, wg *sync.WaitGroup) {
	s.concurrently(ctx, idx, res, wg, func(i int) error { return s.b.DeleteOne(ctx, s.cfg.Root+keys[i]) })
}

// concurrently runs del(i) for each i of idx, each its own request under the store's bound on
// requests in flight, and records the outcomes in res.
func (s *Store) concurrently(ctx context.Context, idx []int, res []storage.DeleteResult, wg *sync.WaitGroup, del func(i int) error) {
	for _, i := range idx {
		if err := s.acquire(ctx); err != nil {
			res[i].Err = err
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.release()
			setResult(&res[i], del(i))
		}()
	}
}

// setResult records the outcome of a single delete: a missing object counts as gone.
func setResult(r *storage.DeleteResult, err error) {
	switch {
	case err == nil:
		r.Err = nil
	case errors.Is(err, storage.ErrNotExist):
		r.Err, r.Gone = nil, true
	default:
		r.Err = err
	}
}

// deleteChunk deletes one batch, retrying the keys that failed with a retryable error.
func (s *Store) deleteChunk(ctx context.Context, keys []string, idx []int, res []storage.DeleteResult) {
	pending := idx
	for attempt := 1; len(pending) > 0; attempt++ {
		send, probe, err := s.batch.begin(ctx)
		if err == nil && send && s.own.refusal() != nil {
			if probe {
				s.batch.end(probe, errNotAttempted) // decides nothing for the others
			}
			send = false
		}
		if err == nil && send {
			err = s.acquire(ctx)
			if err != nil && probe {
				s.batch.end(probe, err)
			}
		}
		if err != nil {
			for _, i := range pending {
				res[i].Err = err
			}
			return
		}
		if !send {
			var wg sync.WaitGroup
			s.deleteSingles(ctx, keys, pending, res, &wg)
			wg.Wait()
			return
		}
		names := make([]string, len(pending))
		for j, i := range pending {
			names[j] = s.cfg.Root + keys[i]
		}
		errs, err := s.b.DeleteBatch(ctx, names)
		s.release()
		if errors.Is(err, ErrBatchRefusedHere) {
			s.own.end(false, err)
			s.batch.end(probe, errNotAttempted) // this store's refusal says nothing of the service
		} else {
			s.batch.end(probe, err)
		}
		if errors.Is(err, ErrBatchUnsupported) {
			continue
		}
		if err == nil && len(errs) != len(names) {
			err = fmt.Errorf("batch delete: %d results for %d keys", len(errs), len(names))
		}
		if err != nil {
			// The request failed as a whole, after the SDK's own retries: each key may or may
			// not be deleted; report them all as failed.
			for _, i := range pending {
				res[i].Err = err
			}
			return
		}
		var retry []int
		for j, i := range pending {
			e := errs[j]
			switch {
			case e == nil:
				res[i].Err = nil
			case errors.Is(e, storage.ErrNotExist):
				res[i].Err, res[i].Gone = nil, true
			default:
				res[i].Err = e
				if s.b.Retryable(e) && attempt < s.cfg.MaxAttempts {
					retry = append(retry, i)
				}
			}
		}
		pending = retry
		if len(pending) > 0 {
			if err := s.backoff(ctx, attempt); err != nil {
				return // the failed keys keep their last error
			}
		}
	}
}

// errServiceNotEmpty marks a directory the service called not empty (ADLS Gen2 and OneLake:
// 409 DirectoryIsNotEmpty) although the listing just before found nothing below it.
var errServiceNotEmpty = errors.New("the service says the directory is not empty, the listing found it empty")

// deleteDir deletes the directory key (ending in '/') when nothing is below it. ADLS Gen2 and
// OneLake may answer 409 DirectoryIsNotEmpty for a moment after the last child was deleted;
// such an answer is retried, with backoff and a fresh listing each time, up to MaxAttempts.
func (s *Store) deleteDir(ctx context.Context, key string) (gone bool, err error) {
	for attempt := 1; ; attempt++ {
		gone, err = s.deleteDirOnce(ctx, key)
		if !errors.Is(err, errServiceNotEmpty) {
			return gone, err
		}
		if attempt >= s.cfg.MaxAttempts || s.backoff(ctx, attempt) != nil {
			return false, fmt.Errorf("%w: %s", storage.ErrNotEmpty, key)
		}
	}
}

// deleteDirOnce is one attempt of deleteDir.
func (s *Store) deleteDirOnce(ctx context.Context, key string) (gone bool, err error) {
	full := s.cfg.Root + key
	marker, other := false, false
	err = s.b.List(ctx, full, ListOptions{Limit: 2}, func(p Page) error {
		for _, e := range p.Entries {
			if e.Name == full {
				marker = true
			} else if strings.HasPrefix(e.Name, full) {
				other = true
				return ErrStop
			}
		}
		if len(p.Prefixes) > 0 {
			other = true
			return ErrStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrStop) {
		return false, err
	}
	if other {
		return false, fmt.Errorf("%w: %s", storage.ErrNotEmpty, key)
	}
	if marker {
		if err := s.b.DeleteOne(ctx, full); err != nil {
			if errors.Is(err, storage.ErrNotExist) {
				return true, nil
			}
			return false, err
		}
		return false, nil
	}
	if !s.dirEntities(ctx) {
		return true, nil
	}
	name := strings.TrimSuffix(full, "/")
	e, err := s.b.Head(ctx, name)
	switch {
	case errors.Is(err, storage.ErrNotExist):
		return true, nil
	case err != nil:
		return false, err
	case !e.Dir:
		return true, nil // a file of that name; the directory itself does not exist
	}
	if err := s.b.DeleteDirEntity(ctx, name); err != nil {
		switch {
		case errors.Is(err, storage.ErrNotExist):
			return true, nil
		case errors.Is(err, storage.ErrNotEmpty):
			return false, errServiceNotEmpty
		}
		return false, err
	}
	return false, nil
}

// Throttler is implemented by backends that tell a throttling answer (S3 503 SlowDown, Azure
// 503 ServerBusy, GCS 429) from other failures.
type Throttler interface {
	Throttling(err error) bool
}

// ThrottledError is a delete the store kept throttling through every retry.
type ThrottledError struct {
	Location string
	Attempts int
	Err      error
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("%s kept throttling the request through %d attempts (%v): the file is not deleted and the next run plans it again; "+
		"run again later, or send fewer requests (--storage-option max_requests_per_second=N, or a lower concurrency=N)", e.Location, e.Attempts, e.Err)
}

func (e *ThrottledError) Unwrap() error { return e.Err }

// explain says of a delete that failed by throttling which store throttled, and what to do.
func (s *Store) explain(err error) error {
	t, ok := s.b.(Throttler)
	var te *ThrottledError
	if !ok || errors.As(err, &te) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || !t.Throttling(err) {
		return err
	}
	return &ThrottledError{Location: s.cfg.Location, Attempts: s.cfg.MaxAttempts, Err: err}
}

package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// DefaultTrash is the trash folder of --trash given without a folder.
const DefaultTrash = vacuum.DefaultTrash

// RunTrash returns the folder a run moves its files into: the trash folder, then its id.
func RunTrash(trash, id string) string { return vacuum.RunTrash(trash, id) }

// TrashStore is a store whose Delete moves files into a run's trash folder instead of
// deleting them (a file key k goes to Folder+k); directory keys are deleted as usual, when
// empty. Everything else is the store's own.
type TrashStore struct {
	storage.Store
	mover  storage.Mover
	folder string
	// Concurrency bounds the moves in flight per Delete call (default 16).
	Concurrency int
}

// NewTrashStore wraps store so that deletes move files into folder (ending in '/'). It fails
// when the store cannot move files.
func NewTrashStore(store storage.Store, folder string) (*TrashStore, error) {
	m, ok := store.(storage.Mover)
	if !ok || !storage.CanMove(store) {
		return nil, fmt.Errorf("%s cannot move files, so it has no trash: %w", store.Location(), storage.ErrUnsupported)
	}
	if !strings.HasSuffix(folder, "/") || !storage.ValidKey(folder) {
		return nil, fmt.Errorf("invalid trash folder %q", folder)
	}
	return &TrashStore{Store: store, mover: m, folder: folder, Concurrency: 16}, nil
}

var _ storage.ConditionalDeleter = (*TrashStore)(nil)

// Delete implements storage.Store: files are moved, directories deleted.
func (t *TrashStore) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	return t.delete(ctx, keys, nil)
}

// DeleteIfUnchanged implements storage.ConditionalDeleter, so that the trash keeps the
// executor's generation check (GCS): a file listed at a version is moved only while it is
// that version (storage.ConditionalMover); one written again since is kept, its result
// wrapping storage.ErrChanged. A version the store cannot move on fails that key.
func (t *TrashStore) DeleteIfUnchanged(ctx context.Context, keys, versions []string) ([]storage.DeleteResult, error) {
	if len(versions) != len(keys) {
		return nil, fmt.Errorf("delete: %d versions for %d keys", len(versions), len(keys))
	}
	return t.delete(ctx, keys, versions)
}

func (t *TrashStore) move(ctx context.Context, from, version string) error {
	if version == "" {
		return t.mover.Move(ctx, from, t.folder+from)
	}
	cm, ok := t.mover.(storage.ConditionalMover)
	if !ok {
		return fmt.Errorf("%s cannot move on the condition that the file is unchanged; not moved", t.Location())
	}
	return cm.MoveIfUnchanged(ctx, from, t.folder+from, version)
}

// gone tells whether a file whose move failed with moveErr (storage.ErrNotExist) is gone: only
// when it is not at its path either. A move involves two names, and a store that took a
// problem with the trash for the file's absence would otherwise have it counted gone, and
// never deleted, while it is still there.
func (t *TrashStore) gone(ctx context.Context, key string, moveErr error) (bool, error) {
	_, err := t.Store.Stat(ctx, key)
	switch {
	case errors.Is(err, storage.ErrNotExist):
		return true, nil
	case err == nil:
		return false, fmt.Errorf("moving to the trash %s: the store answered %v, but %s is at its path: not moved", t.folder, moveErr, key)
	}
	return false, fmt.Errorf("moving to the trash %s: the store answered %v, and whether %s is still at its path could not be told: %w", t.folder, moveErr, key, err)
}

func (t *TrashStore) delete(ctx context.Context, keys, versions []string) ([]storage.DeleteResult, error) {
	res := make([]storage.DeleteResult, len(keys))
	var dirs []int
	sem := make(chan struct{}, max(1, t.Concurrency))
	var wg sync.WaitGroup
	for i, k := range keys {
		res[i].Key = k
		if strings.HasSuffix(k, "/") {
			dirs = append(dirs, i)
			continue
		}
		if strings.HasPrefix(k, t.folder) {
			res[i].Err = fmt.Errorf("%s is in the trash folder itself", k)
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			res[i].Err = ctx.Err()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			version := ""
			if versions != nil {
				version = versions[i]
			}
			err := t.move(ctx, k, version)
			switch {
			case err == nil:
			case errors.Is(err, storage.ErrChanged):
				res[i].Err = err // kept: the executor reports it as changed since listing
			case errors.Is(err, storage.ErrNotDir):
				// A file where the trash folder (or the file's own folder) must be: the file
				// was not moved, and is not gone.
				res[i].Err = fmt.Errorf("moving to the trash %s: %w", t.folder, err)
			case errors.Is(err, storage.ErrNotExist):
				res[i].Gone, res[i].Err = t.gone(ctx, k, err)
			default:
				res[i].Err = fmt.Errorf("moving to the trash: %w", err)
			}
		}()
	}
	wg.Wait()
	if len(dirs) > 0 {
		dk := make([]string, len(dirs))
		for j, i := range dirs {
			dk[j] = keys[i]
		}
		dr, err := t.Store.Delete(ctx, dk)
		for j, i := range dirs {
			if j < len(dr) {
				res[i] = dr[j]
			} else {
				res[i].Err = err
			}
		}
		if err != nil {
			return res, err
		}
	}
	return res, ctx.Err()
}

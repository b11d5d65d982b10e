package gcs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/internal/blobstore"
)

// A bucket with a hierarchical namespace has folders: resources of their own, which stay when
// the objects below them are deleted, as ADLS Gen2 directories do. The store deletes the
// empty ones it is asked to (a planned directory) through the JSON API's folders.delete,
// which deletes only an empty folder (409 otherwise). Other buckets have no folders and
// make no folder requests.

var _ blobstore.DirEntityProber = (*backend)(nil)

// HasDirEntities implements blobstore.DirEntityProber: whether the bucket has a hierarchical
// namespace, read once from its attributes. A bucket whose attributes cannot be read (no
// storage.buckets.get) counts as flat: an empty folder is then left in place, never a file
// deleted.
func (b *backend) HasDirEntities(ctx context.Context) bool {
	b.hnsOnce.Do(func() {
		attrs, err := b.bucket.Attrs(ctx)
		b.hns = err == nil && attrs.HierarchicalNamespace != nil && attrs.HierarchicalNamespace.Enabled
	})
	return b.hns
}

// headFolder describes the folder name + "/" as a directory entity named name.
func (b *backend) headFolder(ctx context.Context, name string) (blobstore.Entry, error) {
	f, err := b.raw.Folders.Get(b.name, name+"/").Context(ctx).Do()
	if err != nil {
		return blobstore.Entry{}, folderErr("head folder", name, err)
	}
	e := blobstore.Entry{Name: name, Dir: true}
	if t, err := time.Parse(time.RFC3339Nano, f.UpdateTime); err == nil {
		e.ModTime = t
	}
	return e, nil
}

// DeleteDirEntity implements blobstore.Backend: folders.delete of the folder name + "/",
// retried on throttling and server errors (a retry after a delete that landed finds it
// gone).
func (b *backend) DeleteDirEntity(ctx context.Context, name string) error {
	if !b.HasDirEntities(ctx) {
		return fmt.Errorf("gcs: gs://%s has no hierarchical namespace, so no folders (%s)", b.name, name)
	}
	for attempt := 1; ; attempt++ {
		err := b.raw.Folders.Delete(b.name, name+"/").Context(ctx).Do()
		if err == nil || !b.Retryable(err) || attempt >= b.maxAttempts {
			return folderErr("delete folder", name, err)
		}
		t := time.NewTimer(min(200*time.Millisecond<<(attempt-1), 20*time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func folderErr(op, name string, err error) error {
	var ge *googleapi.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ge) && ge.Code == http.StatusNotFound:
		return fmt.Errorf("%w: folder %s/", storage.ErrNotExist, name)
	case errors.As(err, &ge) && ge.Code == http.StatusConflict:
		return fmt.Errorf("%w: folder %s/", storage.ErrNotEmpty, name)
	}
	return fmt.Errorf("gcs %s %s/: %w", op, name, blobstore.SafeError(err))
}

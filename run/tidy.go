package run

import (
	"context"
	"errors"

	"github.com/deltavacuum/deltavacuum/storage"
)

// folderTidier leaves the table's folder as a refused process found it. On stores where
// writing a key makes the folders on its way (local disk, an Azure account with a hierarchical
// namespace), it remembers which of the lock's folders were missing before the ticket was
// written, and a refusal removes those (when empty) after deleting the ticket. Elsewhere a
// folder is only a prefix of keys: deleting the ticket is enough.
type folderTidier struct {
	store storage.Store
	made  []string // the folders to remove, innermost first
}

func newFolderTidier(ctx context.Context, store storage.Store) *folderTidier {
	f := &folderTidier{store: store}
	if !storage.MakesDirectories(ctx, store) {
		return f
	}
	for _, dir := range []string{LockDir, storage.Dir(LockDir)} {
		if _, err := store.Stat(ctx, dir); errors.Is(err, storage.ErrNotExist) {
			f.made = append(f.made, dir)
		}
	}
	return f
}

// restore removes the folders this process made, each only while it is empty (another
// process's ticket keeps it).
func (f *folderTidier) restore(ctx context.Context) {
	if f == nil {
		return
	}
	for _, dir := range f.made {
		res, err := f.store.Delete(ctx, []string{dir})
		if err != nil || len(res) != 1 || (res[0].Err != nil && !res[0].Gone) {
			return
		}
	}
}

func isNotExist(err error) bool { return errors.Is(err, storage.ErrNotExist) }

package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/deltavacuum/deltavacuum/storage"
)

// The note a trash purge keeps beside the record of each run whose trash it deleted
// (<id>.purged.json): part of the run's state (state.go). Without it, a run moved into a trash
// would go on offering an undo after its files were deleted for good, and the undo would find
// nothing. Package undo writes it (undo.Purge), through WritePurgeNote; every front end reads it
// through Summary.Purged and InfoOf.

// purgeSuffix ends the name of a run's purge note.
const purgeSuffix = ".purged.json"

// PurgeNote is what a trash purge did to one run's trash.
type PurgeNote struct {
	Run string `json:"run"`
	// At is when the purge began on that run's trash.
	At time.Time `json:"at"`
	// Trash is the run's trash folder (the record's).
	Trash string `json:"trash"`
	// Done is false while the purge deletes (the note is written before the first delete, so
	// that no front end offers an undo of files being deleted) and true once it has ended.
	Done bool `json:"done"`
	// NumFiles and Bytes are the files of the run deleted from the trash for good.
	NumFiles int64 `json:"numFiles"`
	Bytes    int64 `json:"bytes"`
	// NumLeft are the files of the run still in its trash after the purge: a delete failed, or
	// the table's log names them. An undo can still bring those back.
	NumLeft int64 `json:"numLeft"`
}

func purgeKey(id string) string { return RunsDir + id + purgeSuffix }

// WritePurgeNote keeps n beside the record of its run, replacing an earlier note.
func WritePurgeNote(ctx context.Context, store storage.Store, n *PurgeNote) error {
	if !ValidID(n.Run) {
		return fmt.Errorf("purge note: invalid run id %q", n.Run)
	}
	data, err := json.Marshal(n)
	if err != nil {
		return err
	}
	if err := store.Put(ctx, purgeKey(n.Run), data); err != nil {
		return fmt.Errorf("writing the purge note %s of %s: %w", purgeKey(n.Run), store.Location(), err)
	}
	return nil
}

// ReadPurgeNote reads the purge note of run id: ErrNotExist (wrapped) when its trash was never
// purged. A note that is there but cannot be read is an error other than ErrNotExist: the
// trash was purged, when and how much is not known.
func ReadPurgeNote(ctx context.Context, store storage.Store, id string) (*PurgeNote, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("%q is not a run id", id)
	}
	data, err := storage.ReadAll(ctx, store, purgeKey(id))
	if err != nil {
		return nil, err
	}
	var n PurgeNote
	if err := json.Unmarshal(data, &n, json.RejectUnknownMembers(true)); err != nil {
		return nil, fmt.Errorf("the purge note of run %s cannot be read: %w", id, err)
	}
	switch {
	case n.Run != id:
		return nil, fmt.Errorf("the purge note of run %s names run %q", id, n.Run)
	case n.NumFiles < 0 || n.Bytes < 0 || n.NumLeft < 0:
		return nil, fmt.Errorf("the purge note of run %s counts %d files, %d bytes, %d left", id, n.NumFiles, n.Bytes, n.NumLeft)
	}
	return &n, nil
}

// purgedOf is the purge note of run id as a summary has it: nil when its trash was never
// purged; when a note is there and cannot be read, a note of what is known (the trash was
// purged, at about the time the note was written: an undo must not be offered on a guess that
// it was not).
func purgedOf(ctx context.Context, store storage.Store, id string) *PurgeNote {
	n, err := ReadPurgeNote(ctx, store, id)
	switch {
	case err == nil:
		return n
	case errors.Is(err, storage.ErrNotExist):
		return nil
	}
	n = &PurgeNote{Run: id}
	if o, err := store.Stat(ctx, purgeKey(id)); err == nil {
		n.At = o.ModTime.UTC()
	}
	return n
}

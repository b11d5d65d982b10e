package streaming

import (
	"context"
	"errors"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// TestReadSourcesThatDisagree: when several sources read the table (a self-join), the version
// pinned must serve every one of them.
func TestReadSourcesThatDisagree(t *testing.T) {
	ctx := context.Background()
	// One source is inside the initial snapshot at version 6, the other reads the changes of
	// version 6: the query reads those changes, so the offset is not "inside the initial
	// snapshot" (a reader of the snapshot at 6 does not need what commit 6 removed).
	s := mem.New("file:///checkpoints/q")
	s.PutAt("offsets/0", []byte(offsets(offset(tableID, 6, 3, true), offset(tableID, 6, -1, false))), at)
	s.PutAt("commits/0", []byte("v1\n{}"), at)
	got, err := Read(ctx, s, tableID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 6 || got.InitialSnapshot {
		t.Errorf("an initial snapshot and the changes of version 6: %+v, want version 6 outside the initial snapshot", got)
	}

	// Nothing committed: batch 0 runs again from where each source was told to start. One
	// source starts inside the snapshot at 4, the other from a startingVersion the checkpoint
	// does not record (its end offset, 9, says nothing of its start): it cannot be known.
	s = mem.New("file:///checkpoints/q2")
	s.PutAt("offsets/0", []byte(offsets(offset(tableID, 4, 7, true), offset(tableID, 9, -1, false))), at)
	if got, err := Read(ctx, s, tableID); !errors.Is(err, ErrCheckpoint) {
		t.Errorf("batch 0 not finished, a source started from an unrecorded startingVersion: got %+v, %v; want ErrCheckpoint", got, err)
	}
}

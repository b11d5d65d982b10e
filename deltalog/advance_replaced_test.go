package deltalog

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// TestAdvanceRefusesAReplacedLog: a snapshot read before the table was deleted and written
// anew at its location (or its log restored from another copy) must not be advanced by the new
// log's later commits: applied to the old state, they would leave the new table's earlier
// files out of the snapshot, and a planner would take them for unreferenced. The commit of
// the snapshot's own version, listed again, tells: it is not the file read before.
func TestAdvanceRefusesAReplacedLog(t *testing.T) {
	ctx := context.Background()
	st := mem.New("mem://b/t")
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return clock })
	commitAt(t, st, 0, protocolOf(1, 2), metadataWith(map[string]string{}), addOf("old-a"))
	commitAt(t, st, 1, addOf("old-b"))
	stale, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}

	// The table is deleted and written again: versions 0 to 2, other files.
	clock = clock.Add(time.Hour)
	if _, err := st.Delete(ctx, []string{CommitKey(0), CommitKey(1)}); err != nil {
		t.Fatal(err)
	}
	commitAt(t, st, 0, protocolOf(1, 2), metadataWith(map[string]string{}), addOf("new-x"))
	commitAt(t, st, 1, addOf("new-y"), addOf("new-z"))
	commitAt(t, st, 2, addOf("new-w"))

	adv, _, err := stale.Advance(ctx, st)
	if err == nil {
		t.Fatalf("Advance took the new log's commit 2 onto the old table's state: files %q (the new table's are new-w, new-x, new-y, new-z)", fileSet(t, adv, st))
	}
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "commit 1 ") || !strings.Contains(err.Error(), "mem://b/t") {
		t.Errorf("got %v, want a refusal naming the table and the version", err)
	}

	// Same size, written again later (a copy that did not keep the times): refused too.
	st2 := mem.New("mem://b/t")
	st2.SetClock(func() time.Time { return clock })
	commitAt(t, st2, 0, protocolOf(1, 2), metadataWith(map[string]string{}), addOf("a"))
	s2, err := Load(ctx, st2)
	if err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	if _, err := st2.Delete(ctx, []string{CommitKey(0)}); err != nil {
		t.Fatal(err)
	}
	commitAt(t, st2, 0, protocolOf(1, 2), metadataWith(map[string]string{}), addOf("b"))
	commitAt(t, st2, 1, addOf("c"))
	if _, _, err := s2.Advance(ctx, st2); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a commit of the same size written again later: got %v, want a refusal", err)
	}

	// The unchanged log advances as before.
	st3 := mem.New("mem://b/t")
	commitAt(t, st3, 0, protocolOf(1, 2), metadataWith(map[string]string{}), addOf("a"))
	s3, err := Load(ctx, st3)
	if err != nil {
		t.Fatal(err)
	}
	commitAt(t, st3, 1, addOf("b"))
	if adv, _, err := s3.Advance(ctx, st3); err != nil || adv.Version != 1 {
		t.Errorf("an unchanged log: %v", err)
	}
}

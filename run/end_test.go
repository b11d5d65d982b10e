package run

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestCompletedRunEndsInTheHistory: a completed run with logging on commits VACUUM START and
// VACUUM END, its record names both versions, and _last_vacuum_info says what it covered (the
// version it planned on): an END that succeeds is not taken for a failure, and what follows it
// (the coverage that lets the next LITE run start there) is not skipped.
func TestCompletedRunEndsInTheHistory(t *testing.T) {
	ctx := context.Background()
	store := mem.New("mem://t")
	writeEmptyTable(t, store)
	old := time.Now().Add(-48 * time.Hour)
	for _, k := range []string{"a.parquet", "b.parquet"} {
		store.PutAt(k, []byte("x"), old)
	}
	zero := 0.0
	res, err := Vacuum(ctx, store, Request{
		Options:    vacuum.Options{Now: time.Now(), RetainHours: &zero, DisableRetentionCheck: true},
		Heartbeats: noTicks,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != vacuum.StatusCompleted || res.NumDeletedFiles != 2 {
		t.Fatalf("result: status %s, %d deleted; want COMPLETED, 2", res.Status, res.NumDeletedFiles)
	}
	rec, err := ReadRecord(ctx, store, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.StartVersion == nil || *rec.StartVersion != 1 || rec.EndVersion == nil || *rec.EndVersion != 2 {
		t.Fatalf("record: START %v, END %v; want 1 and 2", rec.StartVersion, rec.EndVersion)
	}
	for _, v := range []int64{1, 2} {
		if _, err := store.Stat(ctx, deltalog.CommitKey(v)); err != nil {
			t.Errorf("commit %d: %v", v, err)
		}
	}
	covered, err := deltalog.ReadLastVacuumInfo(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if covered == nil || *covered != 0 {
		t.Fatalf("_last_vacuum_info: %v, want the planned version 0", covered)
	}
}

// TestRunNoteSaysWhatBecameOfTheRun: the note unlock and a takeover print for a ticket no live
// process holds says, from the run's record, what became of its run: no record (it deleted
// nothing), a record that ended, one that cannot be read, an id that is none.
func TestRunNoteSaysWhatBecameOfTheRun(t *testing.T) {
	ctx := context.Background()
	store := mem.New("mem://t")
	writeEmptyTable(t, store)
	res, err := Vacuum(ctx, store, Request{Heartbeats: noTicks})
	if err != nil {
		t.Fatal(err)
	}
	never := NewID(time.Now())
	for _, tc := range []struct{ id, want string }{
		{res.RunID, "had recorded its end (COMPLETED)"},
		{never, "stopped before it wrote its record, so before its first delete: it deleted nothing"},
		{"not-an-id", "could not be read"},
	} {
		if got := RunNote(ctx, store, tc.id); !strings.Contains(got, tc.want) {
			t.Errorf("RunNote(%s) = %q, want it to say %q", tc.id, got, tc.want)
		}
	}
	if err := store.Put(ctx, recordKey(res.RunID), []byte("not a record")); err != nil {
		t.Fatal(err)
	}
	if got := RunNote(ctx, store, res.RunID); !strings.Contains(got, "its record cannot be read") {
		t.Errorf("RunNote of an unreadable record = %q", got)
	}
}

// writeEmptyTable commits version 0 of a table with no columns and no files to store.
func writeEmptyTable(t *testing.T, store storage.Store) {
	t.Helper()
	if err := deltalog.WriteCommit(context.Background(), store, 0, []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}},
	}); err != nil {
		t.Fatal(err)
	}
}

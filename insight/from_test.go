package insight_test

import (
	"context"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// TestInspectFrom: an inspection given a snapshot read before (Options.From, as the service
// passes the one its policy read) reports what inspecting without it reports, with the
// commits made since seen; a snapshot of another table is refused.
func TestInspectFrom(t *testing.T) {
	ctx := context.Background()
	store := generate(t, 3)
	from, err := deltalog.Load(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	// A commit after the snapshot: the reports must both see it.
	if err := deltalog.WriteCommit(ctx, store, from.Version+1, []any{map[string]any{"commitInfo": map[string]any{"operation": "WRITE"}}}); err != nil {
		t.Fatal(err)
	}
	want, err := insight.Inspect(ctx, store, insight.Options{Now: genNow})
	if err != nil {
		t.Fatal(err)
	}
	got, err := insight.Inspect(ctx, store, insight.Options{Now: genNow, From: from})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != from.Version+1 || got.Version != want.Version || got.Reclaimable.Count != want.Reclaimable.Count || sum(got.Files) != sum(want.Files) {
		t.Errorf("from a snapshot: version %d, reclaimable %+v, files %+v; read in full: version %d, %+v, %+v",
			got.Version, got.Reclaimable, sum(got.Files), want.Version, want.Reclaimable, sum(want.Files))
	}
	other := mem.New("mem://bucket/other")
	if _, err := insight.Inspect(ctx, other, insight.Options{Now: genNow, From: from}); err == nil || !strings.Contains(err.Error(), "another table") {
		t.Errorf("got %v, want the snapshot of another table refused", err)
	}
}

package vacuum_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
	"github.com/deltavacuum/deltavacuum/undo"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// trashGCSTable is gcsTable with an optional transport wrapper.
func trashGCSTable(t *testing.T, wrap func(http.RoundTripper) http.RoundTripper) (storage.Store, *vacuum.Plan) {
	t.Helper()
	ctx := context.Background()
	cfg := storagetest.GCSConfig(t)
	cfg.Endpoint = storagetest.NewGCSProxy(t, cfg.Endpoint).Endpoint
	cfg.WrapTransport = wrap
	st := storagetest.NewGCSConfig(t, cfg)
	err := deltalog.WriteCommit(ctx, st, 0, []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{
			"id": "t", "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{},
			"configuration": map[string]string{}, "createdTime": 0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"p=1/old.parquet", "p=1/.old.parquet.crc", "other.parquet"} {
		if err := st.Put(ctx, k, []byte("first "+k)); err != nil {
			t.Fatal(err)
		}
	}
	p, err := vacuum.NewPlanner(ctx, st, vacuum.Options{RetainHours: ptr(0.0), DisableRetentionCheck: true, Now: time.Now().Add(48 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st, plan
}

// TestTrashKeepsTheGenerationCheck: with --trash (undo.TrashStore), a GCS file written again
// since the listing stays at its live path and is reported as changed since listing, as
// without a trash.
func TestTrashKeepsTheGenerationCheck(t *testing.T) {
	ctx := context.Background()
	st, plan := trashGCSTable(t, nil)
	if err := st.Put(ctx, "p=1/old.parquet", []byte("second")); err != nil {
		t.Fatal(err)
	}
	ts, err := undo.NewTrashStore(st, "_deltavacuum/trash/run1/")
	if err != nil {
		t.Fatal(err)
	}
	res, err := vacuum.Execute(ctx, ts, plan, vacuum.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, rerr := storage.ReadAll(ctx, st, "p=1/old.parquet")
	if rerr != nil || string(got) != "second" {
		t.Errorf("p=1/old.parquet after a trashed run: %q, %v; want the second write kept in place (dropped %+v, deleted %d)", got, rerr, res.Dropped, res.NumDeletedFiles)
	}
	if len(res.Dropped) == 0 || res.Dropped[0].Reason != vacuum.DropChanged {
		t.Errorf("dropped %+v, want p=1/old.parquet changed since listing", res.Dropped)
	}
	if _, err := st.Stat(ctx, "_deltavacuum/trash/run1/p=1/old.parquet"); err == nil {
		t.Error("a copy of the old generation is left in the trash")
	}
}

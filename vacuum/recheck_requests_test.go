package vacuum_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/counting"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestRecheckRequestsOnObjectStores (issues 28 and 37): on the S3 and GCS test servers, the
// re-check before each of 4 batches is one listing of the log, from the next version's
// 21-digit name, which sorts before its 20-digit one (issue 28 left a listing and a HEAD of
// the 21-digit name a batch, and a listing of the whole log before the first); the look
// before the first batch (the run is not recorded) is that batch's. Requests while deleting:
// 4 lists, no HEAD or GET (before: 5 lists and 4 HEADs; GCS 5, with the bucket's settings).
func TestRecheckRequestsOnObjectStores(t *testing.T) {
	for _, sv := range []struct {
		name string
		new  func(t *testing.T) storage.Store
	}{
		{"s3", func(t *testing.T) storage.Store {
			cfg := storagetest.S3Config(t)
			cfg.Concurrency = 1
			return storagetest.NewS3Config(t, cfg)
		}},
		{"gcs", func(t *testing.T) storage.Store {
			cfg := storagetest.GCSConfig(t)
			cfg.Concurrency = 1
			return storagetest.NewGCSConfig(t, cfg)
		}},
	} {
		t.Run(sv.name, func(t *testing.T) {
			ctx := context.Background()
			store := sv.new(t)
			err := deltalog.WriteCommit(ctx, store, 0, []any{
				map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
				map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
					"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				if err := store.Put(ctx, fmt.Sprintf("f%02d.parquet", i), []byte("x")); err != nil {
					t.Fatal(err)
				}
			}
			p, err := vacuum.NewPlanner(ctx, store, vacuum.Options{RetainHours: ptr(0.0), DisableRetentionCheck: true, Now: time.Now().Add(48 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := p.Plan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := counting.Requests(store)
			res, err := vacuum.Execute(ctx, store, plan, vacuum.ExecOptions{BatchSize: 5, Concurrency: 1})
			if err != nil {
				t.Fatal(err)
			}
			after, _ := counting.Requests(store)
			got := after.Sub(before)
			if res.NumDeletedFiles != 20 || got.List != 4 || got.Get != 0 {
				t.Errorf("deleted %d; requests %+v, want 20 deleted, 4 lists and no get", res.NumDeletedFiles, got)
			}
		})
	}
}

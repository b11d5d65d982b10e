package vacuum_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// gcsTable writes a table with no live file and three candidates to a fresh prefix of the
// GCS test server, reached through the proxy that enforces generation preconditions, and
// plans it.
func gcsTable(t *testing.T) (storage.Store, *vacuum.Plan) {
	t.Helper()
	ctx := context.Background()
	cfg := storagetest.GCSConfig(t)
	cfg.Endpoint = storagetest.NewGCSProxy(t, cfg.Endpoint).Endpoint
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
	if plan.Files.Len() != 2 {
		t.Fatalf("planned %v, want p=1/old.parquet and other.parquet", plan.Files)
	}
	return st, plan
}

// TestGCSKeepsAFileWrittenAgain: on GCS, a candidate written again between planning and
// deleting is a new generation; the delete carries the generation listed, so the new object
// is kept with its checksum companion and reported as changed.
func TestGCSKeepsAFileWrittenAgain(t *testing.T) {
	ctx := context.Background()
	st, plan := gcsTable(t)
	if err := st.Put(ctx, "p=1/old.parquet", []byte("second")); err != nil {
		t.Fatal(err)
	}
	res, err := vacuum.Execute(ctx, st, plan, vacuum.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Dropped) != 1 || res.Dropped[0].Path != "p=1/old.parquet" || res.Dropped[0].Reason != vacuum.DropChanged {
		t.Errorf("dropped %+v, want p=1/old.parquet changed since listing", res.Dropped)
	}
	if res.NumDeletedFiles != 1 || len(res.Failed) != 0 {
		t.Errorf("deleted %d, failed %v; want 1, none", res.NumDeletedFiles, res.Failed)
	}
	if got, err := storage.ReadAll(ctx, st, "p=1/old.parquet"); err != nil || string(got) != "second" {
		t.Errorf("p=1/old.parquet reads %q, %v; want the second write", got, err)
	}
	if _, err := st.Stat(ctx, "p=1/.old.parquet.crc"); err != nil {
		t.Errorf("the companion of the kept file: %v", err)
	}
	if _, err := st.Stat(ctx, "other.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("other.parquet: got %v, want deleted", err)
	}
}

// TestGCSWithoutPreconditionDeletesAFileWrittenAgain is the same run through plain deletes:
// the second write is deleted, which is what the precondition prevents.
func TestGCSWithoutPreconditionDeletesAFileWrittenAgain(t *testing.T) {
	ctx := context.Background()
	st, plan := gcsTable(t)
	if err := st.Put(ctx, "p=1/old.parquet", []byte("second")); err != nil {
		t.Fatal(err)
	}
	if _, err := vacuum.Execute(ctx, struct{ storage.Store }{st}, plan, vacuum.ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stat(ctx, "p=1/old.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("got %v, want the second write deleted without the precondition", err)
	}
}

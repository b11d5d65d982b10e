package service

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// TestWebS3PreviewRun: the page's path (preview, the preview's pages, Run now with the
// preview's plan, the run page) through the HTTP handlers, on a table on the S3 test server
// (DELTAVACUUM_TEST_S3_*): a table moved since the preview keeps every file, the previewed
// plan deletes exactly its files.
func TestWebS3PreviewRun(t *testing.T) {
	cfg := storagetest.S3Config(t) // skips without the server (fails in CI)
	store := storagetest.NewS3Config(t, cfg)
	ctx := context.Background()
	now := time.Now().UTC()
	old := now.Add(-time.Hour)
	for _, k := range []string{"live.parquet", "old.parquet", "stray.parquet"} {
		if err := store.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	actions := []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "s3", "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}},
		map[string]any{"add": map[string]any{"path": "live.parquet", "size": 12, "modificationTime": old.UnixMilli(), "dataChange": true}},
		map[string]any{"remove": map[string]any{"path": "old.parquet", "deletionTimestamp": old.UnixMilli(), "dataChange": true}},
	}
	if err := deltalog.WriteCommit(ctx, store, 0, actions); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	yml := "dataDir: " + filepath.Join(dir, "state") + `
tables:
  - id: s3t
    path: s3://` + cfg.Bucket + "/" + cfg.Prefix + `
    # The objects were just written: retention 0, the check off.
    policy: {retention: 0, retentionCheck: disabled}
    storageOptions:
      aws_endpoint: ${E}
      aws_region: ${R}
      aws_access_key_id: ${K}
      aws_secret_access_key: ${S}
      aws_allow_http: ${H}
`
	env := map[string]string{"E": cfg.Endpoint, "R": cfg.Region, "K": cfg.AccessKeyID, "S": cfg.SecretAccessKey, "H": "true"}
	c, err := config.Parse([]byte(yml), "m.yaml", dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err := state.Open(ctx, c.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// A clock a few seconds ahead of the store's, so that the objects just written are older
	// than the cutoff of a zero retention (the library refuses a lead over a minute).
	srv, err := New(Options{Config: c, State: db, Getenv: func(k string) string { return env[k] },
		Now: func() time.Time { return time.Now().Add(5 * time.Second) }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Shutdown(context.Background()) })
	f := &fixture{srv: srv, http: hs, db: db}

	there := func(key string) bool {
		_, err := store.Stat(ctx, key)
		if err != nil && !errors.Is(err, storage.ErrNotExist) {
			t.Fatal(err)
		}
		return err == nil
	}
	plan, body := previewDigest(t, f, "s3t")
	if body["numFilesToDelete"].(float64) != 2 {
		t.Fatalf("preview: %v", body)
	}
	_, page := f.do(t, "GET", "/tables/s3t/previews/"+plan, "")
	if html := page["text"].(string); !strings.Contains(html, "stray.parquet") || !strings.Contains(html, "old.parquet") || !strings.Contains(html, `id="run-now"`) {
		t.Errorf("the preview page lacks the files or Run now: %s", html)
	}
	code, pp := f.do(t, "GET", "/api/tables/s3t/previews/"+plan+"?limit=1&offset=1", "")
	if files := pp["files"].(map[string]any); code != 200 || files["total"].(float64) != 2 || len(files["items"].([]any)) != 1 {
		t.Errorf("a page of the preview: %d %v", code, pp)
	}

	// The table moves: nothing is deleted.
	if err := store.Put(ctx, "stray-2.parquet", []byte("x")); err != nil {
		t.Fatal(err)
	}
	code, started := f.do(t, "POST", "/api/tables/s3t/runs", `{"plan": "`+plan+`"}`)
	if code != 202 {
		t.Fatalf("run: %d %v", code, started)
	}
	srv.Wait()
	_, run := f.do(t, "GET", "/api/runs/"+started["id"].(string), "")
	if run["status"] != "FAILED" || run["figures"].(map[string]any)["planChanged"] != true {
		t.Fatalf("a run of a moved table: %v", run)
	}
	for _, k := range []string{"old.parquet", "stray.parquet", "stray-2.parquet", "live.parquet"} {
		if !there(k) {
			t.Errorf("%s was deleted by a run whose table moved", k)
		}
	}

	// The new preview runs, exactly.
	plan2, body := previewDigest(t, f, "s3t")
	if body["numFilesToDelete"].(float64) != 3 {
		t.Fatalf("new preview: %v", body)
	}
	code, started = f.do(t, "POST", "/api/tables/s3t/runs", `{"plan": "`+plan2+`"}`)
	if code != 202 {
		t.Fatalf("run: %d %v", code, started)
	}
	srv.Wait()
	id := started["id"].(string)
	_, run = f.do(t, "GET", "/api/runs/"+id, "")
	if run["status"] != "COMPLETED" || run["figures"].(map[string]any)["numDeletedFiles"].(float64) != 3 {
		t.Fatalf("the previewed run: %v", run)
	}
	for k, want := range map[string]bool{"old.parquet": false, "stray.parquet": false, "stray-2.parquet": false, "live.parquet": true} {
		if there(k) != want {
			t.Errorf("%s there: %v, want %v", k, !want, want)
		}
	}
	_, rp := f.do(t, "GET", "/runs/"+id, "")
	if html := rp["text"].(string); !strings.Contains(html, "COMPLETED") || strings.Contains(html, cfg.SecretAccessKey) {
		t.Errorf("the run page: %s", html)
	}
	_, tp := f.do(t, "GET", "/tables/s3t", "")
	if html := tp["text"].(string); !strings.Contains(html, "s3://") || strings.Contains(html, cfg.SecretAccessKey) {
		t.Errorf("the table page: %s", html)
	}
}

package service

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/azure"
	"github.com/deltavacuum/deltavacuum/storage/counting"
	"github.com/deltavacuum/deltavacuum/storage/s3"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// remote is a fresh prefix of an object-store test server, with the URI and the storage
// options (from the environment, as the configuration takes them) of a table there.
type remote struct {
	store   storage.Store
	uri     string
	prefix  string // the store prefix the rate limit is given
	options string // the storageOptions mapping, flow style
	env     map[string]string
	// sub opens the store at a folder of the prefix.
	sub func(t *testing.T, folder string) storage.Store
}

func remotes(t *testing.T) map[string]func(t *testing.T) remote {
	return map[string]func(t *testing.T) remote{
		"s3": func(t *testing.T) remote {
			c := storagetest.S3Config(t)
			return remote{
				store: storagetest.NewS3Config(t, c), uri: "s3://" + c.Bucket + "/" + c.Prefix, prefix: "s3://" + c.Bucket + "/",
				options: `{aws_endpoint: "${E}", aws_allow_http: "${H}", aws_access_key_id: "${K}", aws_secret_access_key: "${S}", aws_region: "${R}"}`,
				env:     map[string]string{"E": c.Endpoint, "H": "true", "K": c.AccessKeyID, "S": c.SecretAccessKey, "R": c.Region},
				sub: func(t *testing.T, folder string) storage.Store {
					c2 := c
					c2.Prefix = c.Prefix + "/" + strings.TrimSuffix(folder, "/")
					st, err := s3.New(context.Background(), c2)
					if err != nil {
						t.Fatal(err)
					}
					return st
				},
			}
		},
		"azure": func(t *testing.T) remote {
			c := storagetest.AzureConfig(t)
			return remote{
				store: storagetest.NewAzureConfig(t, c), uri: "az://" + c.Container + "/" + c.Prefix, prefix: "az://" + c.Container + "/",
				options: `{azure_endpoint: "${E}", azure_allow_http: "${H}", azure_storage_account_name: "${A}", azure_storage_account_key: "${K}"}`,
				env:     map[string]string{"E": c.ServiceURL, "H": "true", "A": c.Account, "K": c.AccountKey},
				sub: func(t *testing.T, folder string) storage.Store {
					c2 := c
					c2.Prefix = c.Prefix + "/" + strings.TrimSuffix(folder, "/")
					st, err := azure.New(context.Background(), c2)
					if err != nil {
						t.Fatal(err)
					}
					return st
				},
			}
		},
	}
}

// writeRemoteTable writes, under prefix of store, the table of makeTable: live.parquet
// live, old.parquet removed, stray.parquet never committed.
func writeRemoteTable(t *testing.T, r remote, prefix string) {
	t.Helper()
	ctx := context.Background()
	old := time.Now().Add(-10 * 24 * time.Hour)
	sub := r.sub(t, prefix)
	actions := []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}},
		map[string]any{"add": map[string]any{"path": "live.parquet", "size": 4, "modificationTime": old.UnixMilli(), "dataChange": true}},
		map[string]any{"remove": map[string]any{"path": "old.parquet", "deletionTimestamp": old.UnixMilli(), "dataChange": true}},
	}
	if err := deltalog.WriteCommit(ctx, sub, 0, actions); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"live.parquet", "old.parquet", "stray.parquet"} {
		if err := sub.Put(ctx, f, []byte("data")); err != nil {
			t.Fatal(err)
		}
	}
}

func gone(t *testing.T, store storage.Store, key string) bool {
	t.Helper()
	_, err := store.Stat(context.Background(), key)
	if err != nil && !errors.Is(err, storage.ErrNotExist) {
		t.Fatal(err)
	}
	return errors.Is(err, storage.ErrNotExist)
}

// TestServiceOnObjectStores: on the S3 and Azure test servers, through the API: a run
// started and polled until it ends, the files it moved to the trash gone from the table, its
// run record COMPLETED, its undo bringing them back; every request of the table through the
// store's rate limit; and the tables under a discover root found there.
func TestServiceOnObjectStores(t *testing.T) {
	for name, mk := range remotes(t) {
		t.Run(name, func(t *testing.T) {
			if os.Getenv(map[string]string{"s3": storagetest.EnvS3Endpoint, "azure": storagetest.EnvAzureEndpoint}[name]) == "" && os.Getenv("CI") != "true" {
				t.Skip(name + " test server not configured (source .cache/testservers.env)")
			}
			r := mk(t)
			writeRemoteTable(t, r, "t/")
			writeRemoteTable(t, r, "lake/one/")
			writeRemoteTable(t, r, "lake/two/deeper/")
			f := newFixture(t, `stores:
  - {prefix: "`+r.prefix+`", requestsPerSecond: 500}
storageOptions: `+r.options+`
discover:
  - {id: lake, root: "`+r.uri+`/lake", refresh: 1h}
tables:
  - {id: r, path: "`+r.uri+`/t", policy: {retention: 0, retentionCheck: disabled, trash: true}}
`, r.env, nil)
			ctx := context.Background()
			// Files on object stores are as old as the server says: the run's clock is now.
			f.clock.set(time.Now().Add(2 * time.Second))
			code, body := f.do(t, "POST", "/api/tables/r/runs", "{}")
			if code != 202 {
				t.Fatalf("start: %d %v", code, body)
			}
			id := body["id"].(string)
			var got map[string]any
			for deadline := time.Now().Add(2 * time.Minute); ; {
				_, got = f.do(t, "GET", "/api/runs/"+id, "")
				if got["status"] != "RUNNING" || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond) // polling, as a pipeline does; no assertion on time
			}
			f.srv.Wait()
			_, got = f.do(t, "GET", "/api/runs/"+id, "")
			figs, _ := got["figures"].(map[string]any)
			if got["status"] != "COMPLETED" || figs["numDeletedFiles"].(float64) != 2 {
				t.Fatalf("run %v, want COMPLETED with 2 files", got)
			}
			rec := got["recordId"].(string)
			if !gone(t, r.store, "t/stray.parquet") || !gone(t, r.store, "t/old.parquet") || gone(t, r.store, "t/live.parquet") {
				t.Error("after the run: stray and old must be gone from the table, live kept")
			}
			if gone(t, r.store, "t/"+run.RunTrash(run.DefaultTrash, rec)+"stray.parquet") {
				t.Error("the trashed file is not in the trash")
			}
			recs, err := run.ListRecords(ctx, r.sub(t, "t/"))
			if err != nil || len(recs) != 1 || recs[0].ID != rec || recs[0].Status != run.StatusCompleted {
				t.Errorf("run records %+v %v", recs, err)
			}
			if lr, err := run.Unlock(ctx, r.sub(t, "t/"), run.UnlockOptions{DryRun: true}); err != nil || len(lr.Tickets) != 0 {
				t.Errorf("a lock ticket of the ended run is left open: %+v %v", lr, err)
			}
			code, rep := f.do(t, "POST", "/api/runs/"+id+"/undo", "{}")
			if code != 200 {
				t.Fatalf("undo: %d %v", code, rep)
			}
			if gone(t, r.store, "t/stray.parquet") || gone(t, r.store, "t/old.parquet") {
				t.Errorf("undo did not bring the files back: %v", rep)
			}

			// Every request of the table goes through the store's limiter (the inspection after
			// the undo, in the background, ended first: it shares the limiter).
			f.srv.Wait()
			tb, _ := f.srv.tables.Lookup("r")
			l := f.srv.tables.Limiter(tb.Cfg.Path)
			if l == nil {
				t.Fatal("no limiter for the table's store")
			}
			dt, err := f.srv.tables.Open(ctx, tb)
			if err != nil {
				t.Fatal(err)
			}
			before := l.Sent()
			if _, err := dt.Snapshot(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := dt.Runs(ctx); err != nil {
				t.Fatal(err)
			}
			counted, ok := counting.Requests(dt.Store)
			if !ok || counted.Total() == 0 || l.Sent()-before != counted.Total() {
				t.Errorf("the store sent %d requests, the limiter let %d through", counted.Total(), l.Sent()-before)
			}

			if err := f.srv.Discover(ctx, "lake", f.clock.now()); err != nil {
				t.Fatal(err)
			}
			_, list := f.do(t, "GET", "/api/tables", "")
			var ids []string
			for _, x := range list["tables"].([]any) {
				ids = append(ids, x.(map[string]any)["id"].(string))
			}
			if strings.Join(ids, ",") != "r,lake.one,lake.two.deeper" {
				t.Errorf("tables %v", ids)
			}
			code, prev := f.do(t, "POST", "/api/tables/lake.two.deeper/preview", "{}")
			if code != 200 || prev["filesListed"].(float64) != 3 || prev["numFilesToDelete"].(float64) != 0 {
				// The table's own retention (7 days): its files were just written.
				t.Errorf("preview of a discovered table: %d %v", code, prev)
			}
		})
	}
}

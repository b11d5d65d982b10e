package deltavacuum_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/faulty"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/storage/ratelimit"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// A throttling store: a reverse proxy on 127.0.0.1 in front of the real test server (versitygw,
// Azurite) that answers some requests as a throttling store does (faulty: S3 503 SlowDown, Azure
// 503 ServerBusy, and batch deletes whose keys fail with them) and passes the others through.

// throttleProxy starts the proxy in front of upstream (http://127.0.0.1:PORT[/path]) and returns
// its endpoint with upstream's path. The Host header goes through unchanged, so the requests'
// signatures (SigV4 signs it) still hold.
func throttleProxy(t *testing.T, upstream string, rules ...faulty.Rule) (string, *faulty.Transport) {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	ft := faulty.New(rules...)
	ft.Base = http.DefaultTransport
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// Only the URL: the Host header stays the one the client signed.
			pr.Out.URL.Scheme, pr.Out.URL.Host = u.Scheme, u.Host
		},
		Transport: ft,
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL + strings.TrimSuffix(u.Path, "/"), ft
}

// throttleTable is a table of live, tombstoned and untracked files in ten partitions.
type throttleTable struct {
	live, stale []string
}

func writeThrottleTable(t *testing.T, st storage.Store) throttleTable {
	t.Helper()
	ctx := context.Background()
	var tb throttleTable
	adds := []string{
		`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`,
		`{"metaData":{"id":"throttle","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"p\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["p"],"configuration":{},"createdTime":0}}`,
	}
	var removes []string
	for i := range 150 {
		p := fmt.Sprintf("p=%d/", i%10)
		switch i % 5 {
		case 0, 1, 2:
			k := fmt.Sprintf("%spart-live-%03d.parquet", p, i)
			tb.live = append(tb.live, k)
			adds = append(adds, fmt.Sprintf(`{"add":{"path":%q,"partitionValues":{"p":"%d"},"size":8,"modificationTime":1000,"dataChange":true}}`, k, i%10))
		case 3:
			k := fmt.Sprintf("%spart-old-%03d.parquet", p, i)
			tb.stale = append(tb.stale, k)
			removes = append(removes, fmt.Sprintf(`{"remove":{"path":%q,"deletionTimestamp":1000,"dataChange":true}}`, k))
		case 4:
			tb.stale = append(tb.stale, fmt.Sprintf("%suntracked-%03d.parquet", p, i))
		}
	}
	for i, c := range [][]string{adds, removes} {
		key := fmt.Sprintf("_delta_log/%020d.json", i)
		if err := st.Put(ctx, key, []byte(strings.Join(c, "\n")+"\n")); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range append(append([]string{}, tb.live...), tb.stale...) {
		if err := st.Put(ctx, k, []byte("8 bytes!")); err != nil {
			t.Fatal(err)
		}
	}
	return tb
}

// files lists the store directly (not through the proxy).
func throttleFiles(t *testing.T, st storage.Store) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	if err := st.Walk(context.Background(), "", func(o storage.Object) error {
		if !o.IsDir {
			got[o.Key] = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// throttleStore is a test server, as the command line opens it: its direct store (to write and
// check the table), and the URI and options of the same prefix through an endpoint.
type throttleStore struct {
	name     string
	direct   storage.Store
	upstream string
	uri      string
	options  func(endpoint string) []string
}

func throttleStores(t *testing.T) []func(t *testing.T) throttleStore {
	return []func(t *testing.T) throttleStore{
		func(t *testing.T) throttleStore {
			c := storagetest.S3Config(t)
			return throttleStore{name: "s3", direct: storagetest.NewS3Config(t, c), upstream: c.Endpoint,
				uri: "s3://" + c.Bucket + "/" + c.Prefix,
				options: func(ep string) []string {
					return []string{"aws_endpoint=" + ep, "aws_allow_http=true", "aws_access_key_id=" + c.AccessKeyID,
						"aws_secret_access_key=" + c.SecretAccessKey, "aws_region=" + c.Region}
				}}
		},
		func(t *testing.T) throttleStore {
			c := storagetest.AzureConfig(t)
			return throttleStore{name: "azure", direct: storagetest.NewAzureConfig(t, c), upstream: c.ServiceURL,
				uri: "az://" + c.Container + "/" + c.Prefix,
				options: func(ep string) []string {
					return []string{"azure_endpoint=" + ep, "azure_allow_http=true", "azure_storage_account_name=" + c.Account,
						"azure_storage_account_key=" + c.AccountKey}
				}}
		},
	}
}

func throttleVacuum(t *testing.T, ts throttleStore, endpoint string, extra ...string) (*vacuum.Result, error) {
	t.Helper()
	opts, err := location.ParseStorageOptions(append(ts.options(endpoint), extra...))
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := deltavacuum.OpenWith(context.Background(), ts.uri, opts)
	if err != nil {
		t.Fatal(err)
	}
	retain := 0.0
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return tbl.Vacuum(ctx, deltavacuum.VacuumOptions{
		Options: vacuum.Options{RetainHours: &retain, DisableRetentionCheck: true, Mode: vacuum.ModeFull,
			Now: time.Now().Add(30 * time.Second)},
	})
}

// A store that throttles a third of the requests and fails half the keys of the batch deletes
// with SlowDown / ServerBusy: the run slows down (the rate limit is cut), retries, completes,
// and deletes exactly the plan; every live file and the log are still there.
func TestThrottledRunCompletes(t *testing.T) {
	for _, mk := range throttleStores(t) {
		ts := mk(t)
		t.Run(ts.name, func(t *testing.T) {
			tb := writeThrottleTable(t, ts.direct)
			ep, ft := throttleProxy(t, ts.upstream,
				faulty.Rule{Fault: faulty.HalfBatch, Match: faulty.Batch, Every: 2},
				faulty.Rule{Fault: faulty.Throttle, Every: 3},
			)
			// A ceiling of its own, so that this test's limiter is no other's.
			const rps = 4999
			res, err := throttleVacuum(t, ts, ep, "delete_batch_size=10", fmt.Sprintf("max_requests_per_second=%d", rps), "concurrency=8")
			if err != nil {
				t.Fatalf("the throttled run failed: %v", err)
			}
			if res.NumDeletedFiles+res.NumAlreadyGone != int64(len(tb.stale)) || len(res.Failed) != 0 {
				t.Fatalf("deleted %d (and %d already gone: a batch the server ran, answered failed) of %d stale files, %d failed: %+v", res.NumDeletedFiles, res.NumAlreadyGone, len(tb.stale), len(res.Failed), res.Failed)
			}
			if ft.Injected(faulty.Throttle) == 0 || ft.Injected(faulty.HalfBatch) == 0 {
				t.Fatalf("injected %d throttles and %d half batches", ft.Injected(faulty.Throttle), ft.Injected(faulty.HalfBatch))
			}
			u, _ := url.Parse(ts.uri)
			lim, _ := ratelimit.Shared(location.Scope(u), rps)
			if lim.Throttled() == 0 || lim.Cuts() == 0 {
				t.Errorf("the store throttled, and the limiter saw %d throttling answers and cut the rate %d times", lim.Throttled(), lim.Cuts())
			}
			if lim.Sent() != int64(ft.Requests()) {
				t.Errorf("the limiter let %d requests through, the proxy saw %d: not every attempt waited for a token", lim.Sent(), ft.Requests())
			}
			left := throttleFiles(t, ts.direct)
			for _, k := range tb.live {
				if !left[k] {
					t.Errorf("live file %s was deleted", k)
				}
			}
			for _, k := range tb.stale {
				if left[k] {
					t.Errorf("stale file %s is still there", k)
				}
			}
			for _, k := range []string{"_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json"} {
				if !left[k] {
					t.Errorf("%s was deleted", k)
				}
			}
			planned := map[string]bool{}
			for _, f := range res.Files.MustCollect() {
				planned[f.Path] = true
			}
			if len(planned) != len(tb.stale) {
				t.Errorf("planned %d files, want the %d stale ones", len(planned), len(tb.stale))
			}
		})
	}
}

// A store that throttles every delete for good: the run gives up after its retries, with an
// error naming the store and what to do; nothing is deleted, every file is reported failed,
// none counted as deleted, and the files are all still there.
func TestPermanentlyThrottledRunGivesUp(t *testing.T) {
	for _, mk := range throttleStores(t) {
		ts := mk(t)
		t.Run(ts.name, func(t *testing.T) {
			tb := writeThrottleTable(t, ts.direct)
			ep, ft := throttleProxy(t, ts.upstream, faulty.Rule{Fault: faulty.Throttle, Match: faulty.Deletes})
			res, err := throttleVacuum(t, ts, ep, "delete_batch_size=10", "max_retries=2", "max_requests_per_second=4998")
			if err == nil {
				t.Fatal("a run whose every delete is throttled succeeded")
			}
			if !errors.Is(err, vacuum.ErrPartialFailure) {
				t.Errorf("error %v, want ErrPartialFailure", err)
			}
			if ft.Injected(faulty.Throttle) == 0 {
				t.Fatal("nothing throttled")
			}
			if res == nil {
				t.Fatal("no result")
			}
			if res.NumDeletedFiles != 0 || len(res.Failed) != len(tb.stale) {
				t.Fatalf("deleted %d, failed %d of %d", res.NumDeletedFiles, len(res.Failed), len(tb.stale))
			}
			for _, f := range res.Failed {
				if !strings.Contains(f.Error, "throttl") || !strings.Contains(f.Error, "max_requests_per_second") {
					t.Errorf("%s: error %q says neither that the store throttled nor what to do", f.Path, f.Error)
				}
			}
			if !strings.Contains(err.Error(), ts.uri) && !strings.Contains(err.Error(), strings.TrimSuffix(ts.uri, "/")) {
				t.Errorf("error %q does not name the store %s", err, ts.uri)
			}
			left := throttleFiles(t, ts.direct)
			for _, k := range append(append([]string{}, tb.live...), tb.stale...) {
				if !left[k] {
					t.Errorf("%s was deleted", k)
				}
			}
		})
	}
}

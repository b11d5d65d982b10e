package storagetest_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// md5Proxy is a loopback reverse proxy in front of the S3 test server that answers a
// DeleteObjects request (POST ?delete) as the S3-compatible stores that require Content-MD5
// do (OCI, KS3, older MinIO): 400 InvalidRequest without the header, 400 BadDigest with a
// wrong one. With refuseAll it refuses every DeleteObjects, as a store that never takes the
// header the client sends would. batches counts the DeleteObjects requests that got through.
func md5Proxy(t *testing.T, refuseAll bool) (endpoint string, batches *atomic.Int64) {
	t.Helper()
	cfg := storagetest.S3Config(t)
	target, err := url.Parse(cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	batches = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.URL.Query()["delete"]; ok && r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			sum := md5.Sum(body)
			switch got := r.Header.Get("Content-MD5"); {
			case refuseAll || got == "":
				s3Error(w, "InvalidRequest", "Missing required header for this request: Content-MD5")
				return
			case got != base64.StdEncoding.EncodeToString(sum[:]):
				s3Error(w, "BadDigest", "The Content-MD5 you specified did not match what we received.")
				return
			}
			batches.Add(1)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, batches
}

func s3Error(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>`+msg+`</Message></Error>`)
}

// A store that requires Content-MD5 on DeleteObjects: the whole conformance suite passes
// through it, and batches are used (not single deletes).
func TestS3ConformanceContentMD5Required(t *testing.T) {
	var total, stores atomic.Int64
	storagetest.Run(t, func(t *testing.T) storage.Store {
		ep, batches := md5Proxy(t, false) // skips without the S3 test server
		stores.Add(1)
		t.Cleanup(func() { total.Add(batches.Load()) })
		cfg := storagetest.S3Config(t)
		cfg.Endpoint = ep
		return storagetest.NewS3Config(t, cfg)
	})
	if stores.Load() > 0 && total.Load() == 0 {
		t.Error("no DeleteObjects request passed the Content-MD5 check: the suite deleted singly")
	}
}

// A store that refuses DeleteObjects with a 400 naming Content-MD5 (whatever is sent): the
// store falls back to single deletes and deletes everything.
func TestS3BatchRefusedForContentMD5FallsBack(t *testing.T) {
	ep, batches := md5Proxy(t, true)
	cfg := storagetest.S3Config(t)
	cfg.Endpoint = ep
	st := storagetest.NewS3Config(t, cfg)
	ctx := context.Background()
	keys := []string{"a.parquet", "b.parquet", "p=1/c.parquet"}
	for _, k := range keys {
		if err := st.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := st.Delete(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Errorf("Delete(%q): %v", r.Key, r.Err)
		}
	}
	for _, k := range keys {
		if _, err := st.Stat(ctx, k); err == nil {
			t.Errorf("%s still exists", k)
		}
	}
	if !st.BatchDisabled() {
		t.Error("the store did not fall back to single deletes")
	}
	if batches.Load() != 0 {
		t.Errorf("%d batches got through a proxy that refuses them all", batches.Load())
	}
}

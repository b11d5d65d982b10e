package service

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestTablesOpenThroughTheirStoreLimit: a table opens through its session (session.OpenRef),
// whose transport is the limit of the store its location lies under: every request of a
// table under the prefix passes the limiter, and none of a table elsewhere does. The S3
// endpoint is a server on 127.0.0.1 that answers every request 404.
func TestTablesOpenThroughTheirStoreLimit(t *testing.T) {
	var got atomic.Int64
	s3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><Message>no bucket</Message></Error>`))
	}))
	t.Cleanup(s3.Close)
	opts := `storageOptions: {aws_endpoint: '${E}', aws_allow_http: '${H}', aws_access_key_id: '${K}', aws_secret_access_key: '${S}', aws_region: '${R}'}`
	f := newFixture(t, "stores:\n  - {prefix: 's3://limited/', requestsPerSecond: 1000}\n"+
		"tables:\n  - {id: in, path: 's3://limited/t', "+opts+"}\n  - {id: out, path: 's3://free/t', "+opts+"}\n",
		map[string]string{"E": s3.URL, "H": "true", "K": "AKIDEXAMPLE", "S": "secret", "R": "us-east-1"}, nil)
	ctx := context.Background()
	l := f.srv.tables.Limiter("s3://limited/t")
	if l == nil {
		t.Fatal("no limiter for s3://limited/")
	}
	for _, tc := range []struct {
		id      string
		limited bool
	}{{"in", true}, {"out", false}} {
		tb, ok := f.srv.tables.Lookup(tc.id)
		if !ok {
			t.Fatalf("no table %s", tc.id)
		}
		sentBefore, gotBefore := l.Sent(), got.Load()
		dt, err := f.srv.tables.Open(ctx, tb)
		if err == nil {
			_, err = dt.Snapshot(ctx)
		}
		if err == nil {
			t.Fatalf("table %s: read a table from a store that answers 404", tc.id)
		}
		sent, requests := l.Sent()-sentBefore, got.Load()-gotBefore
		if requests == 0 {
			t.Fatalf("table %s: no request reached the store", tc.id)
		}
		if want := map[bool]int64{true: requests, false: 0}[tc.limited]; sent != want {
			t.Errorf("table %s: the limiter let %d requests through, the store got %d: want %d through the limiter", tc.id, sent, requests, want)
		}
	}
}

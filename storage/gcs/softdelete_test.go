package gcs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/gcs"
)

// gcsAPI answers the few JSON API requests of bucket settings, soft-deleted listings and
// restores as GCS documents them, since fake-gcs-server has neither a softDeletePolicy nor
// softDeleted listings nor restore (v1.56.1).
type gcsAPI struct {
	bucket    string // the bucket resource's JSON, or "" for 403
	live      bool   // an object is live at every name
	liveCRC   string // its crc32c
	softItems []map[string]any
	// restore412, when set, makes the restore answer 412 and an object live afterwards with
	// this crc32c: the restored one (a retry of an attempt that landed) or another one.
	restore412 string

	mu       sync.Mutex
	requests []string
}

func gcsError(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":{"code":%d,"message":%q,"errors":[{"message":%q,"domain":"global","reason":%q}]}}`, code, msg, msg, reason)
}

func (g *gcsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.requests = append(g.requests, r.Method+" "+r.URL.EscapedPath()+" "+keyParams(r.URL.Query()))
	g.mu.Unlock()
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/storage/v1/b/b")
	if !ok {
		gcsError(w, 404, "notFound", "Not Found")
		return
	}
	q := r.URL.Query()
	switch {
	case rest == "" && r.Method == http.MethodGet:
		if g.bucket == "" {
			gcsError(w, 403, "forbidden", "caller does not have storage.buckets.get access to the Google Cloud Storage bucket.")
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		io.WriteString(w, g.bucket)
	case rest == "/o" && r.Method == http.MethodGet:
		items := []map[string]any{}
		if q.Get("softDeleted") == "true" {
			items = g.softItems
		}
		json.NewEncoder(w).Encode(map[string]any{"kind": "storage#objects", "items": items})
	case strings.HasSuffix(rest, "/restore") && r.Method == http.MethodPost:
		if g.restore412 != "" {
			g.live, g.liveCRC = true, g.restore412
			gcsError(w, 412, "conditionNotMet", "At least one of the pre-conditions you specified did not hold.")
			return
		}
		name, _ := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(rest, "/o/"), "/restore"))
		fmt.Fprintf(w, `{"kind":"storage#object","bucket":"b","name":%q,"generation":%q,"size":"5"}`, name, q.Get("generation"))
	case strings.HasPrefix(rest, "/o/") && r.Method == http.MethodGet:
		name, _ := url.PathUnescape(strings.TrimPrefix(rest, "/o/"))
		if !g.live {
			gcsError(w, 404, "notFound", "No such object: b/"+name)
			return
		}
		fmt.Fprintf(w, `{"kind":"storage#object","bucket":"b","name":%q,"generation":"1","size":"5","crc32c":%q}`, name, g.liveCRC)
	default:
		gcsError(w, 400, "invalid", "unexpected request")
	}
}

// keyParams are the query parameters that decide what a request does.
func keyParams(q url.Values) string {
	var out []string
	for _, k := range []string{"generation", "ifGenerationMatch", "softDeleted", "versions", "prefix"} {
		if v := q.Get(k); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return strings.Join(out, "&")
}

func (g *gcsAPI) store(t *testing.T) *gcs.Store {
	t.Helper()
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	st, err := gcs.New(context.Background(), gcs.Config{Bucket: "b", Endpoint: srv.URL, AllowHTTP: true, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func bucketJSON(versioning bool, softSeconds string) string {
	b := map[string]any{"kind": "storage#bucket", "name": "b", "versioning": map[string]any{"enabled": versioning}}
	if softSeconds != "" {
		b["softDeletePolicy"] = map[string]any{"retentionDurationSeconds": softSeconds, "effectiveTime": "2024-03-01T00:00:00Z"}
	}
	out, _ := json.Marshal(b)
	return string(out)
}

// TestRecoveryFromBucketSettings: the kind and days read from versioning and the soft-delete
// policy, as GCS reports them (retentionDurationSeconds; "0" when soft delete is off).
func TestRecoveryFromBucketSettings(t *testing.T) {
	for _, tc := range []struct {
		name, bucket string
		kind         string
		days         int
		detail       string
	}{
		{"default 7 days", bucketJSON(false, "604800"), storage.RecoverySoftDelete, 7, "7 days"},
		{"a second over 10 days", bucketJSON(false, "864001"), storage.RecoverySoftDelete, 11, "11 days"},
		{"an hour", bucketJSON(false, "3600"), storage.RecoverySoftDelete, 1, "1 days"},
		{"soft delete off", bucketJSON(false, "0"), storage.RecoveryNone, 0, "neither"},
		{"versioning only", bucketJSON(true, "0"), storage.RecoveryVersioning, 0, "soft delete is off"},
		{"both", bucketJSON(true, "604800"), storage.RecoveryVersioning, 0, "and soft delete for 7 days"},
		{"no policy reported", bucketJSON(false, ""), storage.RecoveryUnknown, 0, "no softDeletePolicy"},
		{"versioning, no policy reported", bucketJSON(true, ""), storage.RecoveryVersioning, 0, "not reported"},
		{"forbidden", "", storage.RecoveryUnknown, 0, "storage.buckets.get"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := (&gcsAPI{bucket: tc.bucket}).store(t).Recovery(context.Background())
			if r.Kind != tc.kind || r.Days != tc.days || !strings.Contains(r.Detail, tc.detail) {
				t.Errorf("got %+v, want kind %s, %d days, detail with %q", r, tc.kind, tc.days, tc.detail)
			}
		})
	}
}

func softItem(name string, gen, size int64, softDeleted bool) map[string]any {
	m := map[string]any{"kind": "storage#object", "bucket": "b", "name": name, "generation": fmt.Sprint(gen), "size": fmt.Sprint(size), "crc32c": "AAAAAQ=="}
	if softDeleted {
		m["softDeleteTime"] = "2026-11-30T10:00:00Z"
		m["hardDeleteTime"] = "2026-12-07T10:00:00Z"
	}
	return m
}

// TestRestoreSoftDeleted: the newest soft-deleted generation of exactly the key and the size
// is restored, with ifGenerationMatch=0 (nothing live may be replaced); entries of other
// names, other sizes, or without softDeleteTime (an emulator that ignores softDeleted) are
// never chosen.
func TestRestoreSoftDeleted(t *testing.T) {
	g := &gcsAPI{bucket: bucketJSON(false, "604800"), softItems: []map[string]any{
		softItem("t/a.parquet", 100, 5, true),
		softItem("t/a.parquet", 300, 5, true),
		softItem("t/a.parquet", 400, 6, true),  // another size
		softItem("t/a.parquet", 500, 5, false), // not soft-deleted
		softItem("t/a.parquet2", 600, 5, true), // another name
		softItem("t/a.parquet", 200, 5, true),
	}}
	st := g.store(t)
	if err := st.Restore(context.Background(), storage.Deleted{Key: "t/a.parquet", Size: 5}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /storage/v1/b/b/o/t%2Fa.parquet ",
		"GET /storage/v1/b/b/o versions=true&prefix=t/a.parquet",
		"GET /storage/v1/b/b/o softDeleted=true&versions=false&prefix=t/a.parquet",
		"POST /storage/v1/b/b/o/t%2Fa.parquet/restore generation=300&ifGenerationMatch=0",
	}
	if diff := cmp.Diff(want, g.requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestRestoreSoftDeletedRefusals: a live object is ErrExist before anything is restored; a
// 412 on the restore (written meanwhile) is ErrExist; no generation of the size is
// ErrNotExist, and nothing is restored.
func TestRestoreSoftDeletedRefusals(t *testing.T) {
	ctx := context.Background()
	d := storage.Deleted{Key: "a.parquet", Size: 5}
	live := &gcsAPI{bucket: bucketJSON(false, "604800"), live: true, softItems: []map[string]any{softItem("a.parquet", 1, 5, true)}}
	if err := live.store(t).Restore(ctx, d); !errors.Is(err, storage.ErrExist) {
		t.Errorf("live object: got %v, want ErrExist", err)
	}
	raced := &gcsAPI{bucket: bucketJSON(false, "604800"), restore412: "AAAAAg==", softItems: []map[string]any{softItem("a.parquet", 1, 5, true)}}
	if err := raced.store(t).Restore(ctx, d); !errors.Is(err, storage.ErrExist) {
		t.Errorf("412 on restore, other bytes written meanwhile: got %v, want ErrExist", err)
	}
	landed := &gcsAPI{bucket: bucketJSON(false, "604800"), restore412: "AAAAAQ==", softItems: []map[string]any{softItem("a.parquet", 1, 5, true)}}
	if err := landed.store(t).Restore(ctx, d); err != nil {
		t.Errorf("412 answering a retry whose first attempt landed (the same bytes live): got %v, want nil", err)
	}
	none := &gcsAPI{bucket: bucketJSON(false, "604800"), softItems: []map[string]any{softItem("a.parquet", 1, 4, true)}}
	err := none.store(t).Restore(ctx, d)
	if !errors.Is(err, storage.ErrNotExist) || !strings.Contains(err.Error(), "soft-delete window") {
		t.Errorf("no generation of the size: got %v, want ErrNotExist saying why", err)
	}
	for _, r := range append(live.requests, none.requests...) {
		if strings.Contains(r, "/restore") {
			t.Errorf("restored: %s", r)
		}
	}
}

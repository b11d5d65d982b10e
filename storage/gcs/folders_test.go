package gcs_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/gcs"
)

// hnsAPI answers, as GCS documents them, the JSON API requests of a bucket with (or without)
// a hierarchical namespace: the bucket resource, object listings, heads and deletes, and
// folders.get / folders.delete (which refuses a folder with objects or folders below it:
// 409). fake-gcs-server has no folders (v1.56.1).
type hnsAPI struct {
	hns       bool
	forbidden bool // the bucket resource answers 403

	mu       sync.Mutex
	objects  map[string]bool
	folders  map[string]bool // names end in '/'
	requests []string        // folder requests and deletes
}

func (h *hnsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/storage/v1/b/b")
	if !ok {
		gcsError(w, 404, "notFound", "Not Found")
		return
	}
	if strings.HasPrefix(rest, "/folders/") || r.Method == http.MethodDelete {
		h.requests = append(h.requests, r.Method+" "+rest)
	}
	switch {
	case rest == "" && r.Method == http.MethodGet:
		if h.forbidden {
			gcsError(w, 403, "forbidden", "caller does not have storage.buckets.get access")
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"kind": "storage#bucket", "name": "b", "hierarchicalNamespace": map[string]any{"enabled": h.hns}})
	case rest == "/o" && r.Method == http.MethodGet:
		h.list(w, r.URL.Query())
	case strings.HasPrefix(rest, "/o/"):
		name, _ := url.PathUnescape(strings.TrimPrefix(rest, "/o/"))
		if !h.objects[name] {
			gcsError(w, 404, "notFound", "No such object: b/"+name)
			return
		}
		if r.Method == http.MethodDelete {
			delete(h.objects, name)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"kind": "storage#object", "bucket": "b", "name": name, "generation": "1", "size": "1"})
	case strings.HasPrefix(rest, "/folders/"):
		name, _ := url.PathUnescape(strings.TrimPrefix(rest, "/folders/"))
		if !h.hns {
			gcsError(w, 400, "invalid", "The bucket does not have hierarchical namespace enabled.")
			return
		}
		if !h.folders[name] {
			gcsError(w, 404, "notFound", "The folder does not exist.")
			return
		}
		if r.Method == http.MethodGet {
			json.NewEncoder(w).Encode(map[string]any{"kind": "storage#folder", "bucket": "b", "name": name, "updateTime": "2026-11-01T10:00:00.123Z", "metageneration": "1"})
			return
		}
		for o := range h.objects {
			if strings.HasPrefix(o, name) {
				gcsError(w, 409, "conflict", "The folder you tried to delete is not empty.")
				return
			}
		}
		for f := range h.folders {
			if f != name && strings.HasPrefix(f, name) {
				gcsError(w, 409, "conflict", "The folder you tried to delete is not empty.")
				return
			}
		}
		delete(h.folders, name)
		w.WriteHeader(http.StatusNoContent)
	default:
		gcsError(w, 400, "invalid", "unexpected request")
	}
}

// list answers an object listing: objects only (folders are not objects; without
// includeFoldersAsPrefixes an empty folder is not listed), with a delimiter's prefixes.
func (h *hnsAPI) list(w http.ResponseWriter, q url.Values) {
	prefix, delim := q.Get("prefix"), q.Get("delimiter")
	items := []map[string]any{}
	prefixes := map[string]bool{}
	for o := range h.objects {
		if !strings.HasPrefix(o, prefix) {
			continue
		}
		if i := strings.Index(o[len(prefix):], "/"); delim == "/" && i >= 0 {
			prefixes[o[:len(prefix)+i+1]] = true
			continue
		}
		items = append(items, map[string]any{"name": o, "size": "1", "generation": "1", "updated": "2026-11-01T10:00:00Z"})
	}
	sort.Slice(items, func(i, j int) bool { return items[i]["name"].(string) < items[j]["name"].(string) })
	ps := []string{}
	for p := range prefixes {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	json.NewEncoder(w).Encode(map[string]any{"kind": "storage#objects", "items": items, "prefixes": ps})
}

func (h *hnsAPI) store(t *testing.T) *gcs.Store {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	st, err := gcs.New(context.Background(), gcs.Config{Bucket: "b", Endpoint: srv.URL, AllowHTTP: true, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newHNS(hns bool) *hnsAPI {
	return &hnsAPI{hns: hns,
		objects: map[string]bool{"full/x.parquet": true},
		folders: map[string]bool{"empty/": true, "p=a b%3A/": true, "p=a b%3A/ü/": true, "full/": true, "outer/": true, "outer/inner/": true},
	}
}

// TestHNSFoldersDeleted: on a bucket with a hierarchical namespace an empty folder is a
// directory (Stat) and a directory delete deletes it (folders.delete, its name encoded);
// one with objects below is not empty and never sent; one the service calls not empty
// (a folder below it) is not empty; a missing one is gone.
func TestHNSFoldersDeleted(t *testing.T) {
	ctx := context.Background()
	h := newHNS(true)
	st := h.store(t)
	if o, err := st.Stat(ctx, "empty/"); err != nil || !o.IsDir || o.ModTime.IsZero() {
		t.Errorf("Stat(empty/) = %+v, %v; want a directory with the folder's time", o, err)
	}
	res, err := st.Delete(ctx, []string{"p=a b%3A/ü/", "p=a b%3A/", "empty/", "full/", "outer/", "missing/"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"deleted", "deleted", "deleted", "not empty", "not empty", "gone"} {
		r := res[i]
		got := "deleted"
		switch {
		case errors.Is(r.Err, storage.ErrNotEmpty):
			got = "not empty"
		case r.Err != nil:
			got = r.Err.Error()
		case r.Gone:
			got = "gone"
		}
		if got != want {
			t.Errorf("%s: got %s, want %s", r.Key, got, want)
		}
	}
	if diff := cmp.Diff(map[string]bool{"full/": true, "outer/": true, "outer/inner/": true}, h.folders); diff != "" {
		t.Errorf("folders left (-want +got):\n%s", diff)
	}
	want := []string{
		"GET /folders/p%3Da%20b%253A%2F%C3%BC%2F", "DELETE /folders/p%3Da%20b%253A%2F%C3%BC%2F",
		"GET /folders/p%3Da%20b%253A%2F", "DELETE /folders/p%3Da%20b%253A%2F",
		"GET /folders/empty%2F", "DELETE /folders/empty%2F",
		"GET /folders/outer%2F", "DELETE /folders/outer%2F",
		"GET /folders/missing%2F",
	}
	got := h.requests[1:] // after Stat's folder get
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestFlatBucketHasNoFolders: without a hierarchical namespace, or when the bucket's settings
// cannot be read, no folder request is sent and a directory with nothing below it is gone.
func TestFlatBucketHasNoFolders(t *testing.T) {
	for name, h := range map[string]*hnsAPI{"flat": newHNS(false), "forbidden": func() *hnsAPI { h := newHNS(true); h.forbidden = true; return h }()} {
		t.Run(name, func(t *testing.T) {
			st := h.store(t)
			res, err := st.Delete(context.Background(), []string{"empty/"})
			if err != nil || res[0].Err != nil || !res[0].Gone {
				t.Errorf("got %+v, %v; want gone", res, err)
			}
			if _, err := st.Stat(context.Background(), "empty/"); !errors.Is(err, storage.ErrNotExist) {
				t.Errorf("Stat(empty/) = %v, want ErrNotExist", err)
			}
			if len(h.requests) != 0 || !h.folders["empty/"] {
				t.Errorf("requests %q; want none, and the folder left", h.requests)
			}
		})
	}
}

package counting_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/counting"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		method, url string
		want        counting.Kind
	}{
		// S3
		{"GET", "http://h/bucket?list-type=2&prefix=a%2F&delimiter=%2F", counting.List},
		{"GET", "http://h/bucket/key", counting.Get},
		{"HEAD", "http://h/bucket/key", counting.Get},
		{"PUT", "http://h/bucket/key", counting.Put},
		{"POST", "http://h/bucket?delete", counting.Delete},
		{"DELETE", "http://h/bucket/key", counting.Delete},
		// Azure Blob and DFS
		{"GET", "http://h/acct/c?restype=container&comp=list&prefix=x", counting.List},
		{"GET", "http://h/acct/c/blob", counting.Get},
		{"PUT", "http://h/acct/c/blob", counting.Put},
		{"POST", "http://h/acct/c?restype=container&comp=batch", counting.Delete},
		{"DELETE", "http://h/fs/dir?recursive=false", counting.Delete},
		{"GET", "http://h/fs?resource=filesystem&directory=x", counting.List},
		// GCS JSON API
		{"GET", "http://h/storage/v1/b/bkt/o?prefix=x&delimiter=%2F", counting.List},
		{"GET", "http://h/storage/v1/b/bkt/o/x%2Fo", counting.Get},
		{"GET", "http://h/storage/v1/b/bkt/o/x%2Fo?alt=media", counting.Get},
		{"POST", "http://h/upload/storage/v1/b/bkt/o?uploadType=multipart", counting.Put},
		{"DELETE", "http://h/storage/v1/b/bkt/o/x", counting.Delete},
	}
	for _, tc := range cases {
		r, err := http.NewRequest(tc.method, tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := counting.Classify(r); got != tc.want {
			t.Errorf("%s %s: %v, want %v", tc.method, tc.url, got, tc.want)
		}
	}
}

func TestWrap(t *testing.T) {
	ctx := context.Background()
	s := counting.Wrap(mem.New("mem://x"))
	s.Put(ctx, "a/b", []byte("x"))
	s.PutIfAbsent(ctx, "c", []byte("x"))
	s.Stat(ctx, "c")
	storage.ReadAll(ctx, s, "c")
	s.Walk(ctx, "", func(storage.Object) error { return nil })
	s.Delete(ctx, []string{"a/b", "c"})
	want := counting.RequestCounts{List: 2, Get: 3, Put: 2, Delete: 2}
	if got := s.Requests(); got != want {
		t.Fatalf("%+v, want %+v", got, want)
	}
	if rc, ok := counting.Requests(s); !ok || rc != want {
		t.Fatal("Requests")
	}
}

// The object stores count every HTTP request, by kind.
func TestBackendRequestCounts(t *testing.T) {
	for _, b := range []struct {
		name    string
		new     func(t *testing.T) storage.Store
		deletes int64 // requests to delete 3 keys
	}{
		{"s3", func(t *testing.T) storage.Store { return storagetest.NewS3(t) }, 1},
		{"azure", func(t *testing.T) storage.Store { return storagetest.NewAzure(t) }, 1},
		{"gcs", func(t *testing.T) storage.Store { return storagetest.NewGCS(t) }, 3},
	} {
		t.Run(b.name, func(t *testing.T) {
			s := b.new(t)
			ctx := context.Background()
			for _, k := range []string{"a", "b", "d/c"} {
				if err := s.Put(ctx, k, []byte("data")); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := storage.ReadAll(ctx, s, "a"); err != nil { // head + ranged get
				t.Fatal(err)
			}
			if err := s.Walk(ctx, "", func(storage.Object) error { return nil }); err != nil { // one flat page: root and d/
				t.Fatal(err)
			}
			if _, err := s.Delete(ctx, []string{"a", "b", "d/c"}); err != nil {
				t.Fatal(err)
			}
			got, ok := counting.Requests(s)
			want := counting.RequestCounts{List: 1, Get: 2, Put: 3, Delete: b.deletes}
			if !ok || got != want {
				t.Fatalf("requests %+v, want %+v", got, want)
			}
		})
	}
}

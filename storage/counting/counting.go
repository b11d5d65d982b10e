// Package counting counts the requests a storage backend makes, by kind (list, get, put,
// delete), so that a run can report its cost. The object-store backends count at the HTTP
// level, every attempt included (each one is billed); Wrap counts the calls of any
// storage.Store, for backends without HTTP (local, in-memory).
package counting

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/deltavacuum/deltavacuum/storage"
)

// RequestCounts is the number of requests of each kind. It is the `requests` object of a
// result.
type RequestCounts struct {
	List   int64 `json:"list"`
	Get    int64 `json:"get"`
	Put    int64 `json:"put"`
	Delete int64 `json:"delete"`
}

// Total is the sum of all kinds.
func (c RequestCounts) Total() int64 { return c.List + c.Get + c.Put + c.Delete }

// Sub returns c minus o, kind by kind (the requests made between two snapshots).
func (c RequestCounts) Sub(o RequestCounts) RequestCounts {
	return RequestCounts{List: c.List - o.List, Get: c.Get - o.Get, Put: c.Put - o.Put, Delete: c.Delete - o.Delete}
}

// RequestCounter is implemented by stores that count their requests.
type RequestCounter interface {
	Requests() RequestCounts
}

// Requests returns the counts of s when it counts them, and false otherwise.
func Requests(s storage.Store) (RequestCounts, bool) {
	if rc, ok := s.(RequestCounter); ok {
		return rc.Requests(), true
	}
	return RequestCounts{}, false
}

// Kind is a kind of request.
type Kind int

// The kinds of requests.
const (
	List Kind = iota
	Get
	Put
	Delete
)

func (k Kind) String() string {
	switch k {
	case List:
		return "list"
	case Get:
		return "get"
	case Put:
		return "put"
	case Delete:
		return "delete"
	}
	return "unknown"
}

// Counter counts requests. The zero value is ready; it is safe for concurrent use.
type Counter struct {
	list, get, put, del atomic.Int64
}

// Add counts one request of kind k.
func (c *Counter) Add(k Kind) {
	switch k {
	case List:
		c.list.Add(1)
	case Get:
		c.get.Add(1)
	case Put:
		c.put.Add(1)
	case Delete:
		c.del.Add(1)
	}
}

// Requests returns the counts so far.
func (c *Counter) Requests() RequestCounts {
	return RequestCounts{List: c.list.Load(), Get: c.get.Load(), Put: c.put.Load(), Delete: c.del.Load()}
}

// gcsList matches the path of a GCS JSON API object listing: .../b/BUCKET/o
var gcsList = regexp.MustCompile(`/b/[^/]+/o$`)

// Classify tells the kind of an object-store HTTP request: S3 (REST), Azure Blob and ADLS
// Gen2, and the GCS JSON API. Batch deletes (S3 POST ?delete, Azure POST ?comp=batch) are
// deletes; listings (S3 list-type, Azure comp=list or resource=filesystem, GCS .../o) are lists.
func Classify(r *http.Request) Kind {
	q := r.URL.Query()
	switch r.Method {
	case http.MethodDelete:
		return Delete
	case http.MethodPost:
		if q.Has("delete") || q.Get("comp") == "batch" {
			return Delete
		}
		return Put
	case http.MethodPut, http.MethodPatch:
		return Put
	}
	if q.Has("list-type") || q.Get("comp") == "list" || q.Get("resource") == "filesystem" {
		return List
	}
	if gcsList.MatchString(r.URL.EscapedPath()) && strings.Contains(r.URL.EscapedPath(), "/b/") {
		return List
	}
	return Get
}

// Transport counts each request that goes through it into Counter, by Classify, then passes
// it to Base (http.DefaultTransport when nil).
type Transport struct {
	Base    http.RoundTripper
	Counter *Counter
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.Counter.Add(Classify(r))
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// Store wraps a storage.Store and counts its calls: one list per directory a Walk lists, one
// get per Stat, Open and ReadAt, one put per Put or PutIfAbsent, one delete per key.
type Store struct {
	storage.Store
	Counter Counter
}

// Wrap returns s with its calls counted. A store that counts its own requests (the
// object-store backends) needs no wrapper.
func Wrap(s storage.Store) *Store { return &Store{Store: s} }

// Requests implements RequestCounter.
func (s *Store) Requests() RequestCounts { return s.Counter.Requests() }

// Walk implements storage.Store.
func (s *Store) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	s.Counter.Add(List)
	return s.Store.Walk(ctx, prefix, func(o storage.Object) error {
		err := fn(o)
		if o.IsDir && err == nil {
			s.Counter.Add(List)
		}
		return err
	})
}

// Stat implements storage.Store.
func (s *Store) Stat(ctx context.Context, key string) (storage.Object, error) {
	s.Counter.Add(Get)
	return s.Store.Stat(ctx, key)
}

type reader struct {
	storage.Reader
	c *Counter
}

func (r reader) ReadAt(p []byte, off int64) (int, error) {
	r.c.Add(Get)
	return r.Reader.ReadAt(p, off)
}

// Open implements storage.Store.
func (s *Store) Open(ctx context.Context, key string) (storage.Reader, error) {
	s.Counter.Add(Get)
	r, err := s.Store.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	return reader{Reader: r, c: &s.Counter}, nil
}

// Delete implements storage.Store.
func (s *Store) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	for range keys {
		s.Counter.Add(Delete)
	}
	return s.Store.Delete(ctx, keys)
}

// PutIfAbsent implements storage.Store.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	s.Counter.Add(Put)
	return s.Store.PutIfAbsent(ctx, key, data)
}

// Put implements storage.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	s.Counter.Add(Put)
	return s.Store.Put(ctx, key, data)
}

// MakesDirectories forwards storage.DirectoryMaker to the store counted.
func (s *Store) MakesDirectories(ctx context.Context) bool {
	return storage.MakesDirectories(ctx, s.Store)
}

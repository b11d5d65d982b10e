package location

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/deltavacuum/deltavacuum/storage"
)

const modulePath = "github.com/deltavacuum/deltavacuum"

// backendPackage is the package that registers each object-store backend on import.
var backendPackage = map[string]string{
	"s3":    modulePath + "/storage/s3",
	"azure": modulePath + "/storage/azure",
	"gcs":   modulePath + "/storage/gcs",
}

// Parsed is an object-store location as parse checked it: its URL (which may hold a
// secret: print it with SafeURL), its kind, and the options every store takes.
type Parsed struct {
	URL    *url.URL
	Kind   string // "s3", "azure" or "gcs"
	Common Common
}

// Common are the options every object store takes (concurrency, delete_batch_size,
// max_retries, list_page_size); zero means the backend's default.
type Common struct {
	Concurrency, BatchSize, MaxAttempts, ListPageSize int
	// WrapTransport, when set, wraps the store's HTTP transport (OpenTransport: a rate limit).
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// Opener opens a resolved store.
type Opener func(ctx context.Context) (storage.Store, error)

// Resolver checks a location of its kind and its options and returns what opens it, making no
// request.
type Resolver func(l Parsed, o Options) (Opener, error)

var (
	mu        sync.RWMutex
	resolvers = map[string]Resolver{}
)

// Register makes the backend of kind ("s3", "azure", "gcs") available to Open. Each
// backend's package registers itself when imported (import _
// "github.com/deltavacuum/deltavacuum/storage/s3"), so that a program links the cloud SDKs
// of the backends it imports, and no other: the local backend is always there,
// storage/location/all imports every backend (the command line does).
func Register(kind string, r Resolver) {
	mu.Lock()
	defer mu.Unlock()
	resolvers[kind] = r
}

func registered(kind string) (Resolver, bool) {
	mu.RLock()
	defer mu.RUnlock()
	r, ok := resolvers[kind]
	return r, ok
}

// RegisterConfig registers a backend by its two steps: config checks a location and its
// options and returns the backend's configuration (no request), open opens a store with it.
func RegisterConfig[C any, S storage.Store](kind string, config func(Parsed, Options) (C, error), open func(context.Context, C) (S, error)) {
	Register(kind, func(l Parsed, o Options) (Opener, error) {
		c, err := config(l, o)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (storage.Store, error) { return open(ctx, c) }, nil
	})
}

// ResolveConfig is what RegisterConfig's config makes of uri and o (the environment not
// added): the backends' tests check their configurations with it.
func ResolveConfig[C any](uri string, o Options, config func(Parsed, Options) (C, error)) (C, error) {
	l, err := ParseObject(uri, o)
	if err != nil {
		var zero C
		return zero, err
	}
	return config(l, o)
}

// Bucket is the bucket of an s3:// or gs:// location: its host.
func (l Parsed) Bucket() (string, error) {
	if l.URL.Host == "" {
		return "", fmt.Errorf("location %s: no bucket", safe(l.URL))
	}
	return l.URL.Host, nil
}

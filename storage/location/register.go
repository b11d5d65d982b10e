package location

import (
	"context"
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

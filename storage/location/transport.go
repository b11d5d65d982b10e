package location

import (
	"context"
	"net/http"
	"os"

	"github.com/deltavacuum/deltavacuum/storage"
)

// OpenTransport is Open with every HTTP request of the store passed through wrap (a rate
// limit, say): each attempt of each request, listing pages and batch deletes included. A
// local store makes no HTTP request and is opened as Open opens it.
func OpenTransport(ctx context.Context, uri string, opts Options, wrap func(http.RoundTripper) http.RoundTripper) (storage.Store, error) {
	open, err := resolve(uri, opts.WithEnv(os.Getenv), wrap)
	if err != nil {
		return nil, err
	}
	return open(ctx)
}

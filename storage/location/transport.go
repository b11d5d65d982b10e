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
	t, err := resolve(uri, opts.WithEnv(os.Getenv))
	if err != nil {
		return nil, err
	}
	if wrap != nil {
		t.s3.WrapTransport, t.gcs.WrapTransport, t.az.WrapTransport = wrap, wrap, wrap
	}
	return t.open(ctx)
}

package deltavacuum

import (
	"context"
	"net/http"

	"github.com/deltavacuum/deltavacuum/storage/location"
)

// OpenTransport is OpenWith with every HTTP request of an object store passed through wrap
// (the maintenance service's requests-per-second limit). A local table is opened as OpenWith
// opens it: it makes no HTTP request.
func OpenTransport(ctx context.Context, uri string, opts location.Options, wrap func(http.RoundTripper) http.RoundTripper) (*Table, error) {
	kind, err := location.Kind(uri)
	if err != nil {
		return nil, err
	}
	if kind == "local" || wrap == nil {
		return OpenWith(ctx, uri, opts)
	}
	store, err := location.OpenTransport(ctx, uri, opts, wrap)
	if err != nil {
		return nil, err
	}
	return OpenStore(store), nil
}

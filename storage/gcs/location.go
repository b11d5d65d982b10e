package gcs

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/location"
)

// Importing this package registers the gs:// locations with package location.
func init() { location.Register("gcs", resolveLocation) }

func resolveLocation(l location.Parsed, o location.Options) (location.Opener, error) {
	c, err := configFor(l, o)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (storage.Store, error) { return New(ctx, c) }, nil
}

// configFor is the Config of a gs:// location and its storage options.
func configFor(l location.Parsed, o location.Options) (Config, error) {
	u := l.URL
	if u.Host == "" {
		return Config{}, fmt.Errorf("location %s: no bucket", location.SafeURL(u))
	}
	c := Config{
		Bucket:             u.Host,
		Prefix:             strings.Trim(u.Path, "/"),
		Endpoint:           o["google_endpoint"],
		AllowHTTP:          o.Bool("google_allow_http"),
		ServiceAccountFile: o["google_service_account"],
		ServiceAccountKey:  o["google_service_account_key"],
		Anonymous:          o.Bool("google_skip_signature"),
		Concurrency:        l.Common.Concurrency, MaxAttempts: l.Common.MaxAttempts, ListPageSize: l.Common.ListPageSize,
		Location: location.SafeURL(u),
	}
	if c.Endpoint == "" {
		if h := os.Getenv("STORAGE_EMULATOR_HOST"); h != "" {
			c.Endpoint, c.AllowHTTP = h, true
			if !strings.Contains(h, "://") {
				c.Endpoint = "http://" + h
			}
		}
	}
	return c, nil
}

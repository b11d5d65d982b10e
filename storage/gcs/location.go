package gcs

import (
	"os"
	"strings"

	"github.com/deltavacuum/deltavacuum/storage/location"
)

// Importing this package registers the gs:// locations with package location.
func init() { location.RegisterConfig("gcs", configFor, New) }

// configFor is the Config of a gs:// location and its storage options.
func configFor(l location.Parsed, o location.Options) (Config, error) {
	u := l.URL
	bucket, err := l.Bucket()
	if err != nil {
		return Config{}, err
	}
	c := Config{
		Bucket:             bucket,
		Prefix:             strings.Trim(u.Path, "/"),
		Endpoint:           o["google_endpoint"],
		AllowHTTP:          o.Bool("google_allow_http"),
		ServiceAccountFile: o["google_service_account"],
		ServiceAccountKey:  o["google_service_account_key"],
		Anonymous:          o.Bool("google_skip_signature"),
		Concurrency:        l.Common.Concurrency, MaxAttempts: l.Common.MaxAttempts, ListPageSize: l.Common.ListPageSize,
		WrapTransport: l.Common.WrapTransport,
		Location:      location.SafeURL(u),
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

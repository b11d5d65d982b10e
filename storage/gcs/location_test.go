package gcs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage/location"
)

// The resolution of gs:// locations (moved here from package location with the code).

func mustResolve(t *testing.T, uri string, o location.Options) Config {
	t.Helper()
	c, err := location.ResolveConfig(uri, o.WithEnv(func(string) string { return "" }), configFor)
	if err != nil {
		t.Fatalf("resolve(%q): %v", uri, err)
	}
	return c
}

func TestResolveGCS(t *testing.T) {
	c := mustResolve(t, "gs://bkt/a/b", location.Options{"google_endpoint": "http://127.0.0.1:4443", "google_allow_http": "true"})
	if c.Bucket != "bkt" || c.Prefix != "a/b" || c.Endpoint != "http://127.0.0.1:4443" || !c.AllowHTTP || c.Location != "gs://bkt/a/b" {
		t.Fatalf("%+v", c)
	}
}

func TestGCSConfigNeverPrintsSecrets(t *testing.T) {
	c := mustResolve(t, "gs://b/t", location.Options{"google_service_account_key": "{SECRET5}"})
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, c); strings.Contains(s, "SECRET") {
			t.Errorf("%s of a config shows a secret: %s", verb, s)
		}
	}
}

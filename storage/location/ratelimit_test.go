package location

import (
	"net/url"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage/ratelimit"
)

// max_requests_per_second takes a number from 0.1 to 100000, from the flag or the environment;
// anything else is refused before a store is opened, with the key (never the value) named.
func TestMaxRequestsPerSecondHostile(t *testing.T) {
	for _, bad := range []string{"0", "-1", "-0.5", "NaN", "nan", "Inf", "+Inf", "-Inf", "1e9", "100001", "0.05", "", " ", "abc", "10rps", "0x10", "1,5", "hunter2"} {
		_, err := ParseStorageOptions([]string{"max_requests_per_second=" + bad})
		if err == nil {
			t.Errorf("max_requests_per_second=%q accepted", bad)
			continue
		}
		if !strings.Contains(err.Error(), "max_requests_per_second") || (bad == "hunter2" && strings.Contains(err.Error(), bad)) {
			t.Errorf("max_requests_per_second=%q: error %q", bad, err)
		}
		// The same value from the environment is refused when the store is resolved.
		o := Options{}.WithEnv(func(k string) string {
			if k == "DELTAVACUUM_MAX_REQUESTS_PER_SECOND" {
				return bad
			}
			return ""
		})
		if strings.TrimSpace(bad) == "" {
			continue // an empty variable is an unset one
		}
		if _, err := Resolve("s3://bucket/t", o); err == nil {
			t.Errorf("DELTAVACUUM_MAX_REQUESTS_PER_SECOND=%q accepted", bad)
		}
	}
	for _, good := range []string{"0.1", "1", "50", "2.5", "100000", " 20 "} {
		if _, err := ParseStorageOptions([]string{"requests_per_second=" + good}); err != nil {
			t.Errorf("requests_per_second=%q: %v", good, err)
		}
	}
}

// The limiter a location gets is its bucket's or container's, at the option's ceiling.
func TestLimiterOfLocation(t *testing.T) {
	u, _ := url.Parse("s3://limiter-test-bucket/a/b")
	l, err := limiterOf(u, Options{"max_requests_per_second": "25"})
	if err != nil {
		t.Fatal(err)
	}
	same, _ := ratelimit.Shared("s3://limiter-test-bucket", 25)
	if l != same || l.Ceiling() != 25 {
		t.Fatalf("limiter %p (ceiling %v), want the bucket's shared one at 25", l, l.Ceiling())
	}
	none, err := limiterOf(u, Options{})
	if err != nil || none.Ceiling() != 0 || none == l {
		t.Fatalf("without the option: %v, ceiling %v", err, none.Ceiling())
	}
}

func TestScope(t *testing.T) {
	for in, want := range map[string]string{
		"s3://Bucket/a/b": "s3://bucket",
		"gs://b/t":        "gs://b",
		"abfss://c@acct.dfs.core.windows.net/t/x":           "abfss://c@acct.dfs.core.windows.net",
		"https://acct.blob.core.windows.net/c/t?sv=1&sig=S": "https://acct.blob.core.windows.net/c",
		"az://c/t": "az://c",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := Scope(u); got != want {
			t.Errorf("Scope(%s) = %s, want %s", in, got, want)
		}
	}
}

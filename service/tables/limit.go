package tables

import (
	"net/http"
	"strings"

	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/storage/ratelimit"
)

// limiter is the requests-per-second limit of one configured store: every HTTP request of
// every table under its prefix (each attempt, each listing page, each batch delete) waits
// for a token of one bucket, shared by those tables. It is the stores' own limiter
// (storage/ratelimit) with the configured rate as its ceiling, so a store that throttles slows
// the service's requests too.
type limiter struct {
	prefix string
	*ratelimit.Limiter
}

// newLimiter makes the limiter of a checked store (config: the rate from 0.1 to 100 000,
// the burst 1 or more).
func newLimiter(st config.Store) (*limiter, error) {
	l, err := ratelimit.New(st.Prefix, st.RequestsPerSecond, st.Burst)
	if err != nil {
		return nil, err
	}
	return &limiter{prefix: st.Prefix, Limiter: l}, nil
}

// wrap is the store's transport wrapper (location.OpenTransport).
func (l *limiter) wrap(base http.RoundTripper) http.RoundTripper { return l.Wrap(base) }

// limiterFor returns the limiter of the longest configured prefix loc starts with (at a '/'
// boundary), or nil.
func limiterFor(ls []*limiter, loc string) *limiter {
	var best *limiter
	for _, l := range ls {
		if !underPrefix(loc, l.prefix) {
			continue
		}
		if best == nil || len(l.prefix) > len(best.prefix) {
			best = l
		}
	}
	return best
}

// underPrefix reports whether loc is prefix or lies below it: "s3://b" covers "s3://b/t"
// but not "s3://b2/t".
func underPrefix(loc, prefix string) bool {
	if !strings.HasPrefix(loc, prefix) {
		return false
	}
	rest := loc[len(prefix):]
	return rest == "" || strings.HasSuffix(prefix, "/") || strings.HasPrefix(rest, "/")
}

// transport is the tables' session transport (session.Config.Transport): the limit of the
// store of loc, nil when none is configured.
func (ts *Set) transport(loc string) func(http.RoundTripper) http.RoundTripper {
	if l := limiterFor(ts.limiters, loc); l != nil {
		return l.wrap
	}
	return nil
}

// Limiter is the limit of the store of loc (a stores: entry), nil when none is configured: what
// it let through (Sent) is what the tests compare with what the store received.
func (ts *Set) Limiter(loc string) *ratelimit.Limiter {
	if l := limiterFor(ts.limiters, loc); l != nil {
		return l.Limiter
	}
	return nil
}

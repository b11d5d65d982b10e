package service

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/deltavacuum/deltavacuum/service/config"
)

// limiter is the requests-per-second limit of one configured store: every HTTP request of
// every table under its prefix (each attempt, each listing page, each batch delete) waits
// for a token of one bucket, shared by those tables.
type limiter struct {
	prefix string
	lim    *rate.Limiter
	// now and sleep are the limiter's clock (real time: the service's clock may be injected
	// and stand still in tests).
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	// sent counts the requests let through.
	sent atomic.Int64
}

func newLimiter(st config.Store) *limiter {
	return &limiter{prefix: st.Prefix, lim: rate.NewLimiter(rate.Limit(st.RequestsPerSecond), st.Burst), now: time.Now, sleep: sleepCtx}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wait takes one token, sleeping until it is there.
func (l *limiter) wait(ctx context.Context) error {
	r := l.lim.ReserveN(l.now(), 1)
	if !r.OK() {
		return fmt.Errorf("requests to %s: the rate limit refuses the request", l.prefix)
	}
	if d := r.DelayFrom(l.now()); d > 0 {
		if err := l.sleep(ctx, d); err != nil {
			r.CancelAt(l.now())
			return err
		}
	}
	l.sent.Add(1)
	return nil
}

// wrap is the store's transport wrapper (location.OpenTransport).
func (l *limiter) wrap(base http.RoundTripper) http.RoundTripper {
	return &limitedTransport{base: base, l: l}
}

type limitedTransport struct {
	base http.RoundTripper
	l    *limiter
}

func (t *limitedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := t.l.wait(r.Context()); err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(r)
}

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

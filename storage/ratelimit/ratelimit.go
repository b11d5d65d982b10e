// Package ratelimit is the requests-per-second limit of an object store: a token bucket that
// every HTTP request of the store waits on (each attempt of a retried request, each listing
// page, each batch delete), and that slows down when the store throttles.
//
// The rate is adaptive (additive increase, multiplicative decrease): a throttling answer (429,
// or 503, which is S3's SlowDown, Azure's ServerBusy and GCS's backendError or
// rateLimitExceeded) halves the rate, at most once per second, since the many requests in
// flight when a store starts throttling all hear it at once; the rate then climbs back by a
// twentieth of the ceiling each second without throttling, never above the ceiling. A limiter
// without a ceiling lets everything through until the first throttling answer, then starts at
// half the rate it measured over the second before, and turns itself off again once it has
// climbed back to twice that rate. The SDKs' retries (exponential backoff with jitter) still
// retry the throttled request itself; the limiter is what makes all the workers of a run slow
// down together instead of each retrying at full speed.
package ratelimit

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Bounds of a configured rate: from one request every ten seconds to 100 000 a second.
const (
	MinRate = 0.1
	MaxRate = 100_000
)

const (
	cooldown = time.Second // at most one cut per cooldown
	floor    = 1.0         // a cut never goes below one request per second (or the ceiling)
	slots    = 10          // the send rate is measured over slots of 100 ms
	slotLen  = time.Second / slots
)

// Limiter is one store's limit. It is safe for concurrent use.
type Limiter struct {
	name    string  // what the limit is for, in errors ("s3://bucket")
	ceiling float64 // the configured rate; 0: none
	burst   int     // the configured burst

	mu      sync.Mutex
	lim     *rate.Limiter
	cur     float64   // the current rate; +Inf: off
	ref     float64   // without a ceiling: the rate measured at the first cut
	lastCut time.Time // when the rate was last cut
	grown   time.Time // when the additive increase was last applied
	counts  [slots]int64
	slotAt  [slots]int64 // the slot number each count is for

	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	sent, throttled, cuts atomic.Int64
}

// New returns a limiter of rps requests per second (0: no ceiling, adaptive only) with burst
// requests at once after a quiet moment (0: the rate rounded up). name says what it limits,
// for errors.
func New(name string, rps float64, burst int) (*Limiter, error) {
	if math.IsNaN(rps) || math.IsInf(rps, 0) || rps < 0 || (rps > 0 && rps < MinRate) || rps > MaxRate {
		return nil, fmt.Errorf("requests per second %v for %s: want a number from %v to %v (0: no limit)", rps, name, MinRate, MaxRate)
	}
	if burst < 0 {
		return nil, fmt.Errorf("burst %d for %s: want 1 or more (0: the rate rounded up)", burst, name)
	}
	if burst == 0 {
		burst = max(1, int(math.Ceil(rps)))
	}
	l := &Limiter{name: name, ceiling: rps, burst: burst, now: time.Now, sleep: sleepCtx}
	if rps > 0 {
		l.cur = rps
		l.lim = rate.NewLimiter(rate.Limit(rps), burst)
	} else {
		l.cur = math.Inf(1)
		l.lim = rate.NewLimiter(rate.Inf, 1)
	}
	return l, nil
}

// SetClock replaces the limiter's clock (tests run it on a fake one).
func (l *Limiter) SetClock(now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.now, l.sleep = now, sleep
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

// Name is what the limiter limits.
func (l *Limiter) Name() string { return l.name }

// Ceiling is the configured rate (0: none).
func (l *Limiter) Ceiling() float64 { return l.ceiling }

// Rate is the current rate (+Inf when the limiter lets everything through).
func (l *Limiter) Rate() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.growLocked(l.now())
	return l.cur
}

// Sent is the number of requests let through; Throttled the throttling answers seen; Cuts
// the times the rate was cut.
func (l *Limiter) Sent() int64      { return l.sent.Load() }
func (l *Limiter) Throttled() int64 { return l.throttled.Load() }
func (l *Limiter) Cuts() int64      { return l.cuts.Load() }

// Wait takes one token, sleeping until it is there. A request whose context ends first is
// not sent (its token is given back).
func (l *Limiter) Wait(ctx context.Context) error {
	l.mu.Lock()
	now := l.now()
	l.growLocked(now)
	r := l.lim.ReserveN(now, 1)
	sleep := l.sleep
	l.mu.Unlock()
	if !r.OK() {
		return fmt.Errorf("requests to %s: the rate limit refuses the request", l.name)
	}
	if d := r.DelayFrom(now); d > 0 {
		if err := sleep(ctx, d); err != nil {
			l.mu.Lock()
			r.CancelAt(l.now())
			l.mu.Unlock()
			return err
		}
	}
	l.mu.Lock()
	l.countLocked(l.now())
	l.mu.Unlock()
	l.sent.Add(1)
	return nil
}

// Observe takes the status of an answer into account: a throttling one cuts the rate.
func (l *Limiter) Observe(status int) {
	if !Throttling(status) {
		return
	}
	l.throttled.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.lastCut.IsZero() && now.Sub(l.lastCut) < cooldown {
		return // the same wave of throttling
	}
	base := l.cur
	low := floor
	if l.ceiling > 0 {
		low = min(floor, l.ceiling)
	}
	if math.IsInf(base, 1) {
		// Off until now: a new bucket (an unlimited one's tokens are not counted).
		base = l.measuredLocked(now)
		l.ref = base
		r := max(low, base/2)
		l.cur = r
		l.lim = rate.NewLimiter(rate.Limit(r), max(1, int(math.Ceil(r))))
	} else {
		l.setLocked(now, max(low, base/2))
	}
	l.lastCut, l.grown = now, now
	l.cuts.Add(1)
}

// Throttling reports whether an HTTP status is a store asking the client to slow down.
func Throttling(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// growLocked applies the additive increase since it was last applied.
func (l *Limiter) growLocked(now time.Time) {
	if math.IsInf(l.cur, 1) || l.lastCut.IsZero() || now.Sub(l.lastCut) < cooldown {
		return
	}
	top, step := l.ceiling, l.ceiling/20
	if top == 0 {
		top, step = 2*l.ref, l.ref/20
	}
	step = max(step, 1)
	dt := now.Sub(l.grown).Seconds()
	if dt <= 0 {
		return
	}
	l.grown = now
	next := l.cur + step*dt
	switch {
	case next < top:
		l.setLocked(now, next)
	case l.ceiling > 0:
		l.setLocked(now, l.ceiling)
	default:
		// Back to twice the rate that was throttled: off again until the next throttling.
		l.cur = math.Inf(1)
		l.lim = rate.NewLimiter(rate.Inf, 1)
	}
}

func (l *Limiter) setLocked(now time.Time, r float64) {
	l.cur = r
	l.lim.SetLimitAt(now, rate.Limit(r))
	b := max(1, int(math.Ceil(r)))
	if l.ceiling > 0 {
		b = min(b, l.burst)
	}
	l.lim.SetBurstAt(now, b)
}

// countLocked counts one request sent at now.
func (l *Limiter) countLocked(now time.Time) {
	n := now.UnixNano() / int64(slotLen)
	i := n % slots
	if l.slotAt[i] != n {
		l.slotAt[i], l.counts[i] = n, 0
	}
	l.counts[i]++
}

// measuredLocked is the send rate over the last second (at least the floor).
func (l *Limiter) measuredLocked(now time.Time) float64 {
	n := now.UnixNano() / int64(slotLen)
	var sum int64
	for i := range slots {
		if n-l.slotAt[i] < slots {
			sum += l.counts[i]
		}
	}
	return max(floor, float64(sum))
}

// Wrap returns base with every request waiting for a token, and every answer observed.
func (l *Limiter) Wrap(base http.RoundTripper) http.RoundTripper {
	return &transport{base: base, l: l}
}

type transport struct {
	base http.RoundTripper
	l    *Limiter
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := t.l.Wait(r.Context()); err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, err
	}
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		t.l.Observe(resp.StatusCode)
	}
	return resp, err
}

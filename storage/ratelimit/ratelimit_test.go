package ratelimit

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// clock is a fake clock: sleeping advances it.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
func (c *clock) sleep(_ context.Context, d time.Duration) error { c.advance(d); return nil }

func fake(t *testing.T, rps float64, burst int) (*Limiter, *clock) {
	t.Helper()
	l, err := New("s3://b", rps, burst)
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l.SetClock(c.now, c.sleep)
	return l, c
}

// sendN takes n tokens and returns the fake time they took.
func sendN(t *testing.T, l *Limiter, c *clock, n int) time.Duration {
	t.Helper()
	start := c.now()
	for range n {
		if err := l.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return c.now().Sub(start)
}

func TestLimiterAppliesTheCeiling(t *testing.T) {
	l, c := fake(t, 10, 5)
	// 5 at once (the burst), then one every 100 ms: 105 requests take 10 s.
	if d := sendN(t, l, c, 105); d != 10*time.Second {
		t.Fatalf("105 requests at 10/s with a burst of 5 took %v, want 10s", d)
	}
	if l.Sent() != 105 {
		t.Fatalf("sent %d", l.Sent())
	}
}

// Throttling halves the rate, once per wave; the rate climbs back to the ceiling and no higher.
func TestThrottlingCutsTheRateAndItClimbsBack(t *testing.T) {
	l, c := fake(t, 100, 0)
	l.Observe(http.StatusServiceUnavailable)
	if r := l.Rate(); r != 50 {
		t.Fatalf("after a 503 the rate is %v, want 50", r)
	}
	l.Observe(http.StatusTooManyRequests) // the same wave: no second cut
	if r := l.Rate(); r != 50 || l.Cuts() != 1 || l.Throttled() != 2 {
		t.Fatalf("rate %v after a second throttle in the same second (cuts %d, throttled %d)", l.Rate(), l.Cuts(), l.Throttled())
	}
	// At 50/s, 100 requests after the burst of 50 take 2 s, a little less as the rate climbs
	// back after the first second (+5/s each second).
	if d := sendN(t, l, c, 150); d < 1800*time.Millisecond || d > 2000*time.Millisecond {
		t.Fatalf("150 requests after the cut took %v, want 1.8 to 2 s at 50/s and climbing", d)
	}
	c.advance(time.Second)
	l.Observe(http.StatusServiceUnavailable)
	r := l.Rate()
	if r >= 50 || r < 25 {
		t.Fatalf("after a second wave the rate is %v, want from 25 to below 50", r)
	}
	for _, s := range []int{http.StatusOK, http.StatusNotFound, http.StatusInternalServerError, http.StatusPreconditionFailed} {
		l.Observe(s)
	}
	if l.Cuts() != 2 {
		t.Fatalf("cuts %d: only 429 and 503 cut the rate", l.Cuts())
	}
	c.advance(5 * time.Second) // +5/s each second: +25
	if got := l.Rate(); math.Abs(got-(r+25)) > 1e-9 {
		t.Fatalf("after 5 quiet seconds the rate is %v, want %v", got, r+25)
	}
	c.advance(time.Minute)
	if got := l.Rate(); got != 100 {
		t.Fatalf("after a quiet minute the rate is %v, want the ceiling 100", got)
	}
}

// A cut never goes below one request per second, nor below a ceiling under it.
func TestCutFloor(t *testing.T) {
	l, c := fake(t, 0.5, 0)
	for range 5 {
		l.Observe(http.StatusServiceUnavailable)
		c.advance(2 * time.Second)
		l.Observe(http.StatusServiceUnavailable)
	}
	if r := l.Rate(); r != 0.5 {
		t.Fatalf("rate %v, want the ceiling 0.5 (the floor is min(1, ceiling))", r)
	}
	l2, c2 := fake(t, 8, 0)
	for range 10 {
		c2.advance(2 * time.Second)
		l2.Observe(http.StatusServiceUnavailable)
	}
	if r := l2.Rate(); r != 1 {
		t.Fatalf("rate %v after ten cuts, want the floor 1", r)
	}
}

// Without a ceiling nothing waits until the store throttles; then the rate is half what was
// sent in the second before, and the limiter turns off again at twice that.
func TestNoCeilingAdapts(t *testing.T) {
	l, c := fake(t, 0, 0)
	if d := sendN(t, l, c, 1000); d != 0 {
		t.Fatalf("1000 requests without a ceiling waited %v", d)
	}
	c.advance(500 * time.Millisecond)
	for range 200 {
		sendN(t, l, c, 1)
		c.advance(2500 * time.Microsecond) // 400/s for 0.5 s
	}
	// The last second saw the 200 of the last half second (the 1000 are older than a second).
	l.Observe(http.StatusServiceUnavailable)
	if r := l.Rate(); r != 100 {
		t.Fatalf("rate after the cut %v, want 100 (half of 200 sent in the last second)", r)
	}
	// 100 a second now: a burst of 100, then one every 10 ms.
	if d := sendN(t, l, c, 150); d != 500*time.Millisecond {
		t.Fatalf("150 requests after the cut took %v, want 500ms", d)
	}
	c.advance(500 * time.Millisecond)
	if r := l.Rate(); r != 110 {
		t.Fatalf("rate a second later %v, want 110 (+1/20 of 200 a second)", r)
	}
	c.advance(time.Minute)
	if r := l.Rate(); !math.IsInf(r, 1) {
		t.Fatalf("rate after a quiet minute %v, want off (+Inf)", r)
	}
	// Off again, and cut again from what is sent then.
	for range 50 {
		sendN(t, l, c, 1)
		c.advance(10 * time.Millisecond)
	}
	l.Observe(http.StatusTooManyRequests)
	if r := l.Rate(); r != 25 {
		t.Fatalf("rate after the second cut %v, want 25 (half of 50 in the last second)", r)
	}
	if d := sendN(t, l, c, 50); d != time.Second {
		t.Fatalf("50 requests at 25/s with a burst of 25 took %v, want 1s", d)
	}
}

// A request whose context ends while it waits is not sent, and gives its token back.
func TestWaitCancelled(t *testing.T) {
	l, c := fake(t, 1, 1)
	sendN(t, l, c, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l.SetClock(c.now, func(ctx context.Context, d time.Duration) error { return ctx.Err() })
	if err := l.Wait(ctx); err == nil {
		t.Fatal("a cancelled wait succeeded")
	}
	if l.Sent() != 1 {
		t.Fatalf("sent %d, want 1", l.Sent())
	}
}

func TestNewRefusesBadRates(t *testing.T) {
	for _, r := range []float64{-1, math.NaN(), math.Inf(1), math.Inf(-1), 0.01, 1e9} {
		if _, err := New("s3://b", r, 0); err == nil {
			t.Errorf("New(%v) accepted", r)
		}
	}
	if _, err := New("s3://b", 5, -1); err == nil {
		t.Error("burst -1 accepted")
	}
	for _, r := range []float64{0, 0.1, 1, 100000} {
		if _, err := New("s3://b", r, 0); err != nil {
			t.Errorf("New(%v): %v", r, err)
		}
	}
}

// The transport waits before each request and watches each answer, on a real loopback server.
func TestTransportObservesThrottling(t *testing.T) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		if k%2 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	l, c := fake(t, 1000, 0)
	hc := &http.Client{Transport: l.Wrap(http.DefaultTransport)}
	for range 4 {
		resp, err := hc.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		c.advance(2 * time.Second)
	}
	if l.Sent() != 4 || l.Throttled() != 2 || l.Cuts() != 2 {
		t.Fatalf("sent %d throttled %d cuts %d, want 4, 2, 2", l.Sent(), l.Throttled(), l.Cuts())
	}
}

func TestSharedByScope(t *testing.T) {
	a, _ := Shared("s3://shared-test", 5)
	b, _ := Shared("s3://shared-test", 5)
	c, _ := Shared("s3://other-test", 5)
	if a != b || a == c {
		t.Fatal("Shared does not share by scope")
	}
	if _, err := Shared("s3://x", -3); err == nil {
		t.Fatal("a negative rate accepted")
	}
}

package tables

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/service/config"
)

func mustLimiter(t *testing.T, st config.Store) *limiter {
	t.Helper()
	l, err := newLimiter(st)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// fakeTime is a clock that moves only when the limiter sleeps.
type fakeTime struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeTime) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeTime) sleep(_ context.Context, d time.Duration) error {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
	return nil
}

// stamping is a transport that records the (fake) time each request reaches it.
type stamping struct {
	clock *fakeTime
	mu    sync.Mutex
	at    []time.Time
}

func (s *stamping) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.at = append(s.at, s.clock.now())
	s.mu.Unlock()
	return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
}

// TestLimiterAppliesTheRate: on a fake clock, 60 requests at 10 per second with a burst of 5
// through two tables' transports sharing the store's limiter: the first 5 go at once, then
// one every 100 ms; in no second of the fake clock do more than rate+burst requests go.
func TestLimiterAppliesTheRate(t *testing.T) {
	clock := &fakeTime{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := mustLimiter(t, config.Store{Prefix: "s3://b/", RequestsPerSecond: 10, Burst: 5})
	l.SetClock(clock.now, clock.sleep)
	base := &stamping{clock: clock}
	a, b := l.wrap(base), l.wrap(base) // two tables on the same store
	start := clock.now()
	for i := 0; i < 60; i++ {
		rt := a
		if i%2 == 1 {
			rt = b
		}
		req, _ := http.NewRequest("GET", "http://127.0.0.1/x", nil)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.Sent(); got != 60 {
		t.Errorf("limiter let %d requests through, want 60", got)
	}
	for i, at := range base.at {
		// Request i may go no earlier than (i-burst+1) tokens after the start.
		earliest := start.Add(time.Duration(max(0, i-4)) * 100 * time.Millisecond)
		if at.Before(earliest) {
			t.Errorf("request %d went at %s, before %s", i, at.Sub(start), earliest.Sub(start))
		}
	}
	if got, want := base.at[59].Sub(start), 5500*time.Millisecond; got < want || got > want+time.Millisecond {
		t.Errorf("the 60th request went at %s, want %s", got, want)
	}
	for i := range base.at {
		n := 0
		for _, at := range base.at[i:] {
			if at.Sub(base.at[i]) < time.Second {
				n++
			}
		}
		if n > 15 {
			t.Errorf("%d requests within a second from request %d, want at most 15", n, i)
		}
	}
}

// A request whose context ends while it waits for a token is not sent.
func TestLimiterCancelled(t *testing.T) {
	l := mustLimiter(t, config.Store{Prefix: "s3://b/", RequestsPerSecond: 0.1, Burst: 1})
	base := &stamping{clock: &fakeTime{}}
	rt := l.wrap(base)
	req, _ := http.NewRequest("GET", "http://127.0.0.1/x", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ = http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1/x", nil)
	if _, err := rt.RoundTrip(req); err == nil {
		t.Error("a cancelled request waiting for a token was sent")
	}
	if len(base.at) != 1 {
		t.Errorf("%d requests reached the store, want 1", len(base.at))
	}
}

func TestLimiterFor(t *testing.T) {
	ls := []*limiter{{prefix: "s3://b"}, {prefix: "s3://b/hot/"}, {prefix: "abfss://c@a.dfs.core.windows.net/"}}
	for loc, want := range map[string]string{
		"s3://b":                                "s3://b",
		"s3://b/t":                              "s3://b",
		"s3://b2/t":                             "",
		"s3://b/hot/t":                          "s3://b/hot/",
		"s3://b/hotter/t":                       "s3://b",
		"abfss://c@a.dfs.core.windows.net/x/y":  "abfss://c@a.dfs.core.windows.net/",
		"abfss://c2@a.dfs.core.windows.net/x/y": "",
		"/data/t":                               "",
	} {
		got := ""
		if l := limiterFor(ls, loc); l != nil {
			got = l.prefix
		}
		if got != want {
			t.Errorf("limiterFor(%s) = %q, want %q", loc, got, want)
		}
	}
}

package ratelimit

import "sync"

// shared are the limiters of Shared, for the life of the process.
var shared = struct {
	mu sync.Mutex
	m  map[sharedKey]*Limiter
}{m: map[sharedKey]*Limiter{}}

type sharedKey struct {
	scope string
	rps   float64
}

// Shared returns the process's limiter of scope (a store: scheme and bucket, or container and
// account) at rps requests per second, made on first use: the stores opened on one bucket in
// one process (a table's, its run record's, a second table's) share one bucket of tokens.
func Shared(scope string, rps float64) (*Limiter, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	k := sharedKey{scope, rps}
	if l := shared.m[k]; l != nil {
		return l, nil
	}
	l, err := New(scope, rps, 0)
	if err != nil {
		return nil, err
	}
	shared.m[k] = l
	return l, nil
}

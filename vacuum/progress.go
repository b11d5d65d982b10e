package vacuum

import (
	"sync/atomic"
	"time"
)

// Counters are the live counts of a run, for progress displays. They are updated atomically
// by the planner and the executor and may be read at any time from another goroutine.
type Counters struct {
	phase        atomic.Value // string
	Listed       atomic.Int64 // entries listed (files and directories)
	Candidates   atomic.Int64 // files planned for deletion
	Deleted      atomic.Int64 // files deleted (or already gone)
	DeletedBytes atomic.Int64
	Failed       atomic.Int64
	start        time.Time
}

// NewCounters returns counters whose elapsed time starts now.
func NewCounters() *Counters {
	c := &Counters{start: time.Now()}
	c.phase.Store("starting")
	return c
}

// Phase is what the run is doing: reading the log, listing, deleting, done.
func (c *Counters) Phase() string {
	if c == nil {
		return ""
	}
	return c.phase.Load().(string)
}

// SetPhase sets what the run is doing.
func (c *Counters) SetPhase(p string) {
	if c != nil {
		c.phase.Store(p)
	}
}

// Elapsed is the time since NewCounters.
func (c *Counters) Elapsed() time.Duration { return time.Since(c.start) }

// Snapshot is a copy of the counters at one moment.
type Snapshot struct {
	Phase        string  `json:"phase"`
	Listed       int64   `json:"listed"`
	Candidates   int64   `json:"candidates"`
	Deleted      int64   `json:"deleted"`
	DeletedBytes int64   `json:"deletedBytes"`
	Failed       int64   `json:"failed"`
	ElapsedSec   float64 `json:"elapsedSeconds"`
}

// Snapshot reads the counters.
func (c *Counters) Snapshot() Snapshot {
	return Snapshot{Phase: c.Phase(), Listed: c.Listed.Load(), Candidates: c.Candidates.Load(),
		Deleted: c.Deleted.Load(), DeletedBytes: c.DeletedBytes.Load(), Failed: c.Failed.Load(),
		ElapsedSec: c.Elapsed().Seconds()}
}

package run

import "time"

// instant is a reading of every clock this process has: the wall clock, the monotonic clock
// (time.Now's, which stops while the machine is suspended on Linux) and, where there is one,
// the time since boot (which counts a suspension too).
type instant struct {
	at   time.Time     // with its monotonic reading
	boot time.Duration // 0 where unknown
}

// readClocks reads the clocks now (a variable: tests stop and suspend it).
var readClocks = func() instant { return instant{at: time.Now(), boot: sinceBoot()} }

// since is the time gone from earlier to i by the clock that says most: a process stopped
// (SIGSTOP, a frozen VM) is seen by the monotonic clock, a suspended laptop by the time since
// boot, a clock set forward by the wall clock. A zero earlier is long ago.
func (i instant) since(earlier instant) time.Duration {
	if earlier.at.IsZero() {
		return 1<<63 - 1
	}
	d := max(i.at.Sub(earlier.at), i.at.Round(0).Sub(earlier.at.Round(0)))
	if i.boot > 0 && earlier.boot > 0 {
		d = max(d, i.boot-earlier.boot)
	}
	return d
}

// after reports whether i was read after j.
func (i instant) after(j instant) bool { return j.at.IsZero() || i.at.After(j.at) }

//go:build unix

package deltalog

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU reports the CPU time (user and system, all threads, the garbage collector's
// included) per operation of the benchmark loop that follows, as cpu-ns/op. On a machine
// shared with other work it varies much less than the wall time. Call it before b.Loop and
// call the returned function after.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

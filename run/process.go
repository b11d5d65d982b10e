package run

import (
	"os"
	"sync"
)

// Process identifies the process that holds a lock ticket, so that another process on the same
// machine can tell at once that it is gone (killed, out of memory, a closed laptop) instead of
// waiting for its heartbeat to go stale, as restic does with its locks.
type Process struct {
	// Host is the machine's host name.
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Start is when the process started (Linux: from /proc; empty where it cannot be read). A
	// process with the same PID and another start time is another process (the PID was reused).
	Start string `json:"processStart,omitempty"`
	// Boot and PIDNamespace tell machines and containers apart that share a host name: two
	// processes are on the same host only when all three match (a container whose PIDs are
	// not ours, or another machine named localhost, is another host, judged by its heartbeat).
	Boot         string `json:"bootId,omitempty"`
	PIDNamespace string `json:"pidNamespace,omitempty"`
}

var (
	selfOnce sync.Once
	self     Process
)

// Self is the process running this code.
func Self() Process {
	selfOnce.Do(func() {
		host, _ := os.Hostname()
		self = Process{Host: host, PID: os.Getpid()}
		self.Boot, self.PIDNamespace = machineIdentity()
		self.Start = processStart(self.PID)
	})
	return self
}

// SameHost reports whether p runs on the machine (and in the PID namespace) of this process,
// where its PID can be looked up. It is false whenever that cannot be told for certain.
func (p Process) SameHost() bool {
	s := Self()
	return p.Host != "" && p.Host == s.Host && p.Boot != "" && p.Boot == s.Boot && p.PIDNamespace == s.PIDNamespace
}

// Gone reports whether p is a process of this host that no longer runs: its PID is free, or
// it is now another process (another start time). It is false when p is of another host, or
// when it cannot be told.
func (p Process) Gone() bool {
	if !p.SameHost() || p.PID <= 0 {
		return false
	}
	alive, known := pidAlive(p.PID)
	if !known {
		return false
	}
	if !alive {
		return true
	}
	if p.Start == "" {
		return false
	}
	now := processStart(p.PID)
	return now != "" && now != p.Start
}

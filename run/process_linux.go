package run

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// machineIdentity is the boot id (new at every boot) and the PID namespace of this process.
func machineIdentity() (boot, pidns string) {
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		boot = strings.TrimSpace(string(b))
	}
	if l, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		pidns = l
	}
	return boot, pidns
}

// processStart is the start time of process pid in clock ticks since boot (field 22 of
// /proc/PID/stat), "" when it cannot be read.
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may hold spaces and ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state): field 22 is fields[19].
	if len(fields) < 20 {
		return ""
	}
	return "ticks:" + fields[19]
}

// pidAlive reports whether a process with pid exists; known is false when that cannot be told.
func pidAlive(pid int) (alive, known bool) {
	err := unix.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, unix.EPERM):
		return true, true
	case errors.Is(err, unix.ESRCH):
		return false, true
	}
	return false, false
}

// sinceBoot is the time since boot, the suspensions of the machine included (CLOCK_BOOTTIME);
// 0 when it cannot be read.
func sinceBoot() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

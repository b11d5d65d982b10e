//go:build !linux

package run

import "time"

// machineIdentity is empty where the boot cannot be identified: no process of another run is
// then taken for one of this host, and a crashed run's lock goes stale by its heartbeat only.
func machineIdentity() (boot, pidns string) { return "", "" }

func processStart(int) string { return "" }

func pidAlive(int) (alive, known bool) { return false, false }

// sinceBoot is unknown here: the monotonic and wall clocks say how long the process was away.
func sinceBoot() time.Duration { return 0 }

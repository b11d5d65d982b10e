package local

import "testing"

// ForceComponentWalk makes every store resolve keys one component at a time with O_NOFOLLOW,
// as on kernels without openat2, until the test ends.
func ForceComponentWalk(t testing.TB) {
	probeOnce.Do(func() { probeOpenat2(-100) }) // AT_FDCWD: probe before forcing, so that the probe's verdict is restored
	old := noOpenat2.Load()
	noOpenat2.Store(true)
	t.Cleanup(func() { noOpenat2.Store(old) })
}

// UsesOpenat2 reports whether the stores resolve keys with openat2 on this kernel.
func UsesOpenat2() bool {
	probeOnce.Do(func() { probeOpenat2(-100) })
	return !noOpenat2.Load()
}

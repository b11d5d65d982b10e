package vacuum

import (
	"errors"
	"testing"
)

// TestLiteWindow: the commits LITE reads start after the version the last vacuum covered, or
// at the earliest commit in the log; a recorded version beyond the log, below -1, or after a
// pinned version is refused, as is a log that no longer reaches back to the last vacuum.
func TestLiteWindow(t *testing.T) {
	v := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		name        string
		snap        int64
		pinned      bool
		last        *int64
		earliest    int64
		start       int64
		refused     bool
		cannotVLite bool
	}{
		{"no vacuum recorded, log from 0", 10, false, nil, 0, 0, false, false},
		{"after the last vacuum", 10, false, v(5), 0, 6, false, false},
		{"the last vacuum covered the latest version: nothing to read", 10, false, v(10), 0, 11, false, false},
		{"pinned at the version the last vacuum covered", 10, true, v(10), 0, 11, false, false},
		{"pinned before the version the last vacuum covered", 10, true, v(11), 0, 0, true, false},
		{"a recorded version beyond the log", 10, false, v(11), 0, 0, true, false},
		{"-1: no commit covered", 10, false, v(-1), 0, 0, false, false},
		{"below -1", 10, false, v(-2), 0, 0, true, false},
		{"log cleaned up after the last vacuum", 10, false, v(3), 5, 0, true, true},
		{"log starts just after the last vacuum", 10, false, v(4), 5, 5, false, false},
		{"log starts at the version the last vacuum covered", 10, false, v(5), 5, 6, false, false},
		{"log cleaned up, no vacuum recorded", 10, false, nil, 5, 0, true, true},
		{"log cleaned up before the last vacuum", 10, false, v(7), 5, 8, false, false},
	} {
		start, err := liteWindow("t", c.snap, c.pinned, c.last, c.earliest)
		if (err != nil) != c.refused || errors.Is(err, ErrCannotVacuumLite) != c.cannotVLite || err == nil && start != c.start {
			t.Errorf("%s: start %d, error %v; want start %d, refused %v (cannot LITE %v)", c.name, start, err, c.start, c.refused, c.cannotVLite)
		}
	}
}

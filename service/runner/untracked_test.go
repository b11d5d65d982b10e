package runner

import (
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/run"
)

// TestUntrackedGrew: the rule of the untracked.grew alert (more files than the run before, at
// least twice as many per second), one row a case.
func TestUntrackedGrew(t *testing.T) {
	at := func(min int, files int64) counted {
		return counted{id: "r", started: t0.Add(time.Duration(min) * time.Minute), u: &run.Untracked{Files: files}}
	}
	for _, c := range []struct {
		name   string
		cur    counted
		before []counted
		grew   bool
	}{
		{"the first run that counts", at(10, 5), nil, false},
		{"the first files after a run that found none", at(10, 1), []counted{at(0, 0)}, true},
		{"twice as many as the one run before", at(10, 8), []counted{at(0, 4)}, true},
		{"more, but not twice as many, as the one run before", at(10, 7), []counted{at(0, 4)}, false},
		{"as many as the run before", at(10, 4), []counted{at(0, 4)}, false},
		{"fewer", at(10, 3), []counted{at(0, 4)}, false},
		{"twice as many at the same gap", at(20, 8), []counted{at(10, 4), at(0, 9)}, true},
		{"more, not twice as many, at the same gap", at(20, 7), []counted{at(10, 4), at(0, 9)}, false},
		{"twice as many after a gap twice as long: the same rate", at(30, 8), []counted{at(10, 4), at(0, 1)}, false},
		{"four times as many after a gap twice as long", at(30, 16), []counted{at(10, 4), at(0, 1)}, true},
		{"more after a gap half as long", at(15, 5), []counted{at(10, 4), at(0, 1)}, true},
		{"runs started at one time", at(10, 8), []counted{at(10, 4), at(10, 1)}, true},
	} {
		if got := untrackedGrew(c.cur, c.before); got != c.grew {
			t.Errorf("%s: grew %v, want %v", c.name, got, c.grew)
		}
	}
}

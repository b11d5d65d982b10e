package run

import (
	"testing"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestShardCommitAttempts: a shard's START and END may lose the race to every other worker's
// twice; the bound grows with the count, unless the caller set one.
func TestShardCommitAttempts(t *testing.T) {
	sharded := &vacuum.Plan{Shard: &vacuum.Shard{Index: 0, Count: 7}}
	if got := commitOptionsFor(sharded, deltalog.CommitOptions{}).MaxAttempts; got != defaultCommitAttempts+14 {
		t.Errorf("7 shards: %d attempts", got)
	}
	if got := commitOptionsFor(sharded, deltalog.CommitOptions{MaxAttempts: 3}).MaxAttempts; got != 3 {
		t.Errorf("the caller's bound replaced: %d", got)
	}
	if got := commitOptionsFor(&vacuum.Plan{}, deltalog.CommitOptions{}).MaxAttempts; got != 0 {
		t.Errorf("a run of the whole table: %d attempts, want deltalog's default", got)
	}
}

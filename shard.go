package deltavacuum

import (
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// defaultCommitAttempts is deltalog.Commit's bound on lost races when none is set.
const defaultCommitAttempts = 10

// commitOptionsFor returns the commit options of a run of plan: the workers of a sharded run
// commit their VACUUM START and END at about the same time, so a shard may lose the race to
// each of the others twice before any other writer's commit; that is no reason to stop, and
// every lost race is another writer's progress, so the bound grows with the count.
func commitOptionsFor(plan *vacuum.Plan, opts deltalog.CommitOptions) deltalog.CommitOptions {
	if plan.Shard != nil && opts.MaxAttempts <= 0 {
		opts.MaxAttempts = defaultCommitAttempts + 2*plan.Shard.Count
	}
	return opts
}

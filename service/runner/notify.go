package runner

import (
	"context"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/config"
)

// Notifier hears what the runner tells beyond its API: a run that ended FAILED (with its state
// as its run record says it) and a run whose plan held more untracked files than the table's run
// before. The webhook (service/webhook.go) is one; it posts in the background, and neither call
// may hold the runner up.
type Notifier interface {
	RunFailed(ctx context.Context, r Run, t *config.Table)
	UntrackedGrew(ctx context.Context, g UntrackedGrowth)
}

// UntrackedGrowth is a run whose plan held more untracked files than the table's run before
// (untrackedGrew): the two runs and their counts, from their run records.
type UntrackedGrowth struct {
	Table       *config.Table
	Run         string
	PreviousRun string
	Untracked   run.Untracked
	Previous    run.Untracked
}

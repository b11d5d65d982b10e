package run

import (
	"context"
	"fmt"
	"strings"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// LoggingDefault is whether VACUUM runs are recorded in the history by default on the storage
// at location: yes, except on S3 (as the reference does).
func LoggingDefault(location string) bool {
	scheme, _, _ := strings.Cut(location, "://")
	switch strings.ToLower(scheme) {
	case "s3", "s3a", "s3n":
		return false
	}
	return true
}

// S3LoggingWarning is the warning of a run recorded in the history of a table on S3.
const S3LoggingWarning = "VACUUM START and END are committed to a table on S3 (logging is on): " +
	"these commits are safe only if every writer of this table commits with conditional writes " +
	"(put-if-absent, If-None-Match: *) or through one coordinating service; a writer that overwrites " +
	"commit files can lose a commit written at the same time (the S3 multi-writer caveat of the Delta protocol). " +
	"Turn logging off (SET spark.databricks.delta.vacuum.logging.enabled = false) if that is not so"

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

// history records a run in the table history: VACUUM START before the first delete, VACUUM END
// after the last. The log is not read again in full: START is committed from the snapshot the
// plan was made from, advanced by the commits made since (deltalog.CommitFrom), which the
// re-check then takes from it (START itself, as written, is not read back); END from the
// snapshot with START applied, advanced in turn.
type history struct {
	location string
	snap     *deltalog.Snapshot
	opts     deltalog.CommitOptions
	started  bool
}

// start commits VACUUM START of plan.
func (h *history) start(ctx context.Context, store storage.Store, plan *vacuum.Plan) (*vacuum.Start, error) {
	c, err := deltalog.CommitAfter(ctx, store, h.snap, func(snap *deltalog.Snapshot) (*deltalog.CommitRequest, error) {
		return vacuumStart(plan, snap)
	}, h.opts)
	if err != nil {
		return nil, fmt.Errorf("recording VACUUM START in the history of %s: %w; nothing was deleted", h.location, err)
	}
	// END is committed after START as written, which is not read back.
	h.started, h.snap = true, c.Snapshot
	return &vacuum.Start{Version: c.Version, Base: c.Base, Size: c.Size}, nil
}

// end commits VACUUM END of res, also when the run's context was cancelled part-way; it
// returns the version committed.
func (h *history) end(ctx context.Context, store storage.Store, res *vacuum.Result) (*int64, error) {
	v, _, err := deltalog.CommitFrom(context.WithoutCancel(ctx), store, h.snap, func(*deltalog.Snapshot) (*deltalog.CommitRequest, error) {
		return vacuumEnd(res), nil
	}, h.opts)
	if err != nil {
		return nil, fmt.Errorf("recording VACUUM END in the history of %s: %w", h.location, err)
	}
	return &v, nil
}

// vacuumStart is the VACUUM START commit of plan, made on snap, the newest snapshot: its
// table retention is the one this commit records (a retention raised since planning is the
// one the run honours, and START says so).
func vacuumStart(plan *vacuum.Plan, snap *deltalog.Snapshot) (*deltalog.CommitRequest, error) {
	table, err := snap.DeletedFileRetention()
	if err != nil {
		return nil, err
	}
	params := map[string]any{
		"retentionCheckEnabled":  plan.RetentionCheckEnabled,
		"defaultRetentionMillis": table.Milliseconds(),
		"vacuumType":             string(plan.Mode),
	}
	if plan.RetentionSpecified {
		params["specifiedRetentionMillis"] = int64(plan.RetentionHours * 3600 * 1000)
	}
	if plan.Shard != nil {
		// One of N workers (--shard I/N --version V): each records its own START and END.
		params["shard"] = plan.Shard.String()
		params["snapshotVersion"] = plan.Version
	}
	return &deltalog.CommitRequest{
		Operation:     "VACUUM START",
		Parameters:    params,
		IsBlindAppend: true,
		Metrics: map[string]string{
			"numFilesToDelete":   fmt.Sprint(plan.NumFilesToDelete),
			"sizeOfDataToDelete": fmt.Sprint(plan.SizeOfDataToDelete),
		},
	}, nil
}

func vacuumEnd(res *vacuum.Result) *deltalog.CommitRequest {
	status := res.Status
	if status == "" {
		status = vacuum.StatusFailed
	}
	params := map[string]any{"status": status}
	if res.Plan != nil && res.Plan.Shard != nil {
		params["shard"] = res.Plan.Shard.String() // pairs it with its START among the other workers'
	}
	return &deltalog.CommitRequest{
		Operation:     "VACUUM END",
		Parameters:    params,
		IsBlindAppend: true,
		Metrics: map[string]string{
			"numDeletedFiles":        fmt.Sprint(res.NumDeletedFiles),
			"numVacuumedDirectories": fmt.Sprint(res.NumDeletedDirectories),
		},
	}
}

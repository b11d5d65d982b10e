package vacuum

import (
	"context"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// Coverage is the version a run that ended as res records in _delta_log/_last_vacuum_info,
// given the version recorded there now (prev, nil when none): everything the log removed up to
// the plan's newest commit outside the retention is gone, so later LITE runs start after it. A
// FULL run records it too [safer]: the reference writes {} after FULL, which blocks later LITE
// runs. Nothing is recorded (nil) for a run that did not complete, for a run during which the
// retention was raised (files of those commits were kept), for a sharded run (it covered part
// of the table, and a later LITE takes the file to mean that everything the log removed up to
// that version is gone), or when it would move the recorded version backwards, unless the
// recorded version lies beyond the log the run read, which only a corrupt file does.
func Coverage(res *Result, prev *int64) *int64 {
	if res == nil || res.Status != StatusCompleted || res.Plan == nil {
		return nil
	}
	v := res.LatestCommitOutsideRetention
	if v == nil || res.retentionRaised || res.Shard != nil {
		return nil
	}
	if prev != nil && *prev >= *v && res.RecheckedThrough != nil && *prev <= *res.RecheckedThrough {
		return nil
	}
	return v
}

// RecordCoverage writes _delta_log/_last_vacuum_info after a run that ended as res, when
// Coverage says it records a version. A file that cannot be read is left as it is.
func RecordCoverage(ctx context.Context, store storage.Store, res *Result) error {
	if Coverage(res, nil) == nil {
		return nil
	}
	prev, err := deltalog.ReadLastVacuumInfo(ctx, store)
	if err != nil {
		return nil
	}
	v := Coverage(res, prev)
	if v == nil {
		return nil
	}
	return deltalog.WriteLastVacuumInfo(ctx, store, *v)
}

package deltavacuum_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

func shardOpts(shard *vacuum.Shard, version *int64) deltavacuum.VacuumOptions {
	zero := 0.0
	return deltavacuum.VacuumOptions{Options: vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true, Shard: shard, Version: version}}
}

// liveHolder takes the table's lock as another live process's run would (a worker of shard
// at version, or of the whole table when shard is empty).
func liveHolder(t *testing.T, store storage.Store, shard string, version int64) string {
	t.Helper()
	ctx := context.Background()
	o := run.LockOptions{Purpose: run.PurposeVacuum, Run: run.NewID(time.Now()),
		Ticks: func() (<-chan time.Time, func()) { return make(chan time.Time), func() {} }}
	if shard != "" {
		s, err := vacuum.ParseShard(shard)
		if err != nil {
			t.Fatal(err)
		}
		o.Shard, o.Version = &s, &version
	}
	l, err := run.Acquire(ctx, store, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Release(ctx) })
	return o.Run
}

// TestShardsRunSideBySide: the workers of one sharded run (other shards of one count, at one
// pinned version) run while each other holds the lock; a run of the whole table, of the
// same shard, of another count or another version is refused beside them, and a sharded run is
// refused beside a live run of the whole table.
func TestShardsRunSideBySide(t *testing.T) {
	ctx := context.Background()
	v := int64(13) // the fixture's latest version
	other := v - 1
	for _, tc := range []struct {
		name     string
		live     string // the live run's shard ("" the whole table)
		liveV    int64
		shard    *vacuum.Shard
		version  *int64
		refused  bool
		mentions string
	}{
		{"other shard", "0/2", v, &vacuum.Shard{Index: 1, Count: 2}, &v, false, ""},
		{"same shard", "1/2", v, &vacuum.Shard{Index: 1, Count: 2}, &v, true, "shard 1/2 at version 13"},
		{"whole table beside shards", "0/2", v, nil, nil, true, "shard 0/2"},
		{"whole table pinned beside shards", "0/2", v, nil, &v, true, "shard 0/2"},
		{"shard beside whole table", "", v, &vacuum.Shard{Index: 1, Count: 2}, &v, true, "vacuum (run"},
		{"other count", "0/2", v, &vacuum.Shard{Index: 1, Count: 3}, &v, true, "shard 0/2"},
		{"other version", "0/2", other, &vacuum.Shard{Index: 1, Count: 2}, &v, true, "at version 12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := localFixture(t)
			id := liveHolder(t, store, tc.live, tc.liveV)
			tbl := deltavacuum.OpenStore(store)
			dry := shardOpts(tc.shard, tc.version)
			dry.DryRun = true
			if _, err := tbl.Vacuum(ctx, dry); err != nil {
				t.Fatalf("a DRY RUN: %v", err)
			}
			res, err := tbl.Vacuum(ctx, shardOpts(tc.shard, tc.version))
			if !tc.refused {
				if err != nil {
					t.Fatalf("refused beside %s: %v", tc.live, err)
				}
				return
			}
			if !errors.Is(err, run.ErrLocked) || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), tc.mentions) {
				t.Fatalf("got %v (%v), want a refusal naming %s and %q", res, err, id, tc.mentions)
			}
		})
	}
}

// TestShardRecorded: a sharded run's VACUUM START says its shard and pinned version, its run
// record says its shard, its result says it, and it writes no _delta_log/_last_vacuum_info.
func TestShardRecorded(t *testing.T) {
	ctx := context.Background()
	store := localFixture(t)
	tbl := deltavacuum.OpenStore(store)
	v := int64(13)
	var deleted int64
	for i := range 2 {
		res, err := tbl.Vacuum(ctx, shardOpts(&vacuum.Shard{Index: i, Count: 2}, &v))
		if err != nil {
			t.Fatal(err)
		}
		if res.Shard == nil || res.Shard.Index != i || res.Version != v || res.StartVersion == nil {
			t.Fatalf("the result says shard %v version %d start %v", res.Shard, res.Version, res.StartVersion)
		}
		deleted += res.NumDeletedFiles
		hist, err := deltalog.History(ctx, store, 2)
		if err != nil {
			t.Fatal(err)
		}
		var params map[string]any
		if err := json.Unmarshal(hist[1].OperationParameters, &params); err != nil || hist[1].Operation != "VACUUM START" {
			t.Fatalf("%s %s: %v", hist[1].Operation, hist[1].OperationParameters, err)
		}
		if want := (vacuum.Shard{Index: i, Count: 2}).String(); params["shard"] != want || params["snapshotVersion"] != float64(v) {
			t.Errorf("VACUUM START of shard %d/2 records %v", i, params)
		}
		var end map[string]any
		if err := json.Unmarshal(hist[0].OperationParameters, &end); err != nil || hist[0].Operation != "VACUUM END" || end["shard"] != params["shard"] {
			t.Errorf("%s %s: %v", hist[0].Operation, hist[0].OperationParameters, err)
		}
		runs, err := tbl.Runs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if last := runs[0]; last.Shard != params["shard"] || last.SnapshotVersion != v {
			t.Errorf("the run record says shard %q version %d", last.Shard, last.SnapshotVersion)
		}
	}
	if deleted != 7 { // INDEX.md: the reference rules delete 7 files of this table
		t.Errorf("the two shards deleted %d files, one run deletes 7", deleted)
	}
	if _, err := store.Stat(ctx, deltalog.LastVacuumInfoKey); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("a sharded run wrote %s: %v", deltalog.LastVacuumInfoKey, err)
	}
}

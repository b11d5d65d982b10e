package insight_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// liteTable writes, on local disk, a table whose commits are all 8 days old (so that LITE
// reads them under the default week) with three files, 30 days old: a.parquet removed 10 days
// ago, b.parquet removed 2 days ago (inside the retention), c.parquet live.
func liteTable(t *testing.T, now time.Time) (string, *local.Store) {
	t.Helper()
	dir := t.TempDir()
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	add := func(p string, size int) any {
		return map[string]any{"add": map[string]any{"path": p, "size": size, "modificationTime": now.Add(-30 * day).UnixMilli(), "dataChange": true, "partitionValues": map[string]string{}}}
	}
	remove := func(p string, size int, ago time.Duration) any {
		return map[string]any{"remove": map[string]any{"path": p, "size": size, "deletionTimestamp": now.Add(-ago).UnixMilli(), "dataChange": true}}
	}
	commits := [][]any{
		{map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
			map[string]any{"metaData": map[string]any{"id": "lite", "format": map[string]any{"provider": "parquet"},
				"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}}},
		{add("a.parquet", 100), add("b.parquet", 200), add("c.parquet", 400)},
		{remove("a.parquet", 100, 10*day), remove("b.parquet", 200, 2*day)},
	}
	for v, actions := range commits {
		if err := deltalog.WriteCommit(ctx, store, int64(v), actions); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a.parquet", "b.parquet", "c.parquet"} {
		if err := os.WriteFile(filepath.Join(dir, f), make([]byte, 1), 0o644); err != nil {
			t.Fatal(err)
		}
		setTime(t, filepath.Join(dir, f), now.Add(-30*day))
	}
	for v := range commits {
		setTime(t, filepath.Join(dir, filepath.FromSlash(deltalog.CommitKey(int64(v)))), now.Add(-8*day))
	}
	return dir, store
}

func setTime(t *testing.T, p string, mt time.Time) {
	t.Helper()
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
}

// TestInspectLiteRetention: inspect --lite counts as reclaimable the file of a tombstone
// older than the retention, never one whose tombstone is still inside it (it is counted as
// tombstoned in the retention, and reclaimable on the day it expires), nor a live file.
func TestInspectLiteRetention(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	_, store := liteTable(t, now)
	days := 7
	r, err := insight.Inspect(context.Background(), store, insight.Options{Now: now, Lite: true, ForecastDays: &days})
	if err != nil {
		t.Fatal(err)
	}
	if r.Reclaimable.Count != (insight.Count{Files: 1, Bytes: 100}) || r.Reclaimable.ByReason[vacuum.ReasonTombstone].Files != 1 {
		t.Errorf("reclaimable %+v, want a.parquet's tombstone alone (1 file, 100 bytes)", r.Reclaimable)
	}
	if r.Files.TombstonedInRetention != (insight.Count{Files: 1, Bytes: 200}) || r.Files.Live != (insight.Count{Files: 1, Bytes: 400}) {
		t.Errorf("tombstoned in the retention %+v, live %+v; want b.parquet and c.parquet", r.Files.TombstonedInRetention, r.Files.Live)
	}
	// b.parquet's tombstone (2 days old) is at the cutoff on day 5 (kept), before it on day 6.
	for _, d := range r.Forecast {
		want := insight.Count{Files: 1, Bytes: 100}
		if d.Day >= 6 {
			want = insight.Count{Files: 2, Bytes: 300}
		}
		if d.Total != want {
			t.Errorf("forecast day %d: %+v, want %+v", d.Day, d.Total, want)
		}
	}
	// RETAIN 24 HOURS: both tombstones have expired.
	h := 24.0
	r, err = insight.Inspect(context.Background(), store, insight.Options{Now: now, Lite: true, RetainHours: &h})
	if err != nil {
		t.Fatal(err)
	}
	if r.Reclaimable.Count != (insight.Count{Files: 2, Bytes: 300}) {
		t.Errorf("RETAIN 24 HOURS: reclaimable %+v, want a.parquet and b.parquet", r.Reclaimable.Count)
	}
}

// TestInspectLiteRefused: on a table VACUUM LITE refuses (its log starts after version 0 and
// no VACUUM is recorded), inspect --lite reports nothing reclaimable, now or later, and says
// that LITE would refuse and that VACUUM FULL must run.
func TestInspectLiteRefused(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	dir, store := liteTable(t, now)
	ctx := context.Background()
	// A checkpoint at version 2, then commits 0 and 1 cleaned up.
	actions := []any{
		map[string]any{"checkpointMetadata": map[string]any{"version": 2}},
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "lite", "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}},
		map[string]any{"add": map[string]any{"path": "c.parquet", "size": 400, "modificationTime": 0, "dataChange": true, "partitionValues": map[string]string{}}},
		map[string]any{"remove": map[string]any{"path": "a.parquet", "size": 100, "deletionTimestamp": now.Add(-10 * day).UnixMilli(), "dataChange": true}},
		map[string]any{"remove": map[string]any{"path": "b.parquet", "size": 200, "deletionTimestamp": now.Add(-2 * day).UnixMilli(), "dataChange": true}},
	}
	cp, err := deltalog.EncodeCommit(actions)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, "_delta_log/00000000000000000002.checkpoint.0b6a1c3e-7d1f-4c2a-9a3e-1f2e3d4c5b6a.json", cp); err != nil {
		t.Fatal(err)
	}
	for v := range int64(2) {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(deltalog.CommitKey(v)))); err != nil {
			t.Fatal(err)
		}
	}
	days := 7
	r, err := insight.Inspect(ctx, store, insight.Options{Now: now, Lite: true, ForecastDays: &days})
	if err != nil {
		t.Fatal(err)
	}
	if r.Reclaimable.Count != (insight.Count{}) || r.Source != "log" {
		t.Errorf("reclaimable %+v from %s, want nothing, from the log", r.Reclaimable.Count, r.Source)
	}
	for _, d := range r.Forecast {
		if d.Total != (insight.Count{}) {
			t.Errorf("forecast day %d: %+v, want nothing", d.Day, d.Total)
		}
	}
	for _, w := range r.WhatIf {
		if w.Reclaimable != (insight.Count{}) {
			t.Errorf("what-if %gh: %+v, want nothing", w.RetentionHours, w.Reclaimable)
		}
	}
	if r.Files.Live.Files != 1 {
		t.Errorf("live %+v, want c.parquet", r.Files.Live)
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool {
		return strings.Contains(n, "VACUUM LITE would refuse") && strings.Contains(n, "DELTA_CANNOT_VACUUM_LITE") && strings.Contains(n, "VACUUM FULL")
	}) {
		t.Errorf("the notes do not say that LITE refuses and FULL is needed: %q", r.Notes)
	}
}

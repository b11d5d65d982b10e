package vacuum

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

var lite0 = Options{Mode: ModeLite, RetainHours: hours(0), DisableRetentionCheck: true}

// ageCommits sets the modification time of commit v to now-age.
func (tb *table) ageCommit(v int64, age time.Duration) {
	tb.t.Helper()
	if err := tb.store.Chtime(deltalog.CommitKey(v), now.Add(-age)); err != nil {
		tb.t.Fatal(err)
	}
}

func TestLiteCandidates(t *testing.T) {
	tb := newTable(t, tableSpec{partitionColumns: []string{"p"}})
	tb.commit(add("a.parquet"), addDV("p=1/b.parquet", dvU("", z85)), add("_tmp/h.parquet"), add("c.parquet"))
	tb.commit(remove("a.parquet", 20*day), removeDV("p=1/b.parquet", 20*day, dvU("", z85)), remove("_tmp/h.parquet", 20*day), cdc("_change_data/x.parquet"))
	tb.commit(remove("c.parquet", 20*day))
	tb.commit(add("c.parquet")) // re-added: live again
	for _, k := range []string{"a.parquet", "p=1/b.parquet", dvFile, "_tmp/h.parquet", "c.parquet", "_change_data/x.parquet", "untracked.parquet"} {
		tb.file(k, 30*day)
	}
	plan := tb.plan(Options{Mode: ModeLite})
	want := map[string]Reason{
		"a.parquet": ReasonTombstone, "p=1/b.parquet": ReasonTombstone, dvFile: ReasonTombstone,
		"_change_data/x.parquet": ReasonChangeData,
	}
	if diff := cmp.Diff(want, deleted(plan)); diff != "" {
		t.Errorf("LITE candidates (-want +got):\n%s", diff)
	}
	if plan.Mode != ModeLite || plan.Source != "log" || *plan.EligibleStartVersion != 0 || *plan.EligibleEndVersion != 4 {
		t.Errorf("mode %s source %s range %v..%v", plan.Mode, plan.Source, *plan.EligibleStartVersion, *plan.EligibleEndVersion)
	}
	if len(plan.Dirs) != 0 {
		t.Errorf("LITE deletes no directories, got %v", plan.Dirs)
	}
}

func TestLiteCutoffAndRetention(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("a.parquet"), add("b.parquet"))
	tb.commit(remove("a.parquet", 3*day))
	tb.ageCommit(2, 3*day)
	tb.file("a.parquet", 30*day)
	// With the table's 7 days, commit 2 (3 days old) is inside the retention: nothing.
	if plan := tb.plan(Options{Mode: ModeLite}); plan.Files.Len() != 0 || *plan.LatestCommitOutsideRetention != 1 {
		t.Errorf("7-day retention: %v, latest commit outside %v", plan.Files, *plan.LatestCommitOutsideRetention)
	}
	// RETAIN 0 HOURS reaches it.
	if plan := tb.plan(lite0); plan.Files.Len() != 1 {
		t.Errorf("RETAIN 0: %v", plan.Files)
	}
}

func TestLiteTwiceIsANoOp(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("a.parquet"))
	tb.commit(remove("a.parquet", 20*day))
	tb.file("a.parquet", 30*day)
	plan := tb.plan(lite0)
	if _, err := exec(t, tb, plan); err != nil {
		t.Fatal(err)
	}
	lv, _ := deltalog.ReadLastVacuumInfo(context.Background(), tb.store)
	if lv == nil || *lv != 2 {
		t.Fatalf("_last_vacuum_info = %v, want 2", lv)
	}
	plan = tb.plan(lite0)
	if plan.Files.Len() != 0 || *plan.EligibleStartVersion != 3 {
		t.Errorf("second LITE: %v from %d", plan.Files, *plan.EligibleStartVersion)
	}
}

func TestLiteLogNoLongerReachesBack(t *testing.T) {
	setup := func(t *testing.T) *table {
		tb := newTable(t, tableSpec{})
		for i := 0; i < 5; i++ {
			tb.commit(add("f" + string(rune('a'+i)) + ".parquet"))
		}
		// A checkpoint at 3, and commits 0-3 cleaned up.
		cp, _ := deltalog.EncodeCommit([]any{
			map[string]any{"checkpointMetadata": map[string]any{"version": 3}},
			map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
			map[string]any{"metaData": map[string]any{"id": "x", "format": map[string]any{"provider": "parquet"}, "schemaString": "{}", "partitionColumns": []string{}, "configuration": map[string]string{}}},
		})
		tb.store.PutAt("_delta_log/00000000000000000003.checkpoint.0b6a1c3e-7d1f-4c2a-9a3e-1f2e3d4c5b6a.json", cp, now)
		for v := int64(0); v <= 3; v++ {
			tb.store.Delete(context.Background(), []string{deltalog.CommitKey(v)})
		}
		return tb
	}
	t.Run("commit 0 missing, no last vacuum", func(t *testing.T) {
		tb := setup(t)
		p, err := tb.planner(lite0)
		if err == nil {
			_, err = p.Plan(context.Background())
		}
		if !errors.Is(err, ErrCannotVacuumLite) {
			t.Fatalf("got %v", err)
		}
		for _, want := range []string{"VACUUM LITE cannot delete all eligible files as some files are not referenced by the Delta log. Please run VACUUM FULL.", "DELTA_CANNOT_VACUUM_LITE", "Run VACUUM FULL once"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q lacks %q", err, want)
			}
		}
	})
	for _, tc := range []struct {
		lv   string
		fail bool
	}{{`{"latestCommitVersionOutsideOfRetentionWindow": 2}`, true}, {`{"latestCommitVersionOutsideOfRetentionWindow": 3}`, false}, {`{}`, true}, {`not json`, true}, {``, true}} {
		t.Run("last vacuum "+tc.lv, func(t *testing.T) {
			tb := setup(t)
			tb.store.PutAt(deltalog.LastVacuumInfoKey, []byte(tc.lv), now)
			p, err := tb.planner(lite0)
			if err == nil {
				_, err = p.Plan(context.Background())
			}
			if got := errors.Is(err, ErrCannotVacuumLite); got != tc.fail {
				t.Errorf("got %v, want failure %v", err, tc.fail)
			}
		})
	}
}

// listingRecorder records every Walk prefix.
type listingRecorder struct {
	storage.Store
	prefixes []string
}

func (r *listingRecorder) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	r.prefixes = append(r.prefixes, prefix)
	return r.Store.Walk(ctx, prefix, fn)
}

// TestLiteOnFixtures: on every fixture whose log is complete, LITE deletes a subset of what
// FULL deletes, and lists nothing outside _delta_log/.
func TestLiteOnFixtures(t *testing.T) {
	clock := time.Now()
	for _, tbl := range fixtures.Tables(t) {
		if _, refused := map[string]bool{"delta/table-with-dv-special-char": true}[tbl.Name]; refused {
			continue
		}
		t.Run(tbl.Name, func(t *testing.T) {
			dir := fixtures.Copy(t, tbl.Name, clock.Add(-30*24*time.Hour))
			store, _ := local.New(dir)
			rec := &listingRecorder{Store: store}
			opts := Options{RetainHours: hours(0), DisableRetentionCheck: true, Now: clock}
			full, err := NewPlanner(context.Background(), store, opts)
			if err != nil {
				t.Fatal(err)
			}
			fullPlan, err := full.Plan(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			opts.Mode = ModeLite
			lp, err := NewPlanner(context.Background(), rec, opts)
			if err != nil {
				t.Fatal(err)
			}
			litePlan, err := lp.Plan(context.Background())
			if errors.Is(err, ErrCannotVacuumLite) {
				if lp.Snapshot().Segment.AllCommits[0].Version == 0 {
					t.Fatalf("refused although the log starts at 0: %v", err)
				}
				return // the log is not complete: LITE must refuse, and did
			}
			if err != nil {
				t.Fatal(err)
			}
			inFull := map[string]bool{}
			for _, f := range fullPlan.Files.MustCollect() {
				inFull[f.Path] = true
			}
			for _, f := range litePlan.Files.MustCollect() {
				if !inFull[f.Path] {
					if _, err := store.Stat(context.Background(), f.Path); err == nil {
						t.Errorf("LITE deletes %s, which FULL keeps", f.Path)
					}
				}
			}
			for _, p := range rec.prefixes {
				if !strings.HasPrefix(p, deltalog.LogDir) {
					t.Errorf("LITE listed %q", p)
				}
			}
		})
	}
}

// TestLiteDeletesChecksums: on local disk, LITE deletes the Hadoop .crc companion of each file
// it deletes, as Spark's LITE does through Hadoop's local file system.
func TestLiteDeletesChecksums(t *testing.T) {
	clock := time.Now()
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", clock.Add(-30*24*time.Hour))
	store, _ := local.New(dir)
	p, err := NewPlanner(context.Background(), store, Options{Mode: ModeLite, RetainHours: hours(0), DisableRetentionCheck: true, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if plan.Files.Len() != 7 {
		t.Fatalf("LITE plans %d files, want the 7 tombstones", plan.Files.Len())
	}
	for _, f := range plan.Files.MustCollect() {
		if f.Checksum != "."+f.Path+".crc" {
			t.Errorf("%s: checksum companion %q", f.Path, f.Checksum)
		}
	}
}

func TestLastVacuumInfoDropsStaleChecksum(t *testing.T) {
	dir := t.TempDir()
	store, _ := local.New(dir)
	ctx := context.Background()
	store.Put(ctx, "_delta_log/_last_vacuum_info", []byte(`{"latestCommitVersionOutsideOfRetentionWindow":1}`))
	store.Put(ctx, "_delta_log/._last_vacuum_info.crc", []byte("crc of the old content"))
	if err := deltalog.WriteLastVacuumInfo(ctx, store, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Stat(ctx, "_delta_log/._last_vacuum_info.crc"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("the stale checksum is still there: %v", err)
	}
	if v, _ := deltalog.ReadLastVacuumInfo(ctx, store); v == nil || *v != 5 {
		t.Errorf("got %v, want 5", v)
	}
}

// TestLiteCorruptLastVacuumInfo: a _last_vacuum_info that names a version beyond the log is
// corrupt: LITE says so (instead of silently finding nothing) and FULL rewrites it.
func TestLiteCorruptLastVacuumInfo(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("a.parquet"))
	tb.commit(remove("a.parquet", 20*day))
	tb.file("a.parquet", 30*day)
	if err := deltalog.WriteLastVacuumInfo(context.Background(), tb.store, 99); err != nil {
		t.Fatal(err)
	}
	p, err := tb.planner(lite0)
	if err == nil {
		_, err = p.Plan(context.Background())
	}
	if err == nil || !strings.Contains(err.Error(), "is corrupt") || !strings.Contains(err.Error(), "version 99") || !strings.Contains(err.Error(), "VACUUM FULL") {
		t.Fatalf("got %v, want a message that the file is corrupt and to run VACUUM FULL", err)
	}
	if _, err := exec(t, tb, tb.plan(retain0)); err != nil {
		t.Fatal(err)
	}
	if lv, _ := deltalog.ReadLastVacuumInfo(context.Background(), tb.store); lv == nil || *lv != 2 {
		t.Errorf("after FULL, _last_vacuum_info = %v, want 2", lv)
	}
	if plan := tb.plan(lite0); plan.Files.Len() != 0 {
		t.Errorf("LITE after FULL: %v", plan.Files)
	}
}

// TestLiteObserveLog: with ObserveLog, LITE tells an observer of each file the log names once:
// the snapshot's protected files and deletion vectors (with the log's sizes), then each
// candidate of the commits it reads, with the verdict LITE gave it; the plan is the plan
// without an observer, and without ObserveLog the observer is told nothing.
func TestLiteObserveLog(t *testing.T) {
	tb := newTable(t, tableSpec{partitionColumns: []string{"p"}})
	big := add("live.parquet")
	big["add"].(map[string]any)["size"] = 1000
	tb.commit(big, addDV("p=1/dv.parquet", dvU("", z85)), add("retained.parquet"), add("expired.parquet"), add("Case.parquet"), add("back.parquet"))
	tb.commit(remove("retained.parquet", 2*day), remove("expired.parquet", 10*day), remove("_tmp/x.parquet", 10*day),
		remove("case.parquet", 10*day), remove("back.parquet", 10*day), cdc("_change_data/c.parquet"))
	tb.commit(add("back.parquet"), remove("expired.parquet", 9*day)) // re-added; removed again
	tb.ageCommit(2, 8*day)
	tb.ageCommit(3, 8*day)
	want := map[string]Verdict{
		"live.parquet":           {Rule: RuleLive, NewestRemoval: -1},
		"p=1/dv.parquet":         {Rule: RuleLive, NewestRemoval: -1},
		dvFile:                   {Rule: RuleLiveDV, NewestRemoval: -1},
		"Case.parquet":           {Rule: RuleLive, NewestRemoval: -1},
		"back.parquet":           {Rule: RuleLive, NewestRemoval: -1},
		"retained.parquet":       {Rule: RuleRetained, Reason: ReasonTombstone, NewestRemoval: now.Add(-2 * day).UnixMilli()},
		"expired.parquet":        {Rule: RuleUnreferenced, Reason: ReasonTombstone, NewestRemoval: now.Add(-9 * day).UnixMilli()},
		"_tmp/x.parquet":         {Rule: RuleHidden, NewestRemoval: -1},
		"case.parquet":           {Rule: RuleOtherSpelling, NewestRemoval: now.Add(-10 * day).UnixMilli()},
		"_change_data/c.parquet": {Rule: RuleUnreferenced, Reason: ReasonChangeData, NewestRemoval: -1},
	}
	got := map[string]Verdict{}
	told := map[string]int{}
	opts := Options{Mode: ModeLite, ObserveLog: true, Observe: func(v Verdict) { got[v.Object.Key] = v; told[v.Object.Key]++ }}
	observed := tb.plan(opts)
	for k, w := range want {
		g := got[k]
		if g.Rule != w.Rule || g.Reason != w.Reason || g.NewestRemoval != w.NewestRemoval {
			t.Errorf("%s: %s %q %d, want %s %q %d", k, g.Rule, g.Reason, g.NewestRemoval, w.Rule, w.Reason, w.NewestRemoval)
		}
	}
	for k, n := range told {
		if _, ok := want[k]; !ok || n != 1 {
			t.Errorf("%s told %d times (want once, and only the files of the log)", k, n)
		}
	}
	if got["live.parquet"].Object.Size != 1000 || got[dvFile].Object.Size != 0 {
		t.Errorf("sizes: live %d, DV %d; want the log's 1000, and 0 for a DV file", got["live.parquet"].Object.Size, got[dvFile].Object.Size)
	}
	plain := tb.plan(Options{Mode: ModeLite})
	if diff := cmp.Diff(deleted(plain), deleted(observed)); diff != "" {
		t.Errorf("observing changed the plan (-without +with):\n%s", diff)
	}
	for k, v := range got {
		if _, planned := deleted(observed)[k]; v.Deletes() != planned {
			t.Errorf("%s: Deletes() %v, planned %v", k, v.Deletes(), planned)
		}
	}
	n := 0
	tb.plan(Options{Mode: ModeLite, Observe: func(Verdict) { n++ }})
	if n != 0 {
		t.Errorf("without ObserveLog, LITE told the observer %d verdicts", n)
	}
}

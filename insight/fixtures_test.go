package insight_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

const day = 24 * time.Hour

// refused are fixtures the planner refuses (see vacuum/fixtures_test.go).
var refused = map[string]bool{"delta/table-with-dv-special-char": true}

// fixtureTable copies a fixture and ages it so that the rules all have work: the clock is two
// days after the newest deletionTimestamp of the log, so the removes of the last week are
// inside the default retention; every file is 10 days older than that, except every third
// one, modified a day before the clock (too new for any retention of a day or more).
func fixtureTable(t *testing.T, name string) (dir string, store *local.Store, now time.Time) {
	t.Helper()
	dir = fixtures.Copy(t, name, time.Unix(0, 0))
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.Load(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	var newest int64
	err = snap.Files(context.Background(), store, func(f deltalog.File) error {
		newest = max(newest, f.DeletionTimestamp)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if newest == 0 {
		newest = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	}
	now = time.UnixMilli(newest).Add(2 * day)
	for i, f := range fixtures.Files(t, dir) {
		mt := now.Add(-12 * day)
		if i%3 == 2 && !strings.HasPrefix(f, "_delta_log/") {
			mt = now.Add(-day)
		}
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return dir, store, now
}

// eachFixture runs fn for every fixture table the planner accepts, as a subtest.
func eachFixture(t *testing.T, fn func(t *testing.T, name string)) {
	for _, tbl := range fixtures.Tables(t) {
		if !refused[tbl.Name] {
			t.Run(tbl.Name, func(t *testing.T) { fn(t, tbl.Name) })
		}
	}
}

func plan(t *testing.T, store storage.Store, now time.Time, retain *float64) *vacuum.Plan {
	t.Helper()
	p, err := vacuum.NewPlanner(context.Background(), store, vacuum.Options{Now: now, RetainHours: retain, DisableRetentionCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := p.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func totals(p *vacuum.Plan) insight.Count {
	return insight.Count{Files: p.NumFilesToDelete, Bytes: p.SizeOfDataToDelete}
}

var whatIfHours = []float64{0, 1, 24, 48, 72, 168, 720, 2555}

// TestFixtureInspect checks, on every fixture, that reclaimable now is the plan, file for
// file; that the forecast of day d is the plan of a run with the clock d days later; that each
// what-if row is the plan at that retention; and that the categories account for every file.
func TestFixtureInspect(t *testing.T) {
	eachFixture(t, func(t *testing.T, name string) {
		dir, store, now := fixtureTable(t, name)
		days := 12
		r, err := insight.Inspect(context.Background(), store, insight.Options{Now: now, ForecastDays: &days, WhatIfHours: whatIfHours})
		if err != nil {
			t.Fatal(err)
		}
		p := plan(t, store, now, nil)
		if got, want := r.Reclaimable.Count, totals(p); got != want {
			t.Errorf("reclaimable %+v, the plan deletes %+v", got, want)
		}
		if got, want := r.Reclaimable.Directories, int64(len(p.Dirs)); got != want {
			t.Errorf("reclaimable directories %d, the plan deletes %d", got, want)
		}
		if len(r.Forecast) != days {
			t.Fatalf("forecast has %d days, want %d", len(r.Forecast), days)
		}
		for _, d := range r.Forecast {
			want := totals(plan(t, store, now.Add(time.Duration(d.Day)*day), nil))
			if d.Total != want {
				t.Errorf("forecast day %d: %+v, the plan with the clock then deletes %+v", d.Day, d.Total, want)
			}
		}
		for _, w := range r.WhatIf {
			h := w.RetentionHours
			if want := totals(plan(t, store, now, &h)); w.Reclaimable != want {
				t.Errorf("what-if %gh: %+v, the plan at that retention deletes %+v", h, w.Reclaimable, want)
			}
		}
		checkAccounted(t, dir, r)
	})
}

// checkAccounted checks that the categories of the report add up to the files on disk.
func checkAccounted(t *testing.T, dir string, r *insight.Report) {
	t.Helper()
	var want insight.Count
	for _, f := range fixtures.Files(t, dir) {
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		want.Files++
		want.Bytes += fi.Size()
	}
	got := sum(r.Files)
	if got != want {
		t.Errorf("the categories count %+v, the table holds %+v: %+v", got, want, r.Files)
	}
}

// TestFixtureTimeTravel vacuums copies of every fixture at several retentions and reads the
// version the what-if table says time travel still reaches: all its files (and those of every
// later version) are there, and the version before it, when the log can rebuild it, lost one.
func TestFixtureTimeTravel(t *testing.T) {
	eachFixture(t, func(t *testing.T, name string) {
		for _, h := range []float64{0, 24, 168, 2555} {
			_, store, now := fixtureTable(t, name)
			r, err := insight.Inspect(context.Background(), store, insight.Options{Now: now, WhatIfHours: []float64{h}})
			if err != nil {
				t.Fatal(err)
			}
			w := r.WhatIf[0]
			// Files a version names that were never on disk (a fixture copied without
			// them) are not the vacuum's doing.
			before := map[int64]int{}
			for v := r.OldestVersion; v <= r.Version; v++ {
				before[v] = len(missingFiles(t, store, v))
			}
			p := plan(t, store, now, &h)
			if _, err := vacuum.Execute(context.Background(), store, p, vacuum.ExecOptions{}); err != nil {
				t.Fatal(err)
			}
			for v := w.OldestVersion; v <= r.Version; v++ {
				if missing := missingFiles(t, store, v); len(missing) > before[v] {
					t.Errorf("retention %gh: version %d (oldest readable: %d) lost %v", h, v, w.OldestVersion, missing)
				}
			}
			if v := w.OldestVersion - 1; v >= r.OldestVersion {
				if missing := missingFiles(t, store, v); len(missing) == before[v] {
					t.Errorf("retention %gh: the report says time travel reaches version %d, but version %d is whole too", h, w.OldestVersion, v)
				}
			}
		}
	})
}

// missingFiles returns the files of version v (live adds and their deletion vectors) that
// are not in the store.
func missingFiles(t *testing.T, store storage.Store, v int64) []string {
	t.Helper()
	ctx := context.Background()
	seg, err := deltalog.ListLogAt(ctx, store, v)
	if err != nil {
		t.Fatalf("version %d: %v", v, err)
	}
	snap, err := deltalog.LoadSegment(ctx, store, seg)
	if err != nil {
		t.Fatalf("version %d: %v", v, err)
	}
	var missing []string
	err = snap.Files(ctx, store, func(f deltalog.File) error {
		for _, k := range []string{f.Key, f.DVKey} {
			if _, err := store.Stat(ctx, k); !f.Removed && k != "" && errors.Is(err, storage.ErrNotExist) {
				missing = append(missing, k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return missing
}

// TestFixtureExplain explains every file and folder of every fixture and checks each verdict
// against the plan: "would delete" exactly for what the plan deletes (files, their checksum
// companions, directories), "kept" for everything else, never "not in the table".
func TestFixtureExplain(t *testing.T) {
	eachFixture(t, func(t *testing.T, name string) {
		dir, store, now := fixtureTable(t, name)
		var paths []string
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			paths = append(paths, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		x, err := insight.Explain(context.Background(), store, paths, insight.ExplainOptions{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		checkExplained(t, x, plan(t, store, now, nil), true)
	})
}

// checkExplained checks each explanation against the plan: "would delete" exactly for what
// the plan deletes (files, their checksum companions and, with dirs, directories), "kept" for
// everything else; and the evidence of each rule.
func checkExplained(t *testing.T, x *insight.Explained, p *vacuum.Plan, dirs bool) {
	t.Helper()
	deleted := map[string]bool{}
	for _, f := range p.Files.MustCollect() {
		deleted[f.Path] = true
		if f.Checksum != "" {
			deleted[f.Checksum] = true
		}
	}
	for _, d := range p.Dirs {
		deleted[d.Path] = dirs
	}
	n := 0
	for _, e := range x.Paths {
		want := insight.VerdictKept
		if deleted[e.Key] {
			want = insight.VerdictWouldDelete
			n++
		}
		if e.Verdict != want {
			t.Errorf("%s: %s (%s), the plan says %s", e.Path, e.Verdict, e.Text, want)
		}
		if !strings.HasPrefix(e.Text, e.Verdict+":") {
			t.Errorf("%s: the explanation %q does not start with its verdict %q", e.Path, e.Text, e.Verdict)
		}
		checkEvidence(t, e)
	}
	if dirs && n != len(deleted) {
		t.Errorf("%d paths explained as deleted, the plan deletes %d", n, len(deleted))
	}
}

// checkEvidence checks that the evidence supports the rule.
func checkEvidence(t *testing.T, e insight.Explanation) {
	t.Helper()
	ev := e.Evidence
	switch e.Rule {
	case vacuum.RuleLive:
		if ev.AddedInVersion == nil {
			t.Errorf("%s: live without the version that added it: %s", e.Path, e.Text)
		}
	case vacuum.RuleLiveDV:
		if ev.DeletionVectorOf == "" {
			t.Errorf("%s: a live deletion vector without its data file: %s", e.Path, e.Text)
		}
	case vacuum.RuleRetained, vacuum.RuleRetainedDV:
		if ev.RemovedInVersion == nil || ev.DeletableAfter == nil {
			t.Errorf("%s: a tombstone inside the retention without its remove or when it expires: %s", e.Path, e.Text)
		}
	}
}

func TestExplainHostilePaths(t *testing.T) {
	_, store, now := fixtureTable(t, "delta/basic-with-inserts-deletes-checkpoint")
	loc := store.Location()
	cases := []struct{ path, verdict, text string }{
		{"../escape.parquet", insight.VerdictNotInTable, "'..'"},
		{"a/../../b", insight.VerdictNotInTable, "'..'"},
		{"./x", insight.VerdictNotInTable, "'.'"},
		{"a//b", insight.VerdictNotInTable, "empty"},
		{"/etc/passwd", insight.VerdictNotInTable, "outside the table root"},
		{"s3://bucket/x.parquet", insight.VerdictNotInTable, "outside the table root"},
		{"", insight.VerdictNotInTable, "table root itself"},
		{loc + "/", insight.VerdictNotInTable, "table root itself"},
		{"x\x00y", insight.VerdictNotInTable, "NUL"},
		{"no-such-file.parquet", insight.VerdictNotInTable, "no such file"},
		{"_delta_log/00000000000000000000.json", insight.VerdictKept, "Delta log"},
		{loc + "/_delta_log/00000000000000000000.json", insight.VerdictKept, "Delta log"},
		{"_delta_log%2F00000000000000000000.json", insight.VerdictKept, "Delta log"},
	}
	var paths []string
	for _, c := range cases {
		paths = append(paths, c.path)
	}
	x, err := insight.Explain(context.Background(), store, paths, insight.ExplainOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		e := x.Paths[i]
		if e.Verdict != c.verdict || !strings.Contains(e.Text, c.text) {
			t.Errorf("%q: got %s (%s), want %s mentioning %q", c.path, e.Verdict, e.Text, c.verdict, c.text)
		}
	}
	for _, bad := range [][]string{nil, make([]string, insight.MaxExplainPaths+1)} {
		if _, err := insight.Explain(context.Background(), store, bad, insight.ExplainOptions{}); err == nil || !strings.Contains(err.Error(), loc) {
			t.Errorf("%d paths: got %v, want an error naming the table", len(bad), err)
		}
	}
}

func TestInspectHostileOptions(t *testing.T) {
	_, store, now := fixtureTable(t, "delta/basic-with-inserts-deletes-checkpoint")
	inf, neg := 1e300, -1.0
	f := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	cases := map[string]insight.Options{
		"NaN retention":      {RetainHours: f(nanOf())},
		"negative retention": {RetainHours: &neg},
		"huge retention":     {RetainHours: &inf},
		"NaN what-if":        {WhatIfHours: []float64{24, nanOf()}},
		"negative what-if":   {WhatIfHours: []float64{-24}},
		"empty what-if":      {WhatIfHours: []float64{}},
		"too many what-ifs":  {WhatIfHours: make([]float64, insight.MaxWhatIf+1)},
		"NaN price":          {PricePerGBMonth: f(nanOf())},
		"negative price":     {PricePerGBMonth: f(-0.01)},
		"infinite price":     {PricePerGBMonth: f(inf * 10)},
		"currency, no price": {Currency: "EUR"},
		"long currency":      {PricePerGBMonth: f(1), Currency: strings.Repeat("X", 17)},
		"negative days":      {ForecastDays: n(-1)},
		"huge days":          {ForecastDays: n(insight.MaxForecastDays + 1)},
		"negative top":       {TopPartitions: n(-1)},
		"negative small":     {SmallFileBytes: -1},
	}
	for name, o := range cases {
		o.Now = now
		if _, err := insight.Inspect(context.Background(), store, o); err == nil || !strings.Contains(err.Error(), store.Location()) {
			t.Errorf("%s: got %v, want an error naming the table", name, err)
		}
	}
	// A huge top is not an error: it lists every partition.
	r, err := insight.Inspect(context.Background(), store, insight.Options{Now: now, TopPartitions: n(1 << 30)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Partitions) != r.NumPartitions {
		t.Errorf("top 2^30 lists %d of %d partitions", len(r.Partitions), r.NumPartitions)
	}
}

func nanOf() float64 {
	var z float64
	return z / z
}

// TestInspectLite checks the log-only report on every fixture: it counts the live files of
// the snapshot, and what it calls reclaimable is the plan of VACUUM LITE, file for file; a
// table LITE refuses has nothing reclaimable and says so.
func TestInspectLite(t *testing.T) {
	eachFixture(t, func(t *testing.T, name string) {
		_, store, now := fixtureTable(t, name)
		full, err := insight.Inspect(context.Background(), store, insight.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		lite, err := insight.Inspect(context.Background(), store, insight.Options{Now: now, Lite: true})
		if err != nil {
			t.Fatal(err)
		}
		if lite.Source != "log" {
			t.Errorf("source %q, want log", lite.Source)
		}
		if lite.Files.Live.Files < full.Files.Live.Files {
			t.Errorf("lite counts %d live files, the listing finds %d", lite.Files.Live.Files, full.Files.Live.Files)
		}
		if !slices.ContainsFunc(lite.Notes, func(n string) bool { return strings.Contains(n, "log alone") }) {
			t.Errorf("lite report does not say it is an estimate: %v", lite.Notes)
		}
		p, err := vacuum.NewPlanner(context.Background(), store, vacuum.Options{Now: now, Mode: vacuum.ModeLite, DisableRetentionCheck: true})
		if err != nil {
			t.Fatal(err)
		}
		litePlan, err := p.Plan(context.Background())
		refusesLite := slices.ContainsFunc(lite.Notes, func(n string) bool { return strings.Contains(n, "VACUUM LITE would refuse") })
		if errors.Is(err, vacuum.ErrCannotVacuumLite) {
			if !refusesLite || lite.Reclaimable.Count != (insight.Count{}) {
				t.Errorf("LITE refuses the table; the report has %+v reclaimable, notes %q", lite.Reclaimable.Count, lite.Notes)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if got, want := lite.Reclaimable.Count, totals(litePlan); got != want || refusesLite {
			t.Errorf("reclaimable %+v, VACUUM LITE deletes %+v (notes %q)", got, want, lite.Notes)
		}
		byReason := map[vacuum.Reason]int64{}
		for _, f := range litePlan.Files.MustCollect() {
			byReason[f.Reason]++
		}
		for reason, c := range lite.Reclaimable.ByReason {
			if c.Files != byReason[reason] {
				t.Errorf("reclaimable as %s: %d files, VACUUM LITE deletes %d", reason, c.Files, byReason[reason])
			}
		}
	})
}

package vacuum

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// lazyStore is a store whose lazy walk reports files without their size and time: every
// file when all is set (whatever need says: the planner must not trust it), else those need
// is false for. It counts the entries it so reported.
type lazyStore struct {
	*mem.Store
	all     bool
	noStat  int
	askedOf map[string]bool
}

func (s *lazyStore) WalkLazy(ctx context.Context, prefix string, need func(string) bool, fn func(storage.Object) error) error {
	return s.Walk(ctx, prefix, func(o storage.Object) error {
		if !o.IsDir && !o.IsLink {
			n := need(o.Key)
			s.askedOf[o.Key] = n
			if s.all || !n {
				o.Size, o.ModTime, o.NoStat = 0, time.Time{}, true
				s.noStat++
			}
		}
		return fn(o)
	})
}

// A table with a file for every kind of decision: live, retained and expired tombstones,
// untracked files young and old, a DV file, a checksum companion, hidden entries, a folder
// that becomes empty and one that stays.
func lazyRulesTable(t *testing.T) *table {
	tb := newTable(t, tableSpec{partitionColumns: []string{"p"}})
	tb.commit(add("p=1/live.parquet"), add("p=1/retained.parquet"), add("p=2/expired.parquet"), addDV("p=1/dv.parquet", dvU("", z85)))
	tb.commit(remove("p=1/retained.parquet", 1*day), remove("p=2/expired.parquet", 10*day))
	tb.file("p=1/live.parquet", 400*day)
	tb.file("p=1/retained.parquet", 40*day)
	tb.file("p=2/expired.parquet", 40*day)
	tb.file("p=1/dv.parquet", 40*day)
	tb.file(dvFile, 40*day)
	tb.file(dvFileB, 40*day) // unreferenced DV file
	tb.file("p=1/old-untracked.parquet", 30*day)
	tb.file("p=1/.old-untracked.parquet.crc", 30*day)
	tb.file("p=1/young-untracked.parquet", 1*day)
	tb.file("p=3/only-untracked.parquet", 20*day)
	tb.file("_hidden/x.parquet", 20*day)
	tb.file(".hidden.parquet", 20*day)
	return tb
}

// A plan made from a lazy listing is the plan made from a full one, to every size and time,
// even when the listing leaves out the size and time of every file: those the log does not
// protect are described before any rule looks at them, so a young untracked file is kept
// (its time comes from a real stat) and a candidate is planned with its real size and time.
func TestLazyListingPlansAsAFullOne(t *testing.T) {
	for _, all := range []bool{false, true} {
		tb := lazyRulesTable(t)
		opts := Options{Now: now}
		want := tb.plan(opts)
		lazy := &lazyStore{Store: tb.store, all: all, askedOf: map[string]bool{}}
		p, err := NewPlanner(context.Background(), lazy, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Plan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if lazy.noStat == 0 {
			t.Fatalf("all=%v: the planner did not walk the store lazily", all)
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(Plan{}, File{}, Dir{}), cmp.Transformer("files", func(l FileList) []File { return l.MustCollect() })); diff != "" {
			t.Fatalf("all=%v: lazy plan differs (-full +lazy):\n%s", all, diff)
		}
		young := false
		for _, f := range got.Files.MustCollect() {
			if f.Path == "p=1/young-untracked.parquet" {
				young = true
			}
			if f.Size == 0 || f.ModificationTime.IsZero() {
				t.Errorf("all=%v: %s planned without its size or time: %+v", all, f.Path, f)
			}
		}
		if young {
			t.Errorf("all=%v: an untracked file younger than the cutoff is planned", all)
		}
		if got.Files.Len() == 0 {
			t.Fatalf("all=%v: nothing planned; the table has old untracked files", all)
		}
		// The planner may skip the description only of what the log protects.
		for key, need := range lazy.askedOf {
			protected := strings.Contains(key, "live") || strings.Contains(key, "retained") || key == "p=1/dv.parquet" || key == dvFile
			if need == protected {
				t.Errorf("need(%s) = %v; protected by the log: %v", key, need, protected)
			}
		}
	}
}

// An observer is told every entry's size and time: the planner then walks in full.
func TestLazyListingNotWithAnObserver(t *testing.T) {
	tb := lazyRulesTable(t)
	lazy := &lazyStore{Store: tb.store, all: true, askedOf: map[string]bool{}}
	var live []Verdict
	p, err := NewPlanner(context.Background(), lazy, Options{Now: now, Observe: func(v Verdict) {
		if v.Rule == RuleLive {
			live = append(live, v)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Plan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if lazy.noStat != 0 || len(live) == 0 {
		t.Fatalf("with an observer, %d entries listed lazily (want 0), %d live verdicts", lazy.noStat, len(live))
	}
	for _, v := range live {
		if v.Object.Size == 0 || v.Object.ModTime.IsZero() || v.Object.NoStat {
			t.Errorf("observer told %s without its size or time", v.Object.Key)
		}
	}
}

// A file that vanishes between the listing and its description is not planned, and the
// folder it was in is not taken for empty.
func TestLazyListingFileGoneBeforeDescribed(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("live.parquet"))
	tb.file("live.parquet", 30*day)
	tb.file("d/gone.parquet", 30*day)
	lazy := &goneStore{lazyStore{Store: tb.store, all: true, askedOf: map[string]bool{}}, "d/gone.parquet"}
	p, err := NewPlanner(context.Background(), lazy, Options{Now: now, RetainHours: hours(0), DisableRetentionCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if plan.Files.Len() != 0 || len(plan.Dirs) != 0 {
		t.Fatalf("planned %v and %v; the file is gone and its folder was not listed empty", plan.Files, plan.Dirs)
	}
}

// goneStore deletes one file right after its listing reports it.
type goneStore struct {
	lazyStore
	key string
}

func (s *goneStore) WalkLazy(ctx context.Context, prefix string, need func(string) bool, fn func(storage.Object) error) error {
	return s.lazyStore.WalkLazy(ctx, prefix, need, func(o storage.Object) error {
		if o.Key == s.key {
			if _, err := s.Delete(ctx, []string{s.key}); err != nil {
				return err
			}
		}
		return fn(o)
	})
}

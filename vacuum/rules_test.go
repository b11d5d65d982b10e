package vacuum

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage"
)

const (
	z85     = "^-aqEH.-t@S}K{vb[*k^"
	dvFile  = "deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
	z85b    = "0000000000000000000A" // another valid UUID
	dvFileB = "deletion_vector_00000000-0000-0000-0000-000000000024.bin"
)

// TestRules has one case per rule of the contract (sections 4-8) that decides what is
// deleted. Each case fails if its rule is broken.
func TestRules(t *testing.T) {
	tests := []struct {
		name      string
		spec      tableSpec
		setup     func(tb *table)
		opts      Options
		want      map[string]Reason
		wantDirs  []string
		wantCheck map[string]string // file -> checksum companion
	}{
		{
			name:  "live add is kept however old",
			setup: func(tb *table) { tb.commit(add("a.parquet")); tb.file("a.parquet", 400*day) },
			opts:  retain0,
			want:  map[string]Reason{},
		},
		{
			name: "expired tombstone is deleted",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.commit(remove("a.parquet", 10*day))
				tb.file("a.parquet", 20*day)
			},
			want: map[string]Reason{"a.parquet": ReasonTombstone},
		},
		{
			name: "tombstone inside the retention is kept even when the file is old",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.commit(remove("a.parquet", 6*day))
				tb.file("a.parquet", 20*day)
			},
			want: map[string]Reason{},
		},
		{
			name: "tombstone exactly at the cutoff is kept (deletionTimestamp >= cutoff)",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.commit(remove("a.parquet", 7*day))
				tb.file("a.parquet", 20*day)
			},
			want: map[string]Reason{},
		},
		{
			name: "tombstone without deletionTimestamp counts as 0: expired",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.commit(removeNoTimestamp("a.parquet"))
				tb.file("a.parquet", 20*day)
			},
			want: map[string]Reason{"a.parquet": ReasonTombstone},
		},
		{
			name: "a file re-added after its remove is live",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.commit(remove("a.parquet", 20*day))
				tb.commit(add("a.parquet"))
				tb.file("a.parquet", 20*day)
			},
			opts: retain0,
			want: map[string]Reason{},
		},
		{
			name: "untracked file older than the cutoff is deleted, newer or equal is kept",
			setup: func(tb *table) {
				tb.file("old.parquet", 8*day)
				tb.file("edge.parquet", 7*day)
				tb.file("new.parquet", 6*day)
			},
			want: map[string]Reason{"old.parquet": ReasonUntracked},
		},
		{
			name: "hidden names at every depth are never candidates",
			spec: tableSpec{partitionColumns: []string{"p"}},
			setup: func(tb *table) {
				tb.file("_tmp/a.parquet", 30*day)
				tb.file(".hidden.parquet", 30*day)
				tb.file("_hidden.parquet", 30*day)
				tb.file("p=1/_temporary/0/a.parquet", 30*day)
				tb.file("p=1/.spark-staging/a.parquet", 30*day)
				tb.file("p=1/x/_SUCCESS", 30*day)
				tb.file("p=1/visible.parquet", 30*day)
			},
			opts: retain0,
			want: map[string]Reason{"p=1/visible.parquet": ReasonUntracked},
		},
		{
			name: "partition columns starting with _ are not hidden, others starting with _ are",
			spec: tableSpec{partitionColumns: []string{"_2"}},
			setup: func(tb *table) {
				tb.file("_2=bar/a.parquet", 30*day)
				tb.file("_3=bar/a.parquet", 30*day)
				tb.file("_2/a.parquet", 30*day)
			},
			opts:     retain0,
			want:     map[string]Reason{"_2=bar/a.parquet": ReasonUntracked},
			wantDirs: []string{"_2=bar"},
		},
		{
			name: "_change_data and _delta_index are not hidden; their hidden files are",
			setup: func(tb *table) {
				tb.file("_change_data/cdc-1.parquet", 30*day)
				tb.file("_change_data/.gitkeep", 30*day)
				tb.file("_delta_index/idx.bin", 30*day)
				tb.file("_change_data_x/y.parquet", 30*day)
			},
			opts: retain0,
			want: map[string]Reason{
				"_change_data/cdc-1.parquet": ReasonChangeData,
				"_delta_index/idx.bin":       ReasonUntracked,
				"_change_data_x/y.parquet":   ReasonUntracked,
			},
			wantDirs: []string{"_change_data_x", "_delta_index"},
		},
		{
			name: "cdc files named by the log are still deleted when old",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"), cdc("_change_data/cdc-1.parquet"))
				tb.file("a.parquet", 30*day)
				tb.file("_change_data/cdc-1.parquet", 30*day)
			},
			want:     map[string]Reason{"_change_data/cdc-1.parquet": ReasonChangeData},
			wantDirs: []string{"_change_data"},
		},
		{
			name: "UniForm Iceberg metadata folder is hidden",
			spec: tableSpec{configuration: map[string]string{"delta.universalFormat.enabledFormats": "iceberg"}},
			setup: func(tb *table) {
				tb.file("metadata/v1.metadata.json", 30*day)
				tb.file("data/metadata/x.parquet", 30*day)
			},
			opts: retain0,
			want: map[string]Reason{},
		},
		{
			name: "metadata folder is visible without UniForm Iceberg",
			setup: func(tb *table) {
				tb.file("metadata/v1.metadata.json", 30*day)
			},
			opts:     retain0,
			want:     map[string]Reason{"metadata/v1.metadata.json": ReasonUntracked},
			wantDirs: []string{"metadata"},
		},
		{
			name: "_delta_log is never touched",
			setup: func(tb *table) {
				tb.file("_delta_log/garbage.parquet", 300*day)
				tb.file("_delta_log/_sidecars/old.parquet", 300*day)
				tb.file("_delta_log/00000000000000000000.checkpoint.parquet.tmp", 300*day)
			},
			opts: retain0,
			want: map[string]Reason{},
		},
		{
			name: "deletion vector of a live add is kept: u without prefix",
			setup: func(tb *table) {
				tb.commit(addDV("a.parquet", dvU("", z85)))
				tb.file("a.parquet", 30*day)
				tb.file(dvFile, 30*day)
			},
			opts: retain0,
			want: map[string]Reason{},
		},
		{
			name: "deletion vector of a live add is kept: u with prefix",
			setup: func(tb *table) {
				tb.commit(addDV("a.parquet", dvU("ab", z85)))
				tb.file("a.parquet", 30*day)
				tb.file("ab/"+dvFile, 30*day)
				tb.file(dvFile, 30*day) // same name outside the prefix: an orphan
			},
			opts: retain0,
			want: map[string]Reason{dvFile: ReasonDeletionVector},
		},
		{
			name: "deletion vector p inside the root is kept [safer]",
			setup: func(tb *table) {
				tb.commit(addDV("a.parquet", map[string]any{"storageType": "p", "pathOrInlineDv": "mem://bucket/table/dvs/my%20dv.bin", "offset": 1, "sizeInBytes": 36, "cardinality": 2}))
				tb.file("a.parquet", 30*day)
				tb.file("dvs/my dv.bin", 30*day)
			},
			opts: retain0,
			want: map[string]Reason{},
		},
		{
			name: "deletion vector i has no file",
			setup: func(tb *table) {
				tb.commit(addDV("a.parquet", map[string]any{"storageType": "i", "pathOrInlineDv": "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", "sizeInBytes": 40, "cardinality": 6}))
				tb.file("a.parquet", 30*day)
				tb.file(dvFile, 30*day)
			},
			opts: retain0,
			want: map[string]Reason{dvFile: ReasonDeletionVector},
		},
		{
			name: "deletion vector replaced on a live file: the old one is a tombstone, the new one kept",
			setup: func(tb *table) {
				tb.commit(addDV("a.parquet", dvU("", z85b)))
				tb.commit(removeDV("a.parquet", 20*day, dvU("", z85b)), addDV("a.parquet", dvU("", z85)))
				tb.file("a.parquet", 30*day)
				tb.file(dvFile, 30*day)
				tb.file(dvFileB, 30*day)
			},
			want: map[string]Reason{dvFileB: ReasonTombstone},
		},
		{
			name: "deletion vector of an unexpired tombstone is kept",
			setup: func(tb *table) {
				tb.commit(addDV("a.parquet", dvU("", z85)))
				tb.commit(removeDV("a.parquet", 1*day, dvU("", z85)))
				tb.file("a.parquet", 30*day)
				tb.file(dvFile, 30*day)
			},
			want: map[string]Reason{},
		},
		{
			name: "percent-encoded log paths name raw keys; two spellings are one file",
			spec: tableSpec{partitionColumns: []string{"t"}},
			setup: func(tb *table) {
				tb.commit(add("t=11%253A11/a.parquet"), add("t=12%3A00/b.parquet"), add("t=12%3a00/c.parquet"), add("sp%20ace/d%3Dx.parquet"))
				tb.file("t=11%3A11/a.parquet", 30*day)
				tb.file("t=12:00/b.parquet", 30*day)
				tb.file("t=12:00/c.parquet", 30*day)
				tb.file("sp ace/d=x.parquet", 30*day)
				// The name as written, undecoded: what a writer that did not escape '%' meant.
				// It is one reading of the path, so it is kept too.
				tb.file("t=12%3A00/b.parquet", 30*day)
				tb.file("t=12%253A00/b.parquet", 30*day) // no reading of any path: untracked
			},
			opts:     retain0,
			want:     map[string]Reason{"t=12%253A00/b.parquet": ReasonUntracked},
			wantDirs: []string{"t=12%253A00"},
		},
		{
			name: "a path that can be read several ways protects every reading",
			setup: func(tb *table) {
				tb.commit(add("a#1.parquet"), add("b?x=1"), add("c+d.parquet"), add("caf%C3%A9.parquet"))
				for _, k := range []string{
					"a#1.parquet", "a", // '#' in the name, or the start of a fragment
					"b?x=1", "b", // '?' in the name, or the start of a query
					"c+d.parquet", "c d.parquet", // '+' as itself, or a form-encoded space
					"caf\u00e9.parquet", "cafe\u0301.parquet", // NFC and NFD: one file on macOS
					"f.parquet", // named by nothing
				} {
					tb.file(k, 30*day)
				}
			},
			opts: retain0,
			want: map[string]Reason{"f.parquet": ReasonUntracked},
		},
		{
			name: "a live file spelled in another case or normalization by the listing is kept",
			setup: func(tb *table) {
				tb.commit(add("Part-0.parquet"), add("date=2024/X.parquet"), add("STRASSE.parquet"), add("caf%C3%A9/y.parquet"))
				for _, k := range []string{
					"part-0.parquet",       // a case-insensitive file system opens it for Part-0.parquet
					"DATE=2024/x.parquet",  // the same, in a folder
					"straße.parquet",       // full Unicode case folding: ß folds to ss
					"CAFE\u0301/Y.parquet", // case and NFD at once
					"part-1.parquet",       // named by nothing
				} {
					tb.file(k, 30*day)
				}
			},
			opts: retain0,
			want: map[string]Reason{"part-1.parquet": ReasonUntracked},
		},
		{
			name: "every reading of an expired tombstone is only a tombstone, never protected",
			setup: func(tb *table) {
				tb.commit(add("x#1.parquet"))
				tb.commit(remove("x#1.parquet", 30*day))
				tb.file("x#1.parquet", 30*day)
				tb.file("x", 30*day)
			},
			opts: retain0,
			want: map[string]Reason{"x#1.parquet": ReasonTombstone, "x": ReasonTombstone},
		},
		{
			name: "absolute log paths inside the root protect, outside are ignored",
			setup: func(tb *table) {
				tb.commit(add("mem://bucket/table/abs.parquet"), add("mem://bucket/other/x.parquet"))
				tb.file("abs.parquet", 30*day)
				tb.file("x.parquet", 30*day)
			},
			opts: retain0,
			want: map[string]Reason{"x.parquet": ReasonUntracked},
		},
		{
			name: "checksum companion goes with its file, and only with it",
			setup: func(tb *table) {
				tb.commit(add("live.parquet"))
				tb.file("live.parquet", 30*day)
				tb.file(".live.parquet.crc", 30*day)
				tb.file("old.parquet", 30*day)
				tb.file(".old.parquet.crc", 30*day)
				tb.file("+early.parquet", 30*day) // sorts before its companion
				tb.file(".+early.parquet.crc", 30*day)
			},
			opts:      retain0,
			want:      map[string]Reason{"old.parquet": ReasonUntracked, "+early.parquet": ReasonUntracked},
			wantCheck: map[string]string{"old.parquet": ".old.parquet.crc", "+early.parquet": ".+early.parquet.crc"},
		},
		{
			name: "empty directories: old ones go, fresh ones stay, emptied ones go bottom-up",
			setup: func(tb *table) {
				tb.dir("old-empty", 30*day)
				tb.dir("fresh-empty", 1*time.Hour)
				tb.dir("a", 1*time.Hour)
				tb.dir("a/b", 1*time.Hour)
				tb.file("a/b/c.parquet", 30*day)
				tb.dir("keep", 30*day)
				tb.file("keep/.gitkeep", 30*day)
			},
			opts:     Options{RetainHours: hours(24), DisableRetentionCheck: true},
			want:     map[string]Reason{"a/b/c.parquet": ReasonUntracked},
			wantDirs: []string{"a", "a/b", "old-empty"},
		},
		{
			name: "a directory above a live or unexpired file is kept even when the file is missing",
			setup: func(tb *table) {
				tb.commit(add("p=1/q=2/missing.parquet"))
				tb.dir("p=1", 30*day)
				tb.dir("p=1/q=2", 30*day)
			},
			opts:     retain0,
			want:     map[string]Reason{},
			wantDirs: []string{},
		},
		{
			name: "table property sets the retention",
			spec: tableSpec{configuration: map[string]string{"delta.deletedFileRetentionDuration": "interval 3 days"}},
			setup: func(tb *table) {
				tb.file("four-days.parquet", 4*day)
				tb.file("two-days.parquet", 2*day)
			},
			want: map[string]Reason{"four-days.parquet": ReasonUntracked},
		},
		{
			name: "RETAIN is rounded half up to whole hours",
			setup: func(tb *table) {
				tb.file("90min.parquet", 90*time.Minute)
				tb.file("30min.parquet", 30*time.Minute)
			},
			opts: Options{RetainHours: hours(0.5), DisableRetentionCheck: true}, // 1 hour
			want: map[string]Reason{"90min.parquet": ReasonUntracked},
		},
		{
			name: "RETAIN below one half hour rounds to 0",
			setup: func(tb *table) {
				tb.file("1min.parquet", time.Minute)
			},
			opts: Options{RetainHours: hours(0.49), DisableRetentionCheck: true},
			want: map[string]Reason{"1min.parquet": ReasonUntracked},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTable(t, tt.spec)
			tt.setup(tb)
			plan := tb.plan(tt.opts)
			if diff := cmp.Diff(tt.want, deleted(plan)); diff != "" {
				t.Errorf("deleted files (-want +got):\n%s", diff)
			}
			if tt.wantDirs == nil {
				tt.wantDirs = []string{}
			}
			if diff := cmp.Diff(tt.wantDirs, dirs(plan)); diff != "" {
				t.Errorf("deleted directories (-want +got):\n%s", diff)
			}
			got := map[string]string{}
			for _, f := range plan.Files.MustCollect() {
				if f.Checksum != "" {
					got[f.Path] = f.Checksum
				}
			}
			if tt.wantCheck == nil {
				tt.wantCheck = map[string]string{}
			}
			if diff := cmp.Diff(tt.wantCheck, got); diff != "" {
				t.Errorf("checksum companions (-want +got):\n%s", diff)
			}
		})
	}
}

// linking reports chosen keys of a store as symbolic links, as the local backend does.
type linking struct {
	storage.Store
	links map[string]bool
}

func (l *linking) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	return l.Store.Walk(ctx, prefix, func(o storage.Object) error {
		if l.links[o.Key] {
			o.IsLink = true
		}
		return fn(o)
	})
}

// TestLinkWithProtectedPathsBelowIsKept: a symbolic link that a protected path passes
// through (a partition folder that is a link) is never deleted as an untracked file; a link
// nothing passes through is deleted like any file (the link, never its target).
func TestLinkWithProtectedPathsBelowIsKept(t *testing.T) {
	tb := newTable(t, tableSpec{partitionColumns: []string{"p"}})
	tb.commit(add("p=1/live.parquet"), add("q/r/live.parquet"))
	tb.file("p=1", 30*day)      // the link itself, as a listing reports it
	tb.file("q", 30*day)        // a link to a directory holding q/r/live.parquet
	tb.file("dangling", 30*day) // a link nothing passes through
	tb.file("p=1x", 30*day)     // not an ancestor of p=1/live.parquet
	store := &linking{Store: tb.store, links: map[string]bool{"p=1": true, "q": true, "dangling": true, "p=1x": true}}
	p, err := NewPlanner(context.Background(), store, Options{RetainHours: hours(0), DisableRetentionCheck: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Reason{"dangling": ReasonUntracked, "p=1x": ReasonUntracked}
	if diff := cmp.Diff(want, deleted(plan)); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
}

// TestNestedTableIsNeverEntered: a folder inside the table with a _delta_log of its own is
// another Delta table: nothing in it is deleted, whatever sorts before _delta_log, and it is
// reported [safer].
func TestNestedTableIsNeverEntered(t *testing.T) {
	tb := newTable(t, tableSpec{})
	for _, k := range []string{"sub/A.parquet", "sub/0.parquet", "sub/B=1/x.parquet", "sub/part-0.parquet", "sub/z/y.parquet",
		"sub/.A.parquet.crc", "sub/_delta_log/00000000000000000000.json", "junk.parquet", "subway/x.parquet"} {
		tb.file(k, 30*day)
	}
	tb.dir("sub/C=1", 30*day) // an empty folder of the nested table, sorting before _delta_log
	plan := tb.plan(retain0)
	want := map[string]Reason{"junk.parquet": ReasonUntracked, "subway/x.parquet": ReasonUntracked}
	if diff := cmp.Diff(want, deleted(plan)); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	if d := dirs(plan); len(d) != 1 || d[0] != "subway" || len(plan.NestedTables) != 1 || plan.NestedTables[0] != "sub" {
		t.Errorf("dirs %v, nested %v; want [subway] and [sub]", d, plan.NestedTables)
	}
	if plan.NumFilesToDelete != 2 {
		t.Errorf("NumFilesToDelete = %d, want 2", plan.NumFilesToDelete)
	}
}

// TestLinkIntoTheTableIsRefused: when the log names live files through a symbolic link that
// points inside the table, those files are listed again under their real names, named by no
// action: the run is refused before anything is deleted.
func TestLinkIntoTheTableIsRefused(t *testing.T) {
	tb := newTable(t, tableSpec{partitionColumns: []string{"p"}})
	tb.commit(add("p=1/live.parquet"))
	tb.file("p=1", 30*day)
	tb.file("real/p=1/live.parquet", 30*day)
	store := &intoLinks{linking{Store: tb.store, links: map[string]bool{"p=1": true}}}
	p, err := NewPlanner(context.Background(), store, Options{RetainHours: hours(0), DisableRetentionCheck: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Plan(context.Background())
	var le *LinkIntoTableError
	if !errors.As(err, &le) || le.Link != "p=1" {
		t.Fatalf("got %v, want a LinkIntoTableError for p=1", err)
	}
}

// intoLinks reports its links as pointing inside the store.
type intoLinks struct{ linking }

func (l *intoLinks) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	return l.linking.Walk(ctx, prefix, func(o storage.Object) error {
		o.LinkIntoStore = o.IsLink
		return fn(o)
	})
}

// TestLinkIntoTheTableIsRefusedYoungOrHidden: the refusal of a link through which the log
// names live files does not depend on the link's own age (a link made yesterday, under a
// week's retention) nor on its name being hidden (_alias is never descended into, but the
// files it points to are listed under their real names, which no action names).
func TestLinkIntoTheTableIsRefusedYoungOrHidden(t *testing.T) {
	for _, c := range []struct {
		name, link string
		age        time.Duration
	}{
		{"young", "p=1", day},
		{"hidden", "_alias", 30 * day},
		{"hidden and young", ".alias", day},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := newTable(t, tableSpec{partitionColumns: []string{"p"}})
			tb.commit(add(c.link + "/live.parquet"))
			tb.file(c.link, c.age)
			tb.file("p=2/live.parquet", 30*day) // where the link points: named by no action
			store := &intoLinks{linking{Store: tb.store, links: map[string]bool{c.link: true}}}
			p, err := NewPlanner(context.Background(), store, Options{RetainHours: hours(24), DisableRetentionCheck: true, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := p.Plan(context.Background())
			var le *LinkIntoTableError
			if !errors.As(err, &le) || le.Link != c.link {
				t.Fatalf("got %v (plan %v), want a LinkIntoTableError for %s", err, plan, c.link)
			}
		})
	}
}

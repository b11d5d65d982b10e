package vacuum

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/inventory"
	"github.com/deltavacuum/deltavacuum/storage"
)

const (
	z85     = "^-aqEH.-t@S}K{vb[*k^"
	dvFile  = "deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
	z85b    = "0000000000000000000A" // another valid UUID
	dvFileB = "deletion_vector_00000000-0000-0000-0000-000000000024.bin"
)

// rule is one case of TestRules: a table, the options of a plan, and what the plan deletes
// (or the refusal, or what the re-check keeps); or, for a rule that decides no plan, a check.
type rule struct {
	name  string // the rule, "concern: what it says", as doc.go names it
	spec  tableSpec
	setup func(tb *table)
	opts  Options
	// store is the store the planner reads (nil: the table's); inventory and inventoryCSV (a
	// CSV inventory of the table) replace its listing.
	store        func(tb *table) storage.Store
	inventory    Walker
	inventoryCSV string
	// What the plan deletes: files with their reasons, directories, checksum companions
	// (file -> companion), and the nested tables it reports.
	want       map[string]Reason
	wantDirs   []string
	wantCheck  map[string]string
	wantNested []string
	// err, when set, says whether the error of planning is the refusal the rule makes.
	err func(error) bool
	// after, when set, is a commit made after planning: the plan is executed, and wantDropped
	// is what the re-check keeps.
	after       []any
	wantDropped []Dropped
	// check, when set, proves a rule that decides no plan (the trash, the coverage).
	check func(t *testing.T)
	// wantKept, when set, are the files readers keep (Plan.KeptForReaders), each with the
	// kind and version of the first reader that keeps it ("pin@3").
	wantKept map[string]string
}

// ruleCases has one case per rule that decides what VACUUM deletes (VACUUM-SPEC.md sections
// 4-10 and 13, and the rules of this project beyond it); vacuum/doc.go lists each rule with the
// function that applies it and the names of its cases. Each case fails if its rule is broken.
func ruleCases() []rule {
	return []rule{
		{
			name: "retention: the table's delta.deletedFileRetentionDuration is the default",
			spec: tableSpec{configuration: map[string]string{"delta.deletedFileRetentionDuration": "interval 3 days"}},
			setup: func(tb *table) {
				tb.file("four-days.parquet", 4*day)
				tb.file("two-days.parquet", 2*day)
			},
			want: map[string]Reason{"four-days.parquet": ReasonUntracked},
		},
		{
			name: "retention: RETAIN n HOURS is rounded half up to whole hours",
			setup: func(tb *table) {
				tb.file("90min.parquet", 90*time.Minute)
				tb.file("30min.parquet", 30*time.Minute)
			},
			opts: Options{RetainHours: hours(0.5), DisableRetentionCheck: true}, // 1 hour
			want: map[string]Reason{"90min.parquet": ReasonUntracked},
		},
		{
			name: "retention: RETAIN below half an hour rounds to 0",
			setup: func(tb *table) {
				tb.file("1min.parquet", time.Minute)
			},
			opts: Options{RetainHours: hours(0.49), DisableRetentionCheck: true},
			want: map[string]Reason{"1min.parquet": ReasonUntracked},
		},
		{
			name: "retention: RETAIN below 0 hours is refused",
			opts: Options{RetainHours: hours(-1), DisableRetentionCheck: true},
			err:  errIs(ErrNegativeRetention),
		},
		{
			name: "retention: RETAIN NaN HOURS is refused",
			opts: Options{RetainHours: hours(math.NaN()), DisableRetentionCheck: true},
			err:  errIs(ErrRetentionNotANumber),
		},
		{
			name: "retention: RETAIN beyond a hundred years is refused",
			opts: Options{RetainHours: hours(MaxRetentionHours + 1), DisableRetentionCheck: true},
			err:  errIs(ErrRetentionTooLarge),
		},
		{
			name: "retention: a retention below the table's is refused while the safety check is on",
			opts: Options{RetainHours: hours(167.4)}, // 167 hours: one short of the week
			err:  errAs[*RetentionError],
		},
		{
			name: "retention: the safety check passes a retention of the table's, rounded",
			setup: func(tb *table) {
				tb.file("8-days.parquet", 8*day)
			},
			opts: Options{RetainHours: hours(167.5)},
			want: map[string]Reason{"8-days.parquet": ReasonUntracked},
		},
		{
			name: "retention: a policy's retention is never shorter than the table's own",
			check: func(t *testing.T) {
				tb := newTable(t, tableSpec{configuration: map[string]string{"delta.deletedFileRetentionDuration": "interval 10 days"}})
				p, err := tb.planner(Options{})
				if err != nil {
					t.Fatal(err)
				}
				for policy, want := range map[float64]float64{24: 240, 240: 240, 300: 300} {
					if got, err := PolicyRetainHours(p.Snapshot(), &policy); err != nil || *got != want {
						t.Errorf("policy %gh: %v, %v; want %gh", policy, *got, err, want)
					}
				}
			},
		},
		{
			name: "retention: a one-off retention below the table's own is refused, not raised",
			check: func(t *testing.T) {
				tb := newTable(t, tableSpec{configuration: map[string]string{"delta.deletedFileRetentionDuration": "interval 10 days"}})
				p, err := tb.planner(Options{})
				if err != nil {
					t.Fatal(err)
				}
				snap := p.Snapshot()
				for _, tc := range []struct {
					hours float64
					err   error
				}{{239, ErrBelowFloor}, {240, nil}, {300, nil}, {-1, ErrNegativeRetention}, {MaxRetentionHours + 1, ErrRetentionTooLarge}} {
					got, err := OneOffRetainHours(snap, tc.hours, true)
					if !errors.Is(err, tc.err) || (err == nil && *got != tc.hours) {
						t.Errorf("%gh: %v, %v; want %v", tc.hours, got, err, tc.err)
					}
				}
				plain := newTable(t, tableSpec{})
				p, err = plain.planner(Options{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := OneOffRetainHours(p.Snapshot(), 24, false); !errAs[*RetentionError](err) {
					t.Errorf("24h below the default week with the check on: %v, want the safety check's refusal", err)
				}
				if got, err := OneOffRetainHours(p.Snapshot(), 24, true); err != nil || *got != 24 {
					t.Errorf("24h with the check off: %v, %v", got, err)
				}
			},
		},
		{
			name: "hidden: names starting with _ or . at every depth are never candidates",
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
			name: "hidden: the folders of a partition column starting with _ are not hidden",
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
			name: "hidden: _change_data and _delta_index are not hidden, their hidden files are",
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
			name: "hidden: metadata is hidden on UniForm Iceberg tables",
			spec: tableSpec{configuration: map[string]string{"delta.universalFormat.enabledFormats": "iceberg"}},
			setup: func(tb *table) {
				tb.file("metadata/v1.metadata.json", 30*day)
				tb.file("data/metadata/x.parquet", 30*day)
			},
			opts: retain0,
			want: map[string]Reason{},
		},
		{
			name: "hidden: metadata is visible without UniForm Iceberg",
			setup: func(tb *table) {
				tb.file("metadata/v1.metadata.json", 30*day)
			},
			opts:     retain0,
			want:     map[string]Reason{"metadata/v1.metadata.json": ReasonUntracked},
			wantDirs: []string{"metadata"},
		},
		{
			name: "hidden: _delta_log is never touched",
			setup: func(tb *table) {
				tb.file("_delta_log/garbage.parquet", 300*day)
				tb.file("_delta_log/_sidecars/old.parquet", 300*day)
				tb.file("_delta_log/00000000000000000000.checkpoint.parquet.tmp", 300*day)
			},
			opts: retain0,
			want: map[string]Reason{},
		},
		{
			name: "nested table: a folder with a _delta_log of its own is never entered, whatever sorts before it",
			setup: func(tb *table) {
				for _, k := range []string{"sub/A.parquet", "sub/0.parquet", "sub/B=1/x.parquet", "sub/part-0.parquet", "sub/z/y.parquet",
					"sub/.A.parquet.crc", "sub/_delta_log/00000000000000000000.json", "junk.parquet", "subway/x.parquet"} {
					tb.file(k, 30*day)
				}
				tb.dir("sub/C=1", 30*day) // an empty folder of the nested table, sorting before _delta_log
			},
			opts:       retain0,
			want:       map[string]Reason{"junk.parquet": ReasonUntracked, "subway/x.parquet": ReasonUntracked},
			wantDirs:   []string{"subway"},
			wantNested: []string{"sub"},
		},
		{
			name: "nested table: a folder an inventory names that holds a _delta_log is taken back",
			setup: func(tb *table) {
				tb.file("sub/_delta_log/00000000000000000000.json", 30*day)
				tb.file("sub/a.parquet", 30*day)
				tb.file("sub/.a.parquet.crc", 30*day)
				tb.file("junk.parquet", 30*day)
			},
			inventory: sliceWalker{ // a report of the data files only
				{Key: "junk.parquet", Size: 1, ModTime: now.Add(-30 * day)},
				{Key: "sub/", IsDir: true, ModTime: now.Add(-30 * day)},
				{Key: "sub/.a.parquet.crc", Size: 3, ModTime: now.Add(-30 * day)},
				{Key: "sub/a.parquet", Size: 1, ModTime: now.Add(-30 * day)},
			},
			opts:       retain0,
			want:       map[string]Reason{"junk.parquet": ReasonUntracked},
			wantNested: []string{"sub"},
		},
		{
			name:  "protected: a live add is kept however old",
			setup: func(tb *table) { tb.commit(add("a.parquet")); tb.file("a.parquet", 400*day) },
			opts:  retain0,
			want:  map[string]Reason{},
		},
		{
			name: "protected: a file re-added after its remove is live",
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
			name: "tombstone: an expired tombstone's file is deleted",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.commit(remove("a.parquet", 10*day))
				tb.file("a.parquet", 20*day)
			},
			want: map[string]Reason{"a.parquet": ReasonTombstone},
		},
		{
			name: "tombstone: one inside the retention keeps its file, however old",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.commit(remove("a.parquet", 6*day))
				tb.file("a.parquet", 20*day)
			},
			want: map[string]Reason{},
		},
		{
			name: "tombstone: one exactly at the cutoff keeps its file (deletionTimestamp >= cutoff)",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.commit(remove("a.parquet", 7*day))
				tb.file("a.parquet", 20*day)
			},
			want: map[string]Reason{},
		},
		{
			name: "tombstone: one without deletionTimestamp counts as 0, expired",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.commit(removeNoTimestamp("a.parquet"))
				tb.file("a.parquet", 20*day)
			},
			want: map[string]Reason{"a.parquet": ReasonTombstone},
		},
		{
			name: "deletion vector: a live add's is kept (u, no prefix)",
			setup: func(tb *table) {
				tb.commit(addDV("a.parquet", dvU("", z85)))
				tb.file("a.parquet", 30*day)
				tb.file(dvFile, 30*day)
			},
			opts: retain0,
			want: map[string]Reason{},
		},
		{
			name: "deletion vector: a live add's is kept (u with a prefix), its name elsewhere is an orphan",
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
			name: "deletion vector: a live add's p path inside the root is kept [safer]",
			setup: func(tb *table) {
				tb.commit(addDV("a.parquet", map[string]any{"storageType": "p", "pathOrInlineDv": "mem://bucket/table/dvs/my%20dv.bin", "offset": 1, "sizeInBytes": 36, "cardinality": 2}))
				tb.file("a.parquet", 30*day)
				tb.file("dvs/my dv.bin", 30*day)
			},
			opts: retain0,
			want: map[string]Reason{},
		},
		{
			name: "deletion vector: an inline one (i) names no file",
			setup: func(tb *table) {
				tb.commit(addDV("a.parquet", map[string]any{"storageType": "i", "pathOrInlineDv": "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", "sizeInBytes": 40, "cardinality": 6}))
				tb.file("a.parquet", 30*day)
				tb.file(dvFile, 30*day)
			},
			opts: retain0,
			want: map[string]Reason{dvFile: ReasonDeletionVector},
		},
		{
			name: "deletion vector: replaced on a live file, the old one is a tombstone, the new one kept",
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
			name: "deletion vector: an unexpired tombstone's is kept",
			setup: func(tb *table) {
				tb.commit(addDV("a.parquet", dvU("", z85)))
				tb.commit(removeDV("a.parquet", 1*day, dvU("", z85)))
				tb.file("a.parquet", 30*day)
				tb.file(dvFile, 30*day)
			},
			want: map[string]Reason{},
		},
		{
			name: "path: percent-encoded log paths name raw keys, two escapes of one key are one file",
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
			name: "path: a path that can be read several ways protects every reading",
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
			name: "path: every reading of an expired tombstone is a tombstone, never protected",
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
			name: "path: absolute log paths inside the root protect, outside it are ignored",
			setup: func(tb *table) {
				tb.commit(add("mem://bucket/table/abs.parquet"), add("mem://bucket/other/x.parquet"))
				tb.file("abs.parquet", 30*day)
				tb.file("x.parquet", 30*day)
			},
			opts: retain0,
			want: map[string]Reason{"x.parquet": ReasonUntracked},
		},
		{
			name: "spelling: a live file listed in another letter case or normalization is kept",
			setup: func(tb *table) {
				tb.commit(add("Part-0.parquet"), add("date=2024/X.parquet"), add("STRASSE.parquet"), add("caf%C3%A9/y.parquet"), add("lower.parquet"), add("Z.parquet"))
				for _, k := range []string{
					"part-0.parquet",       // a case-insensitive file system opens it for Part-0.parquet
					"LOWER.parquet",        // a live key folded already, listed in capitals
					"z.parquet",            // Z, the last capital, folds too
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
			name: "ancestors: a directory above a live file is kept even when the file is missing",
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
			name: "ancestors: a link a protected path passes through is kept, one nothing passes through deleted",
			spec: tableSpec{partitionColumns: []string{"p"}},
			setup: func(tb *table) {
				tb.commit(add("p=1/live.parquet"), add("q/r/live.parquet"))
				tb.file("p=1", 30*day)      // the link itself, as a listing reports it
				tb.file("q", 30*day)        // a link to a directory holding q/r/live.parquet
				tb.file("dangling", 30*day) // a link nothing passes through
				tb.file("p=1x", 30*day)     // not an ancestor of p=1/live.parquet
			},
			store: func(tb *table) storage.Store {
				return &linking{Store: tb.store, links: map[string]bool{"p=1": true, "q": true, "dangling": true, "p=1x": true}}
			},
			opts: retain0,
			want: map[string]Reason{"dangling": ReasonUntracked, "p=1x": ReasonUntracked},
		},
		{
			name: "links: a link into the table through which the log names live files refuses the run",
			spec: tableSpec{partitionColumns: []string{"p"}},
			setup: func(tb *table) {
				tb.commit(add("p=1/live.parquet"))
				tb.file("p=1", 30*day)
				tb.file("real/p=1/live.parquet", 30*day) // where it points: named by no action
			},
			store: func(tb *table) storage.Store {
				return &intoLinks{linking{Store: tb.store, links: map[string]bool{"p=1": true}}}
			},
			opts: retain0,
			err:  errAs[*LinkIntoTableError],
		},
		{
			name: "links: the refusal holds for a link younger than the cutoff",
			spec: tableSpec{partitionColumns: []string{"p"}},
			setup: func(tb *table) {
				tb.commit(add("p=1/live.parquet"))
				tb.file("p=1", day)
				tb.file("p=2/live.parquet", 30*day)
			},
			store: func(tb *table) storage.Store {
				return &intoLinks{linking{Store: tb.store, links: map[string]bool{"p=1": true}}}
			},
			opts: Options{RetainHours: hours(24), DisableRetentionCheck: true},
			err:  errAs[*LinkIntoTableError],
		},
		{
			name: "links: the refusal holds for a hidden link (never entered, its target listed where it is)",
			setup: func(tb *table) {
				tb.commit(add("_alias/live.parquet"))
				tb.file("_alias", 30*day)
				tb.file("p=2/live.parquet", 30*day)
			},
			store: func(tb *table) storage.Store {
				return &intoLinks{linking{Store: tb.store, links: map[string]bool{"_alias": true}}}
			},
			opts: retain0,
			err:  errAs[*LinkIntoTableError],
		},
		{
			name: "age: a file older than the cutoff is deleted, one newer or at it is kept",
			setup: func(tb *table) {
				tb.file("old.parquet", 8*day)
				tb.file("edge.parquet", 7*day)
				tb.file("new.parquet", 6*day)
			},
			want: map[string]Reason{"old.parquet": ReasonUntracked},
		},
		{
			name: "reason: cdc files named by the log are change data, deleted when old",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"), cdc("_change_data/cdc-1.parquet"))
				tb.file("a.parquet", 30*day)
				tb.file("_change_data/cdc-1.parquet", 30*day)
			},
			want:     map[string]Reason{"_change_data/cdc-1.parquet": ReasonChangeData},
			wantDirs: []string{"_change_data"},
		},
		{
			name: "reason: change data, a tombstone, an orphan deletion vector, untracked",
			setup: func(tb *table) {
				tb.commit(add("t.parquet"))
				tb.commit(remove("t.parquet", 20*day))
				for _, k := range []string{"_change_data/c.parquet", "t.parquet", "p/" + dvFile, "u.parquet", "deletion_vector_x.parquet"} {
					tb.file(k, 30*day)
				}
			},
			want: map[string]Reason{"_change_data/c.parquet": ReasonChangeData, "t.parquet": ReasonTombstone, "p/" + dvFile: ReasonDeletionVector,
				"u.parquet": ReasonUntracked, "deletion_vector_x.parquet": ReasonUntracked},
			wantDirs: []string{"_change_data", "p"},
		},
		{
			name: "checksum: a companion goes with its file, in either listing order, and only with it",
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
			name: "checksum: a companion the log names itself stays when its file goes",
			setup: func(tb *table) {
				tb.commit(add(".old.parquet.crc"))
				tb.file("old.parquet", 30*day)
				tb.file(".old.parquet.crc", 30*day)
			},
			opts: retain0,
			want: map[string]Reason{"old.parquet": ReasonUntracked},
		},
		{
			name: "directories: empty ones older than the cutoff go, fresh ones stay, emptied ones go bottom-up",
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
			name: "directories: one the inventory lists whose name the log protects as a file stays",
			setup: func(tb *table) {
				tb.commit(add("x"))
			},
			inventory: sliceWalker{{Key: "x/", IsDir: true, ModTime: now.Add(-30 * day)}, {Key: "y/", IsDir: true, ModTime: now.Add(-30 * day)}},
			opts:      retain0,
			want:      map[string]Reason{},
			wantDirs:  []string{"y"},
		},
		{
			name: "readers: a file a commit after a reader's version names is kept, whatever its age",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"), add("b.parquet"), add("c.parquet")) // 1
				tb.commit(remove("a.parquet", 20*day))                          // 2: at the pin
				tb.commit(remove("b.parquet", 20*day), add("d.parquet"))        // 3: after it
				tb.commit(remove("d.parquet", 20*day))                          // 4: added and removed after it
				for _, k := range []string{"a.parquet", "b.parquet", "c.parquet", "d.parquet"} {
					tb.file(k, 30*day)
				}
			},
			opts:     Options{Readers: []Reader{pinAt(2)}},
			want:     map[string]Reason{"a.parquet": ReasonTombstone},
			wantKept: map[string]string{"b.parquet": "pin@2", "d.parquet": "pin@2"},
		},
		{
			name: "readers: a file removed at or before a reader's version follows the retention",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"), add("b.parquet")) // 1
				tb.commit(remove("a.parquet", 20*day))        // 2
				tb.commit(remove("b.parquet", day))           // 3: inside the retention
				tb.file("a.parquet", 30*day)
				tb.file("b.parquet", 30*day)
				tb.file("untracked.parquet", 30*day)
			},
			opts: Options{Readers: []Reader{pinAt(3), pinAt(4)}},
			want: map[string]Reason{"a.parquet": ReasonTombstone, "untracked.parquet": ReasonUntracked},
		},
		{
			name: "readers: a kept file names the readers whose version is older than the commit that names it",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"), add("b.parquet")) // 1
				tb.commit(remove("a.parquet", 20*day))        // 2
				tb.commit(remove("b.parquet", 20*day))        // 3
				tb.file("a.parquet", 30*day)
				tb.file("b.parquet", 30*day)
			},
			opts:     Options{Readers: []Reader{pinAt(2), pinAt(1)}},
			want:     map[string]Reason{},
			wantKept: map[string]string{"a.parquet": "pin@1", "b.parquet": "pin@2"},
		},
		{
			name: "readers: a reader's deletion vectors and change data after its version are kept",
			setup: func(tb *table) {
				tb.commit(addDV("a.parquet", dvU("", z85)))                                                             // 1
				tb.commit(removeDV("a.parquet", 20*day, dvU("", z85)), add("a.parquet"), cdc("_change_data/c.parquet")) // 2
				tb.commit(remove("a.parquet", 20*day))                                                                  // 3
				for _, k := range []string{"a.parquet", dvFile, "_change_data/c.parquet"} {
					tb.file(k, 30*day)
				}
			},
			opts:     Options{Readers: []Reader{pinAt(1)}},
			want:     map[string]Reason{},
			wantKept: map[string]string{"a.parquet": "pin@1", dvFile: "pin@1", "_change_data/c.parquet": "pin@1"},
		},
		{
			name: "readers: a reader's files and folders are kept, in every spelling, its folders never entered",
			setup: func(tb *table) {
				tb.file("iceberg-named.parquet", 30*day)
				tb.file("Other-Case.parquet", 30*day)
				tb.file("metadata/v1.metadata.json", 30*day)
				tb.file("metadata/snap-1.avro", 30*day)
				tb.dir("metadata/empty", 30*day)
				tb.file("stray.parquet", 30*day)
			},
			opts: Options{Readers: []Reader{{Kind: ReaderIceberg, Name: "metadata/v1.metadata.json", Folders: []string{"metadata/"},
				Files: func(_ context.Context, fn func(string) error) error {
					if err := fn("iceberg-named.parquet"); err != nil {
						return err
					}
					return fn("other-case.parquet")
				}}}},
			want:     map[string]Reason{"stray.parquet": ReasonUntracked},
			wantKept: map[string]string{"iceberg-named.parquet": "iceberg@-", "Other-Case.parquet": "iceberg@-"},
		},
		{
			name: "readers: a reader whose commits the log no longer holds refuses the run",
			setup: func(tb *table) {
				tb.commit(add("a.parquet")) // 1
				tb.commit(add("b.parquet")) // 2
				tb.commit(add("c.parquet")) // 3
				tb.checkpointWith(2, "a.parquet", "b.parquet")
			},
			opts: Options{Readers: []Reader{pinAt(1)}},
			err:  errIs(ErrReaderTooOld),
		},
		{
			name: "readers: a reader beyond the log refuses the run",
			setup: func(tb *table) {
				tb.commit(add("a.parquet")) // 1
			},
			opts: Options{Readers: []Reader{pinAt(3)}},
			err:  errIs(ErrReaderTooOld),
		},
		{
			name: "readers: LITE keeps what a reader needs",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"), add("b.parquet")) // 1
				tb.commit(remove("a.parquet", 20*day))        // 2
				tb.commit(remove("b.parquet", 20*day))        // 3
				tb.file("a.parquet", 30*day)
				tb.file("b.parquet", 30*day)
			},
			opts:     Options{Mode: ModeLite, Readers: []Reader{pinAt(2)}},
			want:     map[string]Reason{"a.parquet": ReasonTombstone},
			wantKept: map[string]string{"b.parquet": "pin@2"},
		},
		{
			name: "readers: an inventory run keeps what a reader needs",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"), add("b.parquet")) // 1
				tb.commit(remove("a.parquet", 20*day))        // 2
				tb.commit(remove("b.parquet", 20*day))        // 3
				tb.file("a.parquet", 30*day)
				tb.file("b.parquet", 30*day)
			},
			inventoryCSV: fmt.Sprintf("path,length,isDir,modificationTime\nmem://bucket/table/a.parquet,1,false,%[1]d\nmem://bucket/table/b.parquet,1,false,%[1]d\n", now.Add(-30*day).UnixMilli()),
			opts:         Options{Readers: []Reader{pinAt(2)}},
			want:         map[string]Reason{"a.parquet": ReasonTombstone},
			wantKept:     map[string]string{"b.parquet": "pin@2"},
		},
		{
			name: "LITE: the candidates are the removes, their deletion vectors and the cdc files of the log, less what it protects",
			spec: tableSpec{partitionColumns: []string{"p"}},
			setup: func(tb *table) {
				tb.commit(add("a.parquet"), addDV("p=1/b.parquet", dvU("", z85)), add("_tmp/h.parquet"), add("c.parquet"), add("d.parquet"))
				tb.commit(remove("a.parquet", 20*day), removeDV("p=1/b.parquet", 20*day, dvU("", z85)), remove("_tmp/h.parquet", 20*day), cdc("_change_data/x.parquet"))
				tb.commit(remove("c.parquet", 20*day), remove("d.parquet", day))
				tb.commit(add("c.parquet")) // re-added: live again
				for _, k := range []string{"a.parquet", "p=1/b.parquet", dvFile, "_tmp/h.parquet", "c.parquet", "d.parquet", "_change_data/x.parquet", "untracked.parquet"} {
					tb.file(k, 30*day)
				}
				tb.dir("empty", 30*day)
			},
			opts: Options{Mode: ModeLite},
			want: map[string]Reason{"a.parquet": ReasonTombstone, "p=1/b.parquet": ReasonTombstone, dvFile: ReasonTombstone, "_change_data/x.parquet": ReasonChangeData},
		},
		{
			name: "LITE: a remove names a candidate only once its own deletionTimestamp is before the cutoff",
			setup: func(tb *table) {
				tb.commit(add("x.parquet"))
				tb.commit(remove("x.parquet", day)) // 2: in the window, inside the retention
				tb.commit(add("x.parquet"))
				tb.commit(remove("x.parquet", 20*day)) // 4: expired, but committed after the cutoff (a skewed clock)
				tb.ageCommit(4, day)
				tb.file("x.parquet", 30*day)
			},
			opts: Options{Mode: ModeLite},
			want: map[string]Reason{},
		},
		{
			name: "LITE: the window starts after the commit the last VACUUM covered and ends at the newest commit before the cutoff",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"), add("b.parquet"), add("c.parquet"))
				tb.commit(remove("a.parquet", 20*day)) // 2: covered by the last VACUUM
				tb.commit(remove("b.parquet", 20*day)) // 3
				tb.commit(remove("c.parquet", 20*day)) // 4: after the cutoff
				tb.ageCommit(4, day)
				tb.store.PutAt(deltalog.LastVacuumInfoKey, []byte(`{"latestCommitVersionOutsideOfRetentionWindow": 2}`), now)
				for _, k := range []string{"a.parquet", "b.parquet", "c.parquet"} {
					tb.file(k, 30*day)
				}
			},
			opts: Options{Mode: ModeLite},
			want: map[string]Reason{"b.parquet": ReasonTombstone},
		},
		{
			name: "LITE: a log that no longer reaches back to the last VACUUM is refused",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.commit(add("b.parquet"))
				cp, _ := deltalog.EncodeCommit([]any{
					map[string]any{"checkpointMetadata": map[string]any{"version": 2}},
					map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
					map[string]any{"metaData": map[string]any{"id": "x", "format": map[string]any{"provider": "parquet"}, "schemaString": "{}", "partitionColumns": []string{}, "configuration": map[string]string{}}},
				})
				tb.store.PutAt("_delta_log/00000000000000000002.checkpoint.0b6a1c3e-7d1f-4c2a-9a3e-1f2e3d4c5b6a.json", cp, now)
				tb.commit(remove("a.parquet", 20*day))
				for v := int64(0); v <= 1; v++ {
					tb.store.Delete(context.Background(), []string{deltalog.CommitKey(v)})
				}
				tb.store.PutAt(deltalog.LastVacuumInfoKey, []byte(`{"latestCommitVersionOutsideOfRetentionWindow": 0}`), now)
			},
			opts: Options{Mode: ModeLite},
			err:  errIs(ErrCannotVacuumLite),
		},
		{
			name: "LITE: on local disk, a candidate written again since is too new, a companion goes with its file",
			spec: tableSpec{location: "file:///tmp/lite-rules"},
			setup: func(tb *table) {
				tb.commit(add("a.parquet"), add("b.parquet"))
				tb.commit(remove("a.parquet", 20*day), remove("b.parquet", 20*day))
				tb.file("a.parquet", time.Hour) // written again under the removed name
				tb.file("b.parquet", 30*day)
				tb.file(".b.parquet.crc", 30*day)
			},
			opts:      Options{Mode: ModeLite},
			want:      map[string]Reason{"b.parquet": ReasonTombstone},
			wantCheck: map[string]string{"b.parquet": ".b.parquet.crc"},
		},
		{
			name: "inventory: rows outside the table root are ignored",
			setup: func(tb *table) {
				tb.file("x.parquet", 30*day)
			},
			inventoryCSV: "path,length,isDir,modificationTime\n" +
				"mem://bucket/table/x.parquet,1,false,1\n" +
				"mem://bucket/table2/y.parquet,1,false,1\n" +
				"mem://bucket/other/z.parquet,1,false,1\n" +
				"mem://other/table/w.parquet,1,false,1\n" +
				"s3://bucket/table/v.parquet,1,false,1\n",
			opts: retain0,
			want: map[string]Reason{"x.parquet": ReasonUntracked},
		},
		{
			name: "shard: each shard plans the top-level entries ShardOf gives it, a companion with its file; together, the plan of the table",
			check: func(t *testing.T) {
				tb := newTable(t, tableSpec{partitionColumns: []string{"p"}})
				tb.commit(add("p=0/live.parquet"))
				for i := range 12 {
					tb.file(fmt.Sprintf("p=%d/x.parquet", i), 30*day)
					tb.file(fmt.Sprintf("f%d.parquet", i), 30*day)
					tb.file(fmt.Sprintf(".f%d.parquet.crc", i), 30*day)
				}
				v := int64(1)
				whole := tb.plan(Options{Version: &v})
				union := map[string]Reason{}
				for i := range 3 {
					sh := &Shard{Index: i, Count: 3}
					for k, r := range deleted(tb.plan(Options{Version: &v, Shard: sh})) {
						if ShardOf(k, 3) != i {
							t.Errorf("shard %d plans %s, of shard %d", i, k, ShardOf(k, 3))
						}
						union[k] = r
					}
					for _, f := range tb.plan(Options{Version: &v, Shard: sh}).Files.MustCollect() {
						if f.Checksum == "" && strings.HasPrefix(f.Path, "f") {
							t.Errorf("shard %d: %s without its companion", i, f.Path)
						}
					}
				}
				if diff := cmp.Diff(deleted(whole), union); diff != "" {
					t.Errorf("the shards together (-whole +union):\n%s", diff)
				}
			},
		},
		{
			name: "re-check: a file a commit after planning names, in any spelling or below it, is kept",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.commit(remove("a.parquet", 20*day))
				for _, k := range []string{"a.parquet", "b.parquet", "c", "d.parquet"} {
					tb.file(k, 30*day)
				}
			},
			// A RESTORE of a.parquet; B.parquet, b.parquet on a case-insensitive file system;
			// c/x.parquet, below c: a folder that is a link.
			after:       []any{add("a.parquet"), add("B.parquet"), add("c/x.parquet")},
			want:        map[string]Reason{"a.parquet": ReasonTombstone, "b.parquet": ReasonUntracked, "c": ReasonUntracked, "d.parquet": ReasonUntracked},
			wantDropped: []Dropped{{"a.parquet", DropReferenced, 3}, {"b.parquet", DropReferenced, 3}, {"c", DropReferenced, 3}},
		},
		{
			name: "re-check: a file written again since it was listed is kept, on a store that deletes on a condition",
			check: func(t *testing.T) {
				tb := newTable(t, tableSpec{})
				tb.file("a.parquet", 30*day)
				tb.file("b.parquet", 30*day)
				g := withGenerations(tb.store)
				plan, err := planOn(g, retain0)
				if err != nil {
					t.Fatal(err)
				}
				g.rewrite(t, "a.parquet", []byte("written again"))
				res, err := executeRun(context.Background(), g, plan, ExecOptions{BatchSize: 2, Concurrency: 1})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]Dropped{{"a.parquet", DropChanged, -1}}, res.Dropped); diff != "" || !exists(tb, "a.parquet") || exists(tb, "b.parquet") {
					t.Errorf("kept (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "re-check: a retention raised after planning keeps what is not old enough under it",
			setup: func(tb *table) {
				tb.file("10-days.parquet", 10*day)
				tb.file("40-days.parquet", 40*day)
				tb.dir("empty", 10*day)
			},
			after:       []any{metaData(map[string]string{"delta.deletedFileRetentionDuration": "interval 30 days"})},
			want:        map[string]Reason{"10-days.parquet": ReasonUntracked, "40-days.parquet": ReasonUntracked},
			wantDirs:    []string{"empty"},
			wantDropped: []Dropped{{"10-days.parquet", DropRetention, 1}, {"empty", DropRetention, 1}},
		},
		{
			name: "re-check: a metaData after planning that hides a path keeps what lies there",
			setup: func(tb *table) {
				tb.file("metadata/v1.metadata.json", 30*day)
				tb.file("x.parquet", 30*day)
			},
			opts:        retain0,
			after:       []any{metaData(map[string]string{"delta.universalFormat.enabledFormats": "iceberg"})},
			want:        map[string]Reason{"metadata/v1.metadata.json": ReasonUntracked, "x.parquet": ReasonUntracked},
			wantDirs:    []string{"metadata"},
			wantDropped: []Dropped{{"metadata/v1.metadata.json", DropHidden, 1}}, // and its folder stays with it
		},
		{
			name: "re-check: a metaData after planning that hides an empty folder keeps it",
			setup: func(tb *table) {
				tb.dir("metadata", 30*day)
			},
			opts:        retain0,
			after:       []any{metaData(map[string]string{"delta.universalFormat.enabledFormats": "iceberg"})},
			want:        map[string]Reason{},
			wantDirs:    []string{"metadata"},
			wantDropped: []Dropped{{"metadata", DropHidden, 1}},
		},
		{
			name: "trash: a trash folder is a clean hidden folder of the table, outside the log and the runs folder",
			check: func(t *testing.T) {
				tb := newTable(t, tableSpec{partitionColumns: []string{"_p"}})
				p, err := tb.planner(Options{})
				if err != nil {
					t.Fatal(err)
				}
				for prefix, ok := range map[string]bool{"_t": true, "./_t/": true, ".trash/x/": true, DefaultTrash: true,
					"t/": false, "_delta_log/t/": false, "_DELTA_LOG/t/": false, RunsDir: false, "_deltavacuum/runs/x/": false, "_deltavacuum/": false,
					"../_t/": false, "_t/../x/": false, "/": false, "_change_data/": false, "_p=1/": false} {
					dir, err := TrashFolder(p.Snapshot(), prefix)
					if (err == nil) != ok || (err != nil && !errors.Is(err, ErrTrashFolder)) || (ok && !strings.HasSuffix(dir, "/")) {
						t.Errorf("TrashFolder(%q) = %q, %v; want accepted %v", prefix, dir, err, ok)
					}
				}
			},
		},
		{
			name: "trash: a trash folder whose way holds a file is refused before anything moves",
			check: func(t *testing.T) {
				tb := newTable(t, tableSpec{})
				tb.file("_t", day)
				tb.file("_u/x", day)
				for dir, ok := range map[string]bool{"_t/": false, "_t/run/": false, "_u/": true, "_u/x/": false, "_v/run/": true} {
					if err := CheckTrashPlace(context.Background(), tb.store, dir); (err == nil) != ok {
						t.Errorf("CheckTrashPlace(%q) = %v; want accepted %v", dir, err, ok)
					}
				}
			},
		},
		{
			name: "coverage: a completed run covers the newest commit outside the retention, another run nothing",
			check: func(t *testing.T) {
				v := func(n int64) *int64 { return &n }
				done := func(r *Result) *Result {
					r.Plan, r.Status = &Plan{LatestCommitOutsideRetention: v(7)}, StatusCompleted
					return r
				}
				for _, c := range []struct {
					name string
					res  *Result
					prev *int64
					want *int64
				}{
					{"completed", done(&Result{}), nil, v(7)},
					{"completed after an older one", done(&Result{}), v(3), v(7)},
					{"failed", &Result{Plan: &Plan{LatestCommitOutsideRetention: v(7)}, Status: StatusFailed}, nil, nil},
					{"retention raised during the run", done(&Result{retentionRaised: true}), nil, nil},
					{"sharded", func() *Result { r := done(&Result{}); r.Shard = &Shard{Index: 0, Count: 2}; return r }(), nil, nil},
					{"would move it back", done(&Result{RecheckedThrough: v(9)}), v(8), nil},
					{"would move it back from the newest version re-checked", done(&Result{RecheckedThrough: v(9)}), v(9), nil},
					{"the version recorded already: nothing to write", done(&Result{RecheckedThrough: v(9)}), v(7), nil},
					{"a recorded version beyond the log", done(&Result{RecheckedThrough: v(9)}), v(12), v(7)},
				} {
					if got := Coverage(c.res, c.prev); (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
						t.Errorf("%s: %v, want %v", c.name, got, c.want)
					}
				}
			},
		},
	}
}

// TestRules runs ruleCases.
func TestRules(t *testing.T) {
	ctx := context.Background()
	for _, tt := range ruleCases() {
		t.Run(tt.name, func(t *testing.T) {
			if tt.check != nil {
				tt.check(t)
				return
			}
			tb := newTable(t, tt.spec)
			if tt.setup != nil {
				tt.setup(tb)
			}
			opts := tt.opts
			if opts.Now.IsZero() {
				opts.Now = now
			}
			var store storage.Store = tb.store
			if tt.store != nil {
				store = tt.store(tb)
			}
			if tt.inventory != nil {
				opts.Inventory = tt.inventory
			}
			if tt.inventoryCSV != "" {
				opts.Inventory = csvInventory(t, tb, tt.inventoryCSV)
			}
			p, err := NewPlanner(ctx, store, opts)
			var plan *Plan
			if err == nil {
				plan, err = p.Plan(ctx)
			}
			if tt.err != nil {
				if !tt.err(err) {
					t.Fatalf("got %v (plan %v), want the refusal", err, plan)
				}
				return
			}
			if err != nil {
				t.Fatalf("planning: %v", err)
			}
			if diff := cmp.Diff(tt.want, deleted(plan)); diff != "" {
				t.Errorf("deleted files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(orEmpty(tt.wantDirs), dirs(plan)); diff != "" {
				t.Errorf("deleted directories (-want +got):\n%s", diff)
			}
			got := map[string]string{}
			var totals Plan // the plan's totals, counted again from its files
			for _, f := range plan.Files.MustCollect() {
				totals.NumFilesToDelete++
				totals.SizeOfDataToDelete += f.Size
				if f.Checksum != "" {
					got[f.Path] = f.Checksum
					totals.NumChecksumFiles++
					totals.SizeOfChecksumFiles += f.ChecksumSize
				}
			}
			if totals.NumFilesToDelete != plan.NumFilesToDelete || totals.SizeOfDataToDelete != plan.SizeOfDataToDelete ||
				totals.NumChecksumFiles != plan.NumChecksumFiles || totals.SizeOfChecksumFiles != plan.SizeOfChecksumFiles {
				t.Errorf("the plan's totals (%d files, %d B, %d companions, %d B) are not its files' (%d, %d B, %d, %d B)",
					plan.NumFilesToDelete, plan.SizeOfDataToDelete, plan.NumChecksumFiles, plan.SizeOfChecksumFiles,
					totals.NumFilesToDelete, totals.SizeOfDataToDelete, totals.NumChecksumFiles, totals.SizeOfChecksumFiles)
			}
			if tt.wantCheck == nil {
				tt.wantCheck = map[string]string{}
			}
			if diff := cmp.Diff(tt.wantCheck, got); diff != "" {
				t.Errorf("checksum companions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(orEmpty(tt.wantNested), orEmpty(plan.NestedTables)); diff != "" {
				t.Errorf("nested tables (-want +got):\n%s", diff)
			}
			if tt.wantKept == nil {
				tt.wantKept = map[string]string{}
			}
			if diff := cmp.Diff(tt.wantKept, keptFor(plan, tt.opts.Readers)); diff != "" {
				t.Errorf("kept for readers (-want +got):\n%s", diff)
			}
			if tt.after == nil {
				return
			}
			res, err := Execute(ctx, tb.store, plan, startOpts(t, plan, startAfter(tb, tt.after...)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantDropped, sortedDropped(res)); diff != "" {
				t.Errorf("kept by the re-check (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRulesDocumented: every case of TestRules is named in the package documentation
// (doc.go), and every case named there exists, each once.
func TestRulesDocumented(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, line := range strings.Split(string(src), "\n") {
		if c, ok := strings.CutPrefix(line, "//"); ok {
			text.WriteString(strings.TrimSpace(c) + " ")
		}
	}
	named := map[string]int{}
	for i, part := range strings.Split(text.String(), `"`) {
		if i%2 == 1 {
			named[part]++
		}
	}
	for _, c := range ruleCases() {
		switch named[c.name] {
		case 0:
			t.Errorf("doc.go does not name the case %q", c.name)
		case 1:
		default:
			t.Errorf("doc.go names the case %q %d times", c.name, named[c.name])
		}
		delete(named, c.name)
	}
	for name := range named {
		t.Errorf("doc.go names %q, which is no case of TestRules", name)
	}
}

// keptFor is what the plan keeps for readers: each file with its first reader, "kind@version".
func keptFor(plan *Plan, readers []Reader) map[string]string {
	out := map[string]string{}
	for _, f := range plan.KeptForReaders {
		for _, r := range readers {
			if len(f.KeptBy) > 0 && f.KeptBy[0] == r.Describe() {
				v := "-"
				if r.Version != nil {
					v = fmt.Sprint(*r.Version)
				}
				out[f.Path] = r.Kind + "@" + v
				break
			}
		}
		if _, ok := out[f.Path]; !ok {
			out[f.Path] = "?" + strings.Join(f.KeptBy, "|")
		}
	}
	return out
}

func pinAt(v int64) Reader {
	return Reader{Kind: ReaderPin, Name: fmt.Sprintf("p%d", v), Version: &v}
}

func errIs(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

func errAs[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// metaData is a metaData action of the test table with the given configuration.
func metaData(configuration map[string]string) map[string]any {
	return map[string]any{"metaData": map[string]any{
		"id": "test-table", "format": map[string]any{"provider": "parquet"}, "schemaString": `{"type":"struct","fields":[]}`,
		"partitionColumns": []string{}, "configuration": configuration}}
}

// csvInventory is an inventory of tb's table in CSV, read from a file on local disk.
func csvInventory(t *testing.T, tb *table, text string) Walker {
	t.Helper()
	path := filepath.Join(t.TempDir(), "inventory.csv")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := inventory.Open(context.Background(), inventory.Source{Location: path}, tb.store.Location(), inventory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
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

// intoLinks reports its links as pointing inside the store.
type intoLinks struct{ linking }

func (l *intoLinks) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	return l.linking.Walk(ctx, prefix, func(o storage.Object) error {
		o.LinkIntoStore = o.IsLink
		return fn(o)
	})
}

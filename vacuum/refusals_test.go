package vacuum

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// logOnly fails every listing outside _delta_log/, proving a refusal came before any data
// listing.
type logOnly struct {
	storage.Store
	dataListed bool
}

func (s *logOnly) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	if !strings.HasPrefix(prefix, deltalog.LogDir) {
		s.dataListed = true
		return errors.New("data directory listed before the refusal")
	}
	return s.Store.Walk(ctx, prefix, fn)
}

// TestRefusals checks every refusal of section 3 (and the retention refusals of section 4)
// happens before anything outside _delta_log/ is listed, for DRY RUN too (the plan).
func TestRefusals(t *testing.T) {
	tests := []struct {
		name  string
		setup func(tb *table)
		opts  Options
		want  error  // matched with errors.Is, when set
		msg   string // a substring of the message
	}{
		{
			name:  "no _delta_log",
			setup: func(tb *table) { tb.store = mem.New("mem://bucket/table"); tb.file("a.parquet", day) },
			want:  deltalog.ErrNotDeltaTable,
			msg:   "is not a Delta table. VACUUM is only supported for Delta tables.",
		},
		{
			name: "_delta_log without commits",
			setup: func(tb *table) {
				tb.store = mem.New("mem://bucket/table")
				tb.file("_delta_log/_last_checkpoint", day)
			},
			want: deltalog.ErrNotDeltaTable,
		},
		{
			name: "unsupported writer feature",
			setup: func(tb *table) {
				tb.commit(map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
					"readerFeatures": []string{"deletionVectors"}, "writerFeatures": []string{"deletionVectors", "someFutureFeature"}}})
			},
			want: deltalog.ErrUnsupportedFeatures,
			msg:  "someFutureFeature",
		},
		{
			name: "unsupported reader feature",
			setup: func(tb *table) {
				tb.commit(map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
					"readerFeatures": []string{"futureReaderFeature"}, "writerFeatures": []string{}}})
			},
			want: deltalog.ErrUnsupportedFeatures,
		},
		{
			name: "writer version above 7",
			setup: func(tb *table) {
				tb.commit(map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 8}})
			},
			want: deltalog.ErrUnsupportedFeatures,
		},
		{
			name: "catalog-managed table",
			setup: func(tb *table) {
				tb.commit(map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
					"readerFeatures": []string{"catalogManaged"}, "writerFeatures": []string{"catalogManaged"}}})
			},
			want: deltalog.ErrCatalogManaged,
		},
		{
			name: "catalog-managed preview name",
			setup: func(tb *table) {
				tb.commit(map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
					"readerFeatures": []string{"catalogOwned-preview"}, "writerFeatures": []string{"catalogOwned-preview"}}})
			},
			want: deltalog.ErrCatalogManaged,
		},
		{
			name:  "staged commits in use",
			setup: func(tb *table) { tb.file("_delta_log/_staged_commits/00000000000000000001.uuid.json", day) },
			want:  deltalog.ErrCatalogManaged,
		},
		{
			name: "coordinated commits not backfilled",
			setup: func(tb *table) {
				tb.file("_delta_log/_commits/00000000000000000001.0a1b2c3d-0000-4000-8000-000000000000.json", day)
			},
			want: deltalog.ErrCatalogManaged,
			msg:  "_delta_log/_commits/",
		},
		{
			name: "coordinated commits feature",
			setup: func(tb *table) {
				tb.commit(map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
					"readerFeatures": []string{}, "writerFeatures": []string{"coordinatedCommits-preview"}}})
			},
			want: deltalog.ErrCatalogManaged,
		},
		{
			name: "gap in the commits",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.store.Delete(context.Background(), []string{deltalog.CommitKey(1)})
				tb.commit(add("b.parquet"))
			},
			want: deltalog.ErrMissingVersion,
			msg:  "version 1 is missing",
		},
		{
			name: "commit 0 missing without a checkpoint",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.store.Delete(context.Background(), []string{deltalog.CommitKey(0)})
			},
			want: deltalog.ErrMissingVersion,
		},
		{
			name: "a commit line that is not JSON",
			setup: func(tb *table) {
				tb.store.PutAt(deltalog.CommitKey(1), []byte("{\"add\":{\"path\":\"a\"}}\nnot json\n"), now)
			},
			want: deltalog.ErrCorrupt,
			msg:  "line 2",
		},
		{
			name:  "a truncated commit line",
			setup: func(tb *table) { tb.store.PutAt(deltalog.CommitKey(1), []byte(`{"add":{"path":"a","size":`), now) },
			want:  deltalog.ErrCorrupt,
		},
		{
			name: "a corrupt checkpoint",
			setup: func(tb *table) {
				tb.commit(add("a.parquet"))
				tb.store.PutAt("_delta_log/00000000000000000001.checkpoint.parquet", []byte("PAR1 this is not parquet PAR1"), now)
			},
			want: deltalog.ErrCorrupt,
		},
		{
			name:  "a bad percent escape",
			setup: func(tb *table) { tb.commit(add("p=%zz/a.parquet")) },
			want:  deltalog.ErrBadPath,
		},
		{
			name:  "an add path escaping the root",
			setup: func(tb *table) { tb.commit(add("../other-table/a.parquet")) },
			want:  deltalog.ErrBadPath,
		},
		{
			name:  "an encoded escape of the root",
			setup: func(tb *table) { tb.commit(add("a/%2E%2E/%2E%2E/b.parquet")) },
			want:  deltalog.ErrBadPath,
		},
		{
			name:  "a remove path escaping the root",
			setup: func(tb *table) { tb.commit(remove("x/../../a.parquet", day)) },
			want:  deltalog.ErrBadPath,
		},
		{
			name: "unknown deletion vector storage type",
			setup: func(tb *table) {
				tb.commit(addDV("a.parquet", map[string]any{"storageType": "q", "pathOrInlineDv": "x", "sizeInBytes": 1, "cardinality": 1}))
			},
			want: deltalog.ErrUnsupportedFeatures,
		},
		{
			name:  "negative retention",
			setup: func(tb *table) {},
			opts:  Options{RetainHours: hours(-1), DisableRetentionCheck: true},
			want:  ErrNegativeRetention,
			msg:   "Retention period for Vacuum can't be less than 0 hours.",
		},
		{
			name:  "retention that is not a number",
			setup: func(tb *table) {},
			opts:  Options{RetainHours: hours(math.NaN()), DisableRetentionCheck: true},
			msg:   "the retention is not a number (NaN)",
		},
		{
			name:  "infinite retention",
			setup: func(tb *table) {},
			opts:  Options{RetainHours: hours(math.Inf(1))},
			msg:   "is too large",
		},
		{
			name:  "retention below the table's with the check on",
			setup: func(tb *table) {},
			opts:  Options{RetainHours: hours(167)},
			msg:   "spark.databricks.delta.retentionDurationCheck.enabled = false",
		},
		{
			name: "invalid retention property",
			setup: func(tb *table) {
				tb.commit(map[string]any{"metaData": map[string]any{"id": "x", "format": map[string]any{"provider": "parquet"},
					"schemaString": "{}", "partitionColumns": []string{}, "configuration": map[string]string{"delta.deletedFileRetentionDuration": "interval 1 month"}}})
			},
			msg: "months and years are not accepted",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTable(t, tableSpec{})
			tt.setup(tb)
			tb.file("old.parquet", 300*day)
			lo := &logOnly{Store: tb.store}
			opts := tt.opts
			opts.Now = now
			_, err := NewPlanner(context.Background(), lo, opts)
			if err == nil {
				t.Fatal("got no error, want a refusal")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("got %q, want it to contain %q", err, tt.msg)
			}
			if lo.dataListed {
				t.Error("the data directory was listed before the refusal")
			}
		})
	}
}

func TestRetentionCheckMessage(t *testing.T) {
	tb := newTable(t, tableSpec{configuration: map[string]string{"delta.deletedFileRetentionDuration": "interval 100 hours 30 minutes"}})
	_, err := tb.planner(Options{RetainHours: hours(24)})
	var re *RetentionError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want a RetentionError", err)
	}
	if !strings.Contains(err.Error(), "at least 101 hours") || !strings.Contains(err.Error(), "mem://bucket/table") {
		t.Errorf("message %q must name the table and a retention of at least 101 hours", err)
	}
	// At or above the table's retention, and with the check off, it passes.
	for _, opts := range []Options{{RetainHours: hours(101)}, {RetainHours: hours(0), DisableRetentionCheck: true}, {}} {
		if _, err := tb.planner(opts); err != nil {
			t.Errorf("%+v: %v", opts, err)
		}
	}
	// 100.5 hours rounds to 101: passes; 100.4 rounds to 100: refused.
	if _, err := tb.planner(Options{RetainHours: hours(100.5)}); err != nil {
		t.Errorf("100.5 hours: %v", err)
	}
	if _, err := tb.planner(Options{RetainHours: hours(100.4)}); err == nil {
		t.Error("100.4 hours: got no error")
	}
}

// TestBackfilledCoordinatedCommitsAreFine: _delta_log/_commits/ holding only commits that are
// in _delta_log/ too (backfilled) does not block VACUUM.
func TestBackfilledCoordinatedCommitsAreFine(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("a.parquet"))
	tb.file("_delta_log/_commits/00000000000000000001.0a1b2c3d-0000-4000-8000-000000000000.json", day)
	tb.file("a.parquet", 30*day)
	tb.file("b.parquet", 30*day)
	if plan := tb.plan(retain0); plan.Files.Len() != 1 || plan.Files.MustCollect()[0].Path != "b.parquet" {
		t.Errorf("planned %v, want b.parquet", plan.Files)
	}
}

// TestMaterializePartitionColumns: a writer-only feature about the content of data files does
// not stop VACUUM (Spark vacuums such tables).
func TestMaterializePartitionColumns(t *testing.T) {
	tb := newTable(t, tableSpec{protocol: map[string]any{"minReaderVersion": 1, "minWriterVersion": 7,
		"writerFeatures": []string{"materializePartitionColumns", "appendOnly", "invariants"}}})
	tb.commit(add("live.parquet"))
	tb.file("live.parquet", 30*day)
	tb.file("junk.parquet", 30*day)
	if plan := tb.plan(retain0); plan.Files.Len() != 1 || plan.Files.MustCollect()[0].Path != "junk.parquet" {
		t.Errorf("planned %v, want junk.parquet", plan.Files)
	}
}

// TestCommitInTwoSpellings: 1.json beside 00000000000000000001.json is a second claim on
// version 1 (Spark's \d+\.json reads both): refused, whichever holds the live files.
func TestCommitInTwoSpellings(t *testing.T) {
	for _, name := range []string{"1.json", "01.json", "000000000000000000001.json"} {
		tb := newTable(t, tableSpec{})
		tb.commit(add("a.parquet"))
		tb.store.PutAt(deltalog.LogDir+name, []byte(`{"add":{"path":"b.parquet","size":1,"modificationTime":0,"dataChange":true}}`+"\n"), now.Add(-day))
		tb.file("a.parquet", 30*day)
		tb.file("b.parquet", 30*day)
		_, err := tb.planner(retain0)
		if !errors.Is(err, deltalog.ErrCorrupt) || !strings.Contains(err.Error(), "two commit files claim version 1") {
			t.Errorf("%s: got %v, want ErrCorrupt naming both files", name, err)
		}
	}
}

// TestCheckRetentionIsThePlanners: CheckRetention refuses exactly what the planner refuses of
// a retention, with the same error, reading nothing but the snapshot it is given.
func TestCheckRetentionIsThePlanners(t *testing.T) {
	tb := newTable(t, tableSpec{configuration: map[string]string{"delta.deletedFileRetentionDuration": "interval 100 hours"}})
	snap, err := deltalog.Load(context.Background(), tb.store)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{
		{}, {RetainHours: hours(24)}, {RetainHours: hours(99.4)}, {RetainHours: hours(99.5)}, {RetainHours: hours(100)},
		{RetainHours: hours(0), DisableRetentionCheck: true}, {RetainHours: hours(-1)}, {RetainHours: hours(-1), DisableRetentionCheck: true},
		{RetainHours: hours(math.NaN())}, {RetainHours: hours(math.Inf(1))}, {RetainHours: hours(1e300)},
	} {
		_, planned := tb.planner(opts)
		checked := CheckRetention(snap, opts)
		if (planned == nil) != (checked == nil) || (planned != nil && planned.Error() != checked.Error()) {
			t.Errorf("%+v: the planner says %v, CheckRetention %v", opts, planned, checked)
		}
	}
	var re *RetentionError
	if err := CheckRetention(snap, Options{RetainHours: hours(24)}); !errors.As(err, &re) || re.TableHours != 100 {
		t.Errorf("24 hours: %v, want a RetentionError naming 100 hours", err)
	}
	if err := CheckRetention(snap, Options{RetainHours: hours(-1)}); !errors.Is(err, ErrNegativeRetention) {
		t.Errorf("-1 hours: %v, want ErrNegativeRetention", err)
	}
}

package vacuum

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
)

// suffixWalker is an inventory that keeps only the entries whose key ends in suffix (and the
// directories), as a report filtered on ".parquet" does: it never names a _delta_log.
type suffixWalker struct {
	store  storage.Store
	suffix string
}

func (w suffixWalker) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	return w.store.Walk(ctx, prefix, func(o storage.Object) error {
		if strings.Contains(o.Key, "_delta_log") {
			return nil // neither the folder nor what is in it
		}
		if !o.IsDir && !strings.HasSuffix(o.Key, w.suffix) {
			return nil
		}
		return fn(o)
	})
}

// Rule: with an inventory, a folder that holds a _delta_log (at any depth, even when the
// inventory does not name it) is another table, and nothing in it is planned.
func TestInventoryNestedTableAsksTheStore(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.file("junk.parquet", 30*day)
	tb.file("p=1/junk.parquet", 30*day)
	// A nested table two folders down, its data one folder below its root.
	tb.store.PutAt("p=1/inner/_delta_log/00000000000000000000.json", []byte("{}"), now.Add(-30*day))
	tb.file("p=1/inner/q=2/part-0.parquet", 30*day)
	tb.file("p=1/inner/part-1.parquet", 30*day)
	// A nested table whose _delta_log is an empty folder.
	tb.dir("other/_delta_log", 30*day)
	tb.file("other/part-0.parquet", 30*day)
	retain := 0.0
	plan := tb.plan(Options{RetainHours: &retain, DisableRetentionCheck: true, Inventory: suffixWalker{tb.store, ".parquet"}})
	var got []string
	for _, f := range plan.Files.MustCollect() {
		got = append(got, f.Path)
	}
	if want := []string{"junk.parquet", "p=1/junk.parquet"}; !slices.Equal(got, want) {
		t.Errorf("planned %q, want %q (nothing inside a nested table)", got, want)
	}
	if want := []string{"other", "p=1/inner"}; !slices.Equal(plan.NestedTables, want) {
		t.Errorf("nestedTables = %q, want %q", plan.NestedTables, want)
	}
	if plan.NumFilesToDelete != 2 {
		t.Errorf("numFilesToDelete = %d, want 2", plan.NumFilesToDelete)
	}
	for _, d := range plan.Dirs {
		if strings.HasPrefix(d.Path, "p=1/inner") || strings.HasPrefix(d.Path, "other") {
			t.Errorf("planned directory %s inside a nested table", d.Path)
		}
	}
}

// Rule: a checksum companion the log names itself is live: it is never attached to the
// unreferenced file beside it (FULL and LITE alike).
func TestReferencedChecksumIsNotACompanion(t *testing.T) {
	for _, mode := range []Mode{ModeFull, ModeLite} {
		tb := newTable(t, tableSpec{})
		tb.commit(add("f.parquet"), add(".f.parquet.crc"))
		tb.commit(remove("f.parquet", 30*day))
		tb.file("f.parquet", 30*day)
		tb.file(".f.parquet.crc", 30*day)
		retain := 0.0
		plan := tb.plan(Options{RetainHours: &retain, DisableRetentionCheck: true, Mode: mode})
		for _, f := range plan.Files.MustCollect() {
			if f.Checksum != "" {
				t.Errorf("%v: %s planned with companion %s, which the log adds", mode, f.Path, f.Checksum)
			}
		}
	}
}

// dirWalker is an inventory that reports the file key as a directory (a wrong isDir).
type dirWalker struct {
	store storage.Store
	key   string
}

func (w dirWalker) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	return w.store.Walk(ctx, prefix, func(o storage.Object) error {
		if o.Key == w.key {
			o.Key, o.IsDir = o.Key+"/", true
		}
		return fn(o)
	})
}

// Rule: a directory whose name the log protects as a file is never planned (an inventory
// that says a live file is a directory).
func TestLiveFileCalledADirectoryIsNotPlanned(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("live.parquet"))
	tb.file("live.parquet", 30*day)
	retain := 0.0
	plan := tb.plan(Options{RetainHours: &retain, DisableRetentionCheck: true, Inventory: dirWalker{tb.store, "live.parquet"}})
	for _, d := range plan.Dirs {
		if d.Path == "live.parquet" {
			t.Errorf("planned the live file live.parquet as a directory to delete")
		}
	}
}

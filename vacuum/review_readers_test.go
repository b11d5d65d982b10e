package vacuum

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReaderOfChangesKeepsWhatItsOwnCommitNames: a reader of the changes of its version (a
// streaming query whose offset is before that commit's changes) needs the files the commit
// names (its change data, the files it removed and their deletion vectors) as well as those
// of the commits after it; a reader of the snapshot at the same version does not.
func TestReaderOfChangesKeepsWhatItsOwnCommitNames(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(addDV("a.parquet", dvU("", z85)), add("b.parquet"))                                            // 1
	tb.commit(removeDV("a.parquet", 20*day, dvU("", z85)), add("a.parquet"), cdc("_change_data/c2.parquet")) // 2
	tb.commit(remove("b.parquet", 20*day))                                                                   // 3
	for _, k := range []string{"a.parquet", "b.parquet", dvFile, "_change_data/c2.parquet"} {
		tb.file(k, 30*day)
	}
	v := int64(2)
	changes := Reader{Kind: ReaderStreaming, Name: "cp", Version: &v, Changes: true}
	plan := tb.plan(Options{Readers: []Reader{changes}})
	if diff := cmp.Diff(map[string]Reason{}, deleted(plan)); diff != "" {
		t.Errorf("a reader of the changes of version 2: deleted (-want +got):\n%s", diff)
	}
	want := map[string]string{dvFile: "streaming@2", "_change_data/c2.parquet": "streaming@2", "b.parquet": "streaming@2"}
	if diff := cmp.Diff(want, keptFor(plan, []Reader{changes})); diff != "" {
		t.Errorf("kept for the reader (-want +got):\n%s", diff)
	}

	snapshot := pinAt(2)
	plan = tb.plan(Options{Readers: []Reader{snapshot}})
	if diff := cmp.Diff(map[string]Reason{dvFile: ReasonTombstone, "_change_data/c2.parquet": ReasonChangeData}, deleted(plan)); diff != "" {
		t.Errorf("a reader of the snapshot at version 2: deleted (-want +got):\n%s", diff)
	}
}

// TestReaderOfChangesOfTheFirstVersion: a reader of the changes from version 0 reads commit 0 too; and refuses when the log no longer
// holds the commit of its own version.
func TestReaderOfChangesOfTheFirstVersion(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("a.parquet"))            // 1
	tb.commit(remove("a.parquet", 20*day)) // 2
	tb.file("a.parquet", 30*day)
	v := int64(0)
	r := Reader{Kind: ReaderStreaming, Name: "cp", Version: &v, Changes: true}
	if got := deleted(tb.plan(Options{Readers: []Reader{r}})); len(got) != 0 {
		t.Errorf("a reader of the changes from version 0: deleted %v", got)
	}

	tb = newTable(t, tableSpec{})
	tb.commit(add("a.parquet"))            // 1
	tb.commit(remove("a.parquet", 20*day)) // 2
	tb.commit(add("b.parquet"))            // 3
	tb.checkpointWith(2, "b.parquet")
	v = 2
	r = Reader{Kind: ReaderStreaming, Name: "cp", Version: &v, Changes: true}
	if _, err := tb.planner(Options{Readers: []Reader{r}}); !errIs(ErrReaderTooOld)(err) {
		t.Errorf("a reader of the changes of version 2, commit 2 cleaned up: got %v, want ErrReaderTooOld", err)
	}
	snapshot := pinAt(2)
	if _, err := tb.planner(Options{Readers: []Reader{snapshot}}); err != nil {
		t.Errorf("a reader of the snapshot at version 2, commit 2 cleaned up: %v", err)
	}
}

// TestShardRefusesAReaderBeyondTheLog: a reader beyond the log (a pin or checkpoint of
// another table) refuses every run, a sharded one too, which plans on an older version than
// the latest: it lies about this table whatever the version planned.
func TestShardRefusesAReaderBeyondTheLog(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("a.parquet")) // 1
	tb.commit(add("b.parquet")) // 2
	tb.commit(add("c.parquet")) // 3
	if _, err := tb.planner(Options{Readers: []Reader{pinAt(100)}}); !errIs(ErrReaderTooOld)(err) {
		t.Fatalf("a run of the whole table: got %v, want ErrReaderTooOld", err)
	}
	v := int64(2)
	for _, pin := range []int64{3, 4} { // the latest version, and the next one a query reads
		if _, err := tb.planner(Options{Version: &v, Shard: &Shard{Index: 0, Count: 2}, Readers: []Reader{pinAt(pin)}}); err != nil {
			t.Errorf("shard 0/2 at version 2, a reader at version %d: %v", pin, err)
		}
	}
	for i := range 2 {
		_, err := tb.planner(Options{Version: &v, Shard: &Shard{Index: i, Count: 2}, Readers: []Reader{pinAt(100)}})
		if !errIs(ErrReaderTooOld)(err) {
			t.Errorf("shard %d/2 at version 2, a reader at version 100 of a table at version 3: got %v, want ErrReaderTooOld", i, err)
		}
	}
}

// TestReaderKeepsEverySpellingACommitAfterItNames: a remove after the reader's version that
// names its file by an absolute URI with escapes, or by a relative path that can be read two
// ways, keeps every key it names; a sharded run keeps them in the shard that lists each.
func TestReaderKeepsEverySpellingACommitAfterItNames(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("mem://bucket/table/x%20y.parquet"), add("p=a%3Ab/f.parquet")) // 1
	tb.commit(remove("mem://bucket/table/x%20y.parquet", 20*day))                // 2
	tb.commit(remove("p=a%3Ab/f.parquet", 20*day))                               // 3
	for _, k := range []string{"x y.parquet", "p=a:b/f.parquet", "p=a%3Ab/f.parquet", "orphan.parquet"} {
		tb.file(k, 30*day)
	}
	want := map[string]Reason{"orphan.parquet": ReasonUntracked}
	if diff := cmp.Diff(want, deleted(tb.plan(Options{Readers: []Reader{pinAt(1)}}))); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	if got := deleted(tb.plan(Options{Mode: ModeLite, Readers: []Reader{pinAt(1)}})); len(got) != 0 { // LITE deletes no untracked file
		t.Errorf("LITE deleted %v", got)
	}
	v := tb.version
	for n := 2; n <= 5; n++ {
		got := map[string]Reason{}
		for i := range n {
			for k, r := range deleted(tb.plan(Options{Version: &v, Shard: &Shard{Index: i, Count: n}, Readers: []Reader{pinAt(1)}})) {
				got[k] = r
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%d shards deleted (-want +got):\n%s", n, diff)
		}
	}
}

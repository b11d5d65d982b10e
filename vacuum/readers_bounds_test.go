package vacuum

import (
	"context"
	"testing"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// TestReadersUpToTheBitSet: one run tells 64 readers apart (a key's readers are a 64-bit
// set): 64 readers plan, and the last of them (bit 63) still keeps what it reads; a 65th
// refuses the run rather than lose a reader.
func TestReadersUpToTheBitSet(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("a.parquet"))            // 1
	tb.commit(remove("a.parquet", 20*day)) // 2
	tb.file("a.parquet", 30*day)
	readers := make([]Reader, 0, maxReaders+1)
	for range maxReaders - 1 {
		readers = append(readers, pinAt(2))
	}
	readers = append(readers, pinAt(1)) // the 64th: the only one that reads a.parquet
	plan := tb.plan(Options{Readers: readers})
	if got := deleted(plan); len(got) != 0 {
		t.Fatalf("64 readers, the 64th at version 1: deleted %v", got)
	}
	if _, err := tb.planner(Options{Readers: append(readers, pinAt(2))}); err == nil {
		t.Fatal("65 readers: the run was not refused")
	}
}

// TestDescribeNamesEveryReader: each kind of reader is named in words, and one of a kind
// this build does not know is still "the reader", never a bare name.
func TestDescribeNamesEveryReader(t *testing.T) {
	v := int64(7)
	for _, tc := range []struct {
		r    Reader
		want string
	}{
		{Reader{Kind: ReaderPin, Name: "p1", Version: &v}, "the pin p1 from version 7"},
		{Reader{Kind: ReaderIceberg, Name: "metadata/v3.metadata.json"}, "the Iceberg metadata metadata/v3.metadata.json"},
		{Reader{Kind: "future", Name: "x"}, "the reader x"},
	} {
		if got := tc.r.Describe(); got != tc.want {
			t.Errorf("Describe() = %q, want %q", got, tc.want)
		}
	}
}

// TestReaderKeepsTheOtherCaseOfItsFile: a file a reader reads under a name with capitals is
// kept under its lower-case spelling too (on a store that folds case they are one file), as
// every live file is (rules_fold.go).
func TestReaderKeepsTheOtherCaseOfItsFile(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("Part-A.parquet"))            // 1
	tb.commit(remove("Part-A.parquet", 20*day)) // 2
	for _, k := range []string{"Part-A.parquet", "part-a.parquet", "PART-A.PARQUET"} {
		tb.file(k, 30*day)
	}
	if got := deleted(tb.plan(Options{Readers: []Reader{pinAt(1)}})); len(got) != 0 {
		t.Errorf("a reader at version 1 of Part-A.parquet: deleted %v", got)
	}
	if got := deleted(tb.plan(Options{})); len(got) != 3 {
		t.Errorf("without the reader: deleted %v, want the three spellings", got)
	}
}

// TestWhatEachReaderAloneKeeps: a plan counts, for each reader, the files it alone keeps and
// their bytes (what removing it would reclaim), and apart from them the files another reader
// keeps too; a file is listed once among those kept, with every reader that keeps it.
func TestWhatEachReaderAloneKeeps(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("a.parquet"), add("b.parquet")) // 1
	tb.commit(remove("a.parquet", 20*day))        // 2
	tb.commit(remove("b.parquet", 20*day))        // 3
	tb.file("a.parquet", 30*day)
	tb.file("b.parquet", 30*day)
	early, late := pinAt(1), pinAt(2) // early reads a and b; late reads b only
	observed := map[string]int{}
	plan := tb.plan(Options{Readers: []Reader{early, late}, Observe: func(v Verdict) {
		if v.Rule == RuleRead {
			observed[v.Object.Key] = len(v.Readers)
		}
	}})
	if got := deleted(plan); len(got) != 0 {
		t.Fatalf("deleted %v", got)
	}
	if observed["a.parquet"] != 1 || observed["b.parquet"] != 2 {
		t.Errorf("readers told to explain's observer: %v, want a.parquet 1, b.parquet 2", observed)
	}
	size := int64(len("data of a.parquet"))
	if r := plan.Readers[0]; r.NumFilesKept != 1 || r.SizeKept != size || r.NumFilesShared != 1 {
		t.Errorf("the reader at version 1: %d kept alone (%d bytes), %d shared; want 1 (%d bytes), 1", r.NumFilesKept, r.SizeKept, r.NumFilesShared, size)
	}
	if r := plan.Readers[1]; r.NumFilesKept != 0 || r.SizeKept != 0 || r.NumFilesShared != 1 {
		t.Errorf("the reader at version 2: %d kept alone (%d bytes), %d shared; want 0, 1", r.NumFilesKept, r.SizeKept, r.NumFilesShared)
	}
	if len(plan.KeptForReaders) != 2 {
		t.Fatalf("kept for readers: %+v, want a and b once each", plan.KeptForReaders)
	}
	for _, f := range plan.KeptForReaders {
		want := 1
		if f.Path == "b.parquet" {
			want = 2
		}
		if len(f.KeptBy) != want {
			t.Errorf("%s kept by %v, want %d readers", f.Path, f.KeptBy, want)
		}
	}
}

// TestReaderBeforeTheCheckpoint: a reader pinned before the table's newest checkpoint needs
// commits the snapshot does not hold (they are read again from the log): the files they name
// are kept, and explain's observer is told which reader keeps each.
func TestReaderBeforeTheCheckpoint(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("a.parquet"))            // 1
	tb.commit(remove("a.parquet", 20*day)) // 2
	tb.commit(add("b.parquet"))            // 3
	// A checkpoint at 3, with the commits before it still in the log (their cleanup not due).
	var commits [][]byte
	for v := range int64(4) {
		b, err := storage.ReadAll(context.Background(), tb.store, deltalog.CommitKey(v))
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, b)
	}
	tb.checkpointWith(3, "b.parquet")
	for v, b := range commits {
		tb.store.PutAt(deltalog.CommitKey(int64(v)), b, now.Add(-30*day))
	}
	tb.file("a.parquet", 30*day)
	tb.file("b.parquet", 30*day)
	pin := pinAt(1)
	var got []Verdict
	plan := tb.plan(Options{Readers: []Reader{pin}, Observe: func(v Verdict) {
		if v.Object.Key == "a.parquet" {
			got = append(got, v)
		}
	}})
	if d := deleted(plan); len(d) != 0 {
		t.Fatalf("a reader at version 1, checkpoint at 3: deleted %v", d)
	}
	if len(got) != 1 || got[0].Rule != RuleRead || len(got[0].Readers) != 1 || got[0].Readers[0].Name != pin.Name {
		t.Errorf("a.parquet's verdict: %+v, want kept by %s", got, pin.Name)
	}
}

package vacuum

import "testing"

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
	plan := tb.plan(Options{Readers: []Reader{early, late}})
	if got := deleted(plan); len(got) != 0 {
		t.Fatalf("deleted %v", got)
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

package vacuum

import (
	"context"
	"testing"
)

// TestChecksumCompanionTotals: a checksum companion deleted with its file is counted apart from
// the files (Spark's totals count the files only), with its bytes, in the plan (either listing
// order), in what a run deleted, and in what a run acted on when a newer commit keeps a
// companion.
func TestChecksumCompanionTotals(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("live.parquet"))
	tb.file("live.parquet", 30*day)
	tb.file(".live.parquet.crc", 30*day)
	tb.file("old.parquet", 30*day)      // data of old.parquet: 19 bytes
	tb.file(".old.parquet.crc", 30*day) // data of .old.parquet.crc: 24 bytes
	tb.file("+early.parquet", 30*day)   // sorts before its companion: 22 bytes
	tb.file(".+early.parquet.crc", 30*day)
	plan := tb.plan(retain0)
	wantBytes := int64(len("data of .old.parquet.crc") + len("data of .+early.parquet.crc"))
	if plan.NumFilesToDelete != 2 || plan.NumChecksumFiles != 2 || plan.SizeOfChecksumFiles != wantBytes {
		t.Fatalf("plan: %d files, %d companions of %d bytes; want 2, 2 of %d", plan.NumFilesToDelete, plan.NumChecksumFiles, plan.SizeOfChecksumFiles, wantBytes)
	}
	for _, f := range plan.Files.MustCollect() {
		if want := int64(len("data of " + f.Checksum)); f.ChecksumSize != want {
			t.Errorf("%s: companion %s of %d bytes, want %d", f.Path, f.Checksum, f.ChecksumSize, want)
		}
	}
	res, err := Execute(context.Background(), tb.store, plan, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumDeletedFiles != 2 || res.NumDeletedChecksumFiles != 2 || res.SizeOfDeletedChecksumFiles != wantBytes {
		t.Errorf("deleted %d files, %d companions of %d bytes; want 2, 2 of %d", res.NumDeletedFiles, res.NumDeletedChecksumFiles, res.SizeOfDeletedChecksumFiles, wantBytes)
	}

	// A commit made after planning names one companion: kept, and out of the totals acted on.
	tb = newTable(t, tableSpec{})
	tb.file("old.parquet", 30*day)
	tb.file(".old.parquet.crc", 30*day)
	plan = tb.plan(retain0)
	res, err = Execute(context.Background(), tb.store, plan, startOpts(t, plan, startAfter(tb, add(".old.parquet.crc"))))
	if err != nil {
		t.Fatal(err)
	}
	if res.NumDeletedChecksumFiles != 0 || res.Plan.NumChecksumFiles != 0 || res.Plan.SizeOfChecksumFiles != 0 || !exists(tb, ".old.parquet.crc") {
		t.Errorf("a companion a newer commit names: deleted %d, acted plan %d (%d bytes)", res.NumDeletedChecksumFiles, res.Plan.NumChecksumFiles, res.Plan.SizeOfChecksumFiles)
	}
}

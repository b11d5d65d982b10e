package adversarial

// Hadoop checksum companions (.NAME.crc) go with their file only when the log does not
// protect them: a live file named like a companion is not one. Each test asserts the safe
// behaviour, so it fails while the bug it names is there, and says which review found it.

import (
	"testing"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestLiveChecksumNamedFileIsNotACompanion: the planner (the walk's hidden-name branch; the
// rule is vacuum/rules_checksum.go companionGoes) attached any ".NAME.crc" to the unreferenced file NAME as its
// Hadoop checksum companion without asking whether the log protects it, and the executor
// (deleteBatch) deletes the companion after the file. An add of ".f.parquet.crc" makes that
// key a live file of the table (section 6: every live add's path is protected), so it is
// deleted while live. Spark on an object store (S3A, ABFS, GCS: no checksum file system)
// never lists hidden files and never deletes it; only Hadoop's local file system would. The
// test runs on a local table, on an object store (mem), and with the add committed during
// the run.
// Found by the third review.
func TestLiveChecksumNamedFileIsNotACompanion(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		tb := newLocalTable(t)
		tb.commit(addLine(".f.parquet.crc"), addLine("g/.h.parquet.crc"))
		tb.file(".f.parquet.crc", 20*day)
		tb.file("f.parquet", 20*day)
		tb.file("g/.h.parquet.crc", 20*day)
		tb.file("g/h.parquet", 20*day)
		code, stderr := vacuumNow(t, tb.dir)
		t.Logf("exit %d: %s", code, stderr)
		tb.mustExist(".f.parquet.crc", "g/.h.parquet.crc")
	})
	t.Run("object store", func(t *testing.T) {
		store := mem.New("mem://review3-crc")
		tb := newStoreTable(t, store)
		tb.commit(addLine(".f.parquet.crc"))
		tb.put(".f.parquet.crc")
		tb.put("f.parquet")
		res, err := vacuumStore(t, store, vacuum.ModeFull, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("files %+v", res.Files)
		tb.mustExist(".f.parquet.crc")
	})
	t.Run("named by a commit made during the run", func(t *testing.T) {
		// The executor (vacuum/execute.go deleteBatch) deletes the companion without asking
		// the re-check (tail.keepFile) about it either.
		tb, _, _ := runWithExtraFiles(t, []string{".f9.parquet.crc"},
			lateCommit{deltalog.CommitKey, []string{addLine(".f9.parquet.crc")}})
		tb.mustExist(".f9.parquet.crc")
	})
}

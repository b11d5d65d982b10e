package adversarial

// VACUUM LITE deletes what the log's expired removes name, without listing the table: what it
// must still look at before it deletes (a link a live path passes through, a file written
// again under its old name since its remove). Each test asserts the safe behaviour, so it
// fails while the bug it names is there, and says which review found it.

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLiteDeletesLinkALivePathPassesThrough: FULL never deletes a symbolic link that a
// protected path passes through (plan.go: o.IsLink && keepDir). LITE has no such rule: an
// expired remove whose path names the link itself (p=1, a partition folder that is a link)
// makes LITE unlink p=1, and every live file of the partition becomes unreachable.
// Found by the first review, of the deletion paths.
func TestLiteDeletesLinkALivePathPassesThrough(t *testing.T) {
	tb := newLocalTable(t)
	outside := t.TempDir()
	writeOld(t, filepath.Join(outside, "a.parquet"), 30*day)
	symlink(t, outside, filepath.Join(tb.dir, "p=1"))
	tb.commit(addLine("p=1/a.parquet"))
	tb.commit(removeLine("p=1")) // a careless writer's remove of the folder itself, long expired

	// FULL keeps the link (the guard the test compares with).
	code, stderr := vacuumNow(t, tb.dir, "--dry-run")
	if code != 0 {
		t.Fatalf("FULL DRY RUN: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := run(t, "vacuum", tb.dir, "--retain-hours", "0", "--conf", checkOff, "--lite")
	t.Logf("LITE: exit %d: %s%s", code, stdout, stderr)
	tb.mustBeLink("p=1")
	tb.mustExist("p=1/a.parquet")
}

// TestLiteDeletesAFileYoungerThanTheRetention (borderline: the contract ages LITE's
// candidates by deletionTimestamp, as the reference does). A file removed long ago is written
// again under the same name (a writer with deterministic names, part-00000.parquet, about to
// commit it; or a RESTORE copying it back) a minute before the run. FULL keeps it: its
// modification time is inside the retention. LITE deletes it without looking at it, although
// on local disk it already stats the file's .crc companion, and a stat (or a HEAD) of each
// candidate would let it apply FULL's rule too.
// Found by the first review, of the deletion paths.
func TestLiteDeletesAFileYoungerThanTheRetention(t *testing.T) {
	tb := newLocalTable(t)
	tb.commit(addLine("part-00000.parquet"))
	tb.commit(removeLine("part-00000.parquet"))
	tb.file("part-00000.parquet", time.Minute) // written again a minute ago, not committed yet
	code, stdout, stderr := run(t, "vacuum", tb.dir, "--retain-hours", "1", "--conf", checkOff, "--dry-run")
	if code != 0 || strings.Contains(stdout, "part-00000.parquet") {
		t.Fatalf("FULL DRY RUN: exit %d, %s%s: FULL should keep the young file", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, "vacuum", tb.dir, "--retain-hours", "1", "--conf", checkOff, "--lite")
	t.Logf("LITE: exit %d: %s%s", code, stdout, stderr)
	tb.mustExist("part-00000.parquet")
}

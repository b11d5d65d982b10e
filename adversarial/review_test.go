package adversarial

// Attacks found in the review of the deletion paths (second pair of eyes). Each test asserts
// the safe behaviour, so it fails while the bug it names is there.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// metadataWith is metadataLine with the given table configuration (a JSON object).
func metadataWith(conf string) string {
	return strings.Replace(metadataLine, `"configuration":{}`, `"configuration":`+conf, 1)
}

// removeAt is a remove action for path deleted at ts.
func removeAt(path string, ts time.Time) string {
	return fmt.Sprintf(`{"remove":{"path":%s,"deletionTimestamp":%d,"dataChange":true}}`, jsonString(path), ts.UnixMilli())
}

// TestReviewRetentionOverflowSkipsSafetyCheck: a table retention of about 292 years, written
// as a number of microseconds that lands within a float64 rounding step of 2^63 ns, passes
// ParseInterval's "too long" test (f > math.MaxInt64 is false for f == 2^63) and converts to
// a negative time.Duration (math.MinInt64 on amd64). Every RETAIN is then "not shorter than
// the table's retention": RETAIN 0 HOURS with the safety check ON is accepted, and the files
// of tombstones an hour old, which the table keeps for 292 years, are deleted. Spark reads the
// same interval as 9.2e15 microseconds (fits a long) and refuses the run.
func TestReviewRetentionOverflowSkipsSafetyCheck(t *testing.T) {
	for _, interval := range []string{
		"interval 9223372036854776 microseconds",                     // 2^63 + 192 ns
		"interval 9223372036.854775808 seconds",                      // exactly 2^63 ns
		"interval 106751 days 23 hours 47 minutes 16.854776 seconds", // the same, spelled out
	} {
		t.Run(interval, func(t *testing.T) {
			tb := newLocalTableIn(t, t.TempDir(), protocolLine,
				metadataWith(`{"delta.deletedFileRetentionDuration":`+jsonString(interval)+`}`))
			tb.commit(addLine("recent-tombstone.parquet"))
			tb.commit(removeAt("recent-tombstone.parquet", time.Now().Add(-time.Hour)))
			tb.file("recent-tombstone.parquet", 30*day)
			// No --conf: the retention safety check is on.
			code, stdout, stderr := run(t, "vacuum", tb.dir, "--retain-hours", "0")
			t.Logf("exit %d: %s%s", code, stdout, stderr)
			tb.mustExist("recent-tombstone.parquet")
			if code == 0 {
				t.Errorf("RETAIN 0 HOURS was accepted with the safety check on, for a table whose retention is %q", interval)
			}
		})
	}
}

// TestReviewLiteDeletesLinkALivePathPassesThrough: FULL never deletes a symbolic link that a
// protected path passes through (plan.go: o.IsLink && keepDir). LITE has no such rule: an
// expired remove whose path names the link itself (p=1, a partition folder that is a link)
// makes LITE unlink p=1, and every live file of the partition becomes unreachable.
func TestReviewLiteDeletesLinkALivePathPassesThrough(t *testing.T) {
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

// TestReviewCommitWithTwentyOneDigitName: Spark's \d+\.json reads 000000000000000000002.json
// (21 digits) as version 2, and its listFrom("00000000000000000000.") lists it. deltavacuum's
// parseVersion takes at most 20 digits and ignores the file: the table is read at version 1
// and the file only version 2 adds is deleted as untracked. The contract refuses a second
// spelling of a version (section 2.6); a version in that spelling alone must not be
// ignored either (refusing is the safe answer; reading it would be too).
func TestReviewCommitWithTwentyOneDigitName(t *testing.T) {
	tb := newLocalTable(t)
	tb.commit(addLine("a.parquet"))
	tb.file("a.parquet", 30*day)
	tb.file("b.parquet", 30*day)
	p := filepath.Join(tb.dir, "_delta_log", "000000000000000000002.json")
	if err := os.WriteFile(p, []byte(addLine("b.parquet")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := vacuumNow(t, tb.dir)
	t.Logf("exit %d: %s", code, stderr)
	tb.mustExist("a.parquet", "b.parquet")
}

// TestReviewRecheckDeletesLinkANewCommitPassesThrough: the planner keeps a link a protected
// path passes through, but the executor's re-check only compares a planned key with the keys
// newer commits name. A partition folder p=1 that is a link (to a folder outside the table),
// through which no live path passed at planning, is planned as an untracked file; a writer
// then commits p=1/new.parquet (the file was there before the run). The re-check reads that
// commit, yet deletes the link, and the file just committed is unreachable.
func TestReviewRecheckDeletesLinkANewCommitPassesThrough(t *testing.T) {
	tb := newLocalTable(t)
	outside := t.TempDir()
	writeOld(t, filepath.Join(outside, "new.parquet"), 30*day)
	symlink(t, outside, filepath.Join(tb.dir, "p=1"))
	old := time.Now().Add(-30 * day)
	tv := []unix.Timeval{unix.NsecToTimeval(old.UnixNano()), unix.NsecToTimeval(old.UnixNano())}
	if err := unix.Lutimes(filepath.Join(tb.dir, "p=1"), tv); err != nil {
		t.Skipf("cannot age the link: %v", err)
	}
	ctx := context.Background()
	table, err := deltavacuum.Open(ctx, tb.dir)
	if err != nil {
		t.Fatal(err)
	}
	retain := 0.0
	plan, err := table.Plan(ctx, vacuum.Options{RetainHours: &retain, DisableRetentionCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	planned := false
	for _, f := range plan.Files.MustCollect() {
		planned = planned || f.Path == "p=1"
	}
	if !planned {
		t.Fatalf("the link p=1 is not planned: the test tests nothing (plan %+v)", plan.Files)
	}
	tb.commit(addLine("p=1/new.parquet")) // the late writer, after planning
	res, err := vacuum.Execute(ctx, table.Store, plan, vacuum.ExecOptions{})
	t.Logf("Execute: %v; dropped %+v", err, res.Dropped)
	tb.mustBeLink("p=1")
	tb.mustExist("p=1/new.parquet")
}

// TestReviewInventoryDeletesLinkALivePathPassesThrough: the planner keeps a link that a
// protected path passes through only when the listing says it is a link (o.IsLink). An
// inventory has no such column: a row for the partition folder p=1, a link (as a listing that
// does not follow links, such as find's, reports it: a file), is planned as untracked and the
// executor unlinks p=1; the live file behind it is lost to the table. A row that names an
// ancestor of a protected path can never be a file VACUUM may delete, whatever it is.
func TestReviewInventoryDeletesLinkALivePathPassesThrough(t *testing.T) {
	tb := newLocalTable(t)
	outside := t.TempDir()
	writeOld(t, filepath.Join(outside, "a.parquet"), 30*day)
	symlink(t, outside, filepath.Join(tb.dir, "p=1"))
	tb.commit(addLine("p=1/a.parquet"))
	old := time.Now().Add(-30 * day).UnixMilli()
	csv := "path,length,isDir,modificationTime\n" +
		fmt.Sprintf("file:%s/p=1,%d,false,%d\n", tb.dir, len(outside), old)
	inv := filepath.Join(t.TempDir(), "inventory.csv")
	if err := os.WriteFile(inv, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := vacuumNow(t, tb.dir, "--inventory", inv)
	t.Logf("exit %d: %s", code, stderr)
	tb.mustBeLink("p=1")
	tb.mustExist("p=1/a.parquet")
}

// TestReviewAbsolutePathThroughAnotherSpellingOfTheRoot: a log path that is absolute names a
// file inside the table through the real path of the table's folder, while the user names the
// table through a symbolic link above it (/data -> /mnt/data; /tmp -> /private/tmp on macOS),
// or the other way round. Root.Key compares the path with the root as the user spelled it, so
// the live file counts as "outside the table": it is not protected and the listing, which
// finds it under the root, deletes it as untracked. The local store knows the root's real
// path (Store.roots); one file has two absolute spellings, both must protect it (or the run
// must be refused).
func TestReviewAbsolutePathThroughAnotherSpellingOfTheRoot(t *testing.T) {
	realParent := t.TempDir()
	linkParent := filepath.Join(t.TempDir(), "data")
	symlink(t, realParent, linkParent)
	for _, tc := range []struct{ name, logRoot, vacuumRoot string }{
		{"log names the real path, user the link", realParent, linkParent},
		{"log names the link, user the real path", linkParent, realParent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(tc.name, " ", "-")
			tb := newLocalTableIn(t, filepath.Join(realParent, name))
			tb.commit(addLine("file://" + filepath.ToSlash(filepath.Join(tc.logRoot, name, "live.parquet"))))
			tb.file("live.parquet", 30*day)
			tb.file("junk.parquet", 30*day)
			code, stderr := vacuumNow(t, filepath.Join(tc.vacuumRoot, name))
			t.Logf("exit %d: %s", code, stderr)
			tb.mustExist("live.parquet")
		})
	}
}

// TestReviewAzureLocationSpellingsOfOneTable: az://c/t, azure://c/t and
// https://acct.blob.core.windows.net/c/t are accepted table locations, and each names the same
// files as abfss://c@acct.dfs.core.windows.net/t. But the store reports the location as the
// user spelled it, and Root.Key only matches an absolute log path whose scheme family and
// authority equal the root's: with az:// the authority is the container alone, with https://
// the scheme is https. An add written with an absolute abfss:// path (third-party writers,
// OneLake) and a "p" deletion vector (an absolute URI by definition) are then "outside the
// table": neither is protected and the listing deletes both. The plan is made on an in-memory
// store with the Location the real Azure store reports, so no network is needed.
func TestReviewAzureLocationSpellingsOfOneTable(t *testing.T) {
	const abfss = "abfss://c@acct.dfs.core.windows.net/t/"
	opts := location.Options{"azure_storage_account_name": "acct", "azure_storage_account_key": "a2V5"}
	for _, uri := range []string{
		"abfss://c@acct.dfs.core.windows.net/t", // the control: passes
		"az://c/t",
		"azure://c/t",
		"https://acct.blob.core.windows.net/c/t",
		"https://acct.dfs.core.windows.net/c/t",
	} {
		t.Run(uri, func(t *testing.T) {
			st, err := location.Open(context.Background(), uri, opts)
			if err != nil {
				t.Fatal(err)
			}
			store := mem.New(st.Location())
			old := time.Now().Add(-30 * day)
			put := func(key, data string) { store.PutAt(key, []byte(data), old) }
			put("_delta_log/00000000000000000000.json", protocolLine+"\n"+metadataLine+"\n")
			put("_delta_log/00000000000000000001.json",
				`{"add":{"path":"`+abfss+`live.parquet","size":1,"modificationTime":0,"dataChange":true,"partitionValues":{},`+
					`"deletionVector":{"storageType":"p","pathOrInlineDv":"`+abfss+`dv/live.bin","offset":1,"sizeInBytes":10,"cardinality":1}}}`+"\n")
			put("live.parquet", "data")
			put("dv/live.bin", "dv")
			put("junk.parquet", "junk")
			table := deltavacuum.OpenStore(store)
			retain := 0.0
			plan, err := table.Plan(context.Background(), vacuum.Options{RetainHours: &retain, DisableRetentionCheck: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range plan.Files.MustCollect() {
				if f.Path == "live.parquet" || f.Path == "dv/live.bin" {
					t.Errorf("location %s (reported as %s): %s is planned for deletion (%s); the log names it as %s%s",
						uri, st.Location(), f.Path, f.Reason, abfss, f.Path)
				}
			}
		})
	}
}

// TestReviewLiteDeletesAFileYoungerThanTheRetention (borderline: the contract ages LITE's
// candidates by deletionTimestamp, as the reference does). A file removed long ago is written
// again under the same name (a writer with deterministic names, part-00000.parquet, about to
// commit it; or a RESTORE copying it back) a minute before the run. FULL keeps it: its
// modification time is inside the retention. LITE deletes it without looking at it, although
// on local disk it already stats the file's .crc companion, and a stat (or a HEAD) of each
// candidate would let it apply FULL's rule too.
func TestReviewLiteDeletesAFileYoungerThanTheRetention(t *testing.T) {
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

// TestReviewNestedTableWhoseLogIsALink: a folder inside the table that holds a _delta_log of
// its own is another table, never entered (plan.go: o.IsDir && name == "_delta_log"). A
// _delta_log that is a symbolic link is listed as a file, not a directory: the folder is not
// recognised as a table, and its live files, named by no action of the outer log, are
// deleted as untracked. The outer table's own _delta_log being a link is refused; the nested
// one must at least be left alone.
func TestReviewNestedTableWhoseLogIsALink(t *testing.T) {
	outer := newLocalTable(t)
	logHome := newLocalTableIn(t, filepath.Join(t.TempDir(), "inner-log-home"))
	logHome.commit(addLine("part-0.parquet"))
	symlink(t, filepath.Join(logHome.dir, "_delta_log"), filepath.Join(outer.dir, "inner", "_delta_log"))
	outer.file("inner/part-0.parquet", 30*day)
	outer.file("junk.parquet", 30*day)
	code, stderr := vacuumNow(t, outer.dir)
	t.Logf("exit %d: %s", code, stderr)
	outer.mustExist("inner/part-0.parquet")
}

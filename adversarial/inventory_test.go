package adversarial

// What an inventory report does not say: that a row is a symbolic link (there is no such
// column), that a folder is a table of its own (its _delta_log rows filtered out). Each test
// asserts the safe behaviour, so it fails while the bug it names is there, and says which
// review found it.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInventoryDeletesLinkALivePathPassesThrough: the planner keeps a link that a
// protected path passes through only when the listing says it is a link (o.IsLink). An
// inventory has no such column: a row for the partition folder p=1, a link (as a listing that
// does not follow links, such as find's, reports it: a file), is planned as untracked and the
// executor unlinks p=1; the live file behind it is lost to the table. A row that names an
// ancestor of a protected path can never be a file VACUUM may delete, whatever it is.
// Found by the first review, of the deletion paths.
func TestInventoryDeletesLinkALivePathPassesThrough(t *testing.T) {
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

// inventoryCSV writes an inventory (path, length, isDir, modificationTime) of every file and
// directory below dir, as a storage inventory report lists them, and returns its path.
func inventoryCSV(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("path,length,isDir,modificationTime\n")
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		size := fi.Size()
		if fi.IsDir() {
			size = 0
		}
		fmt.Fprintf(&b, "%q,%d,%v,%d\n", "file://"+p, size, fi.IsDir(), fi.ModTime().UnixMilli())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(t.TempDir(), "inventory.csv")
	writeFile(t, inv, []byte(b.String()))
	return inv
}

// TestNestedTableThroughAFilteredInventory: FULL never descends into a folder
// that holds a _delta_log of its own (another Delta table saved into this one): the listing
// sees the folder's _delta_log and the planner takes back what it planned there. USING
// INVENTORY applies "FULL's rules", but the planner only learns of the nested table from an
// inventory row below its _delta_log. An inventory without such rows, such as the natural
// query that keeps the data files only (WHERE path LIKE '%.parquet'; or a report whose rule
// filters on a suffix), makes the nested table's live files untracked files of the outer
// table, and they are deleted. The store can tell (one Stat of DIR/_delta_log/ per directory
// with candidates); the inventory cannot be trusted to.
// Found by the second review.
func TestNestedTableThroughAFilteredInventory(t *testing.T) {
	outer := newLocalTable(t)
	inner := newLocalTableIn(t, filepath.Join(outer.dir, "inner"))
	inner.commit(addLine("part-0.parquet"))
	inner.file("part-0.parquet", 30*day)
	outer.file("junk.parquet", 30*day)
	inv := inventoryCSV(t, outer.dir)

	// The whole inventory: the nested table is seen and left alone (the guard).
	code, stderr := vacuumNow(t, outer.dir, "--dry-run", "--inventory", inv)
	if code != 0 || !strings.Contains(stderr, "inner/ holds a _delta_log of its own") {
		t.Fatalf("whole inventory: exit %d, %q; want the nested table reported", code, stderr)
	}
	code, stderr = vacuumNow(t, outer.dir, "--inventory", "(SELECT * FROM csv.`"+inv+"` WHERE path LIKE '%.parquet')")
	t.Logf("filtered inventory: exit %d: %s", code, stderr)
	outer.mustExist("inner/part-0.parquet")
	if outer.exists("junk.parquet") {
		t.Error("the outer table's own junk was kept: the test tests nothing")
	}
}

package adversarial

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// symlink makes link point to target, or skips the test where links cannot be made.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot create symbolic links here: %v", err)
	}
}

// mustSurvive fails the test for every path (absolute) that is gone, saying why it must not
// be.
func mustSurvive(t *testing.T, why string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was deleted: %s (%v)", p, why, err)
		}
	}
}

const (
	throughLink = "the delete went through a symbolic link"
	behindLink  = "it is a live file of the table, behind the link p=1"
)

// mustBeLink fails the test when rel (relative to the table root) is no longer a link.
func (tb *localTable) mustBeLink(rels ...string) {
	tb.t.Helper()
	for _, rel := range rels {
		fi, err := os.Lstat(filepath.Join(tb.dir, filepath.FromSlash(rel)))
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			tb.t.Errorf("the symbolic link %s was deleted or replaced (%v)", rel, err)
		}
	}
}

// resolved is path with its symbolic links resolved, as messages name a link's target.
func resolved(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLiteDoesNotDeleteThroughALink: LITE deletes by key, from the log. An expired remove of
// p=1/x.parquet, where p=1 is a link to a directory outside the table holding x.parquet,
// deleted the outside file (the key was resolved through the link).
func TestLiteDoesNotDeleteThroughALink(t *testing.T) {
	tests := []struct {
		name string
		key  string // the removed path; its first directory is the link
	}{
		{"partition link", "p=1/x.parquet"},
		{"nested below the link", "p=1/q=2/x.parquet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := newLocalTable(t)
			outside := t.TempDir()
			rel := strings.TrimPrefix(tc.key, "p=1/")
			writeOld(t, filepath.Join(outside, filepath.FromSlash(rel)), 30*day)
			symlink(t, outside, filepath.Join(tb.dir, "p=1"))
			tb.commit(addLine(tc.key))
			tb.commit(removeLine(tc.key))
			code, stdout, stderr := run(t, "vacuum", tb.dir, "--retain-hours", "0", "--conf", checkOff, "--lite")
			t.Logf("exit %d: %s%s", code, stdout, stderr)
			mustSurvive(t, throughLink, filepath.Join(outside, filepath.FromSlash(rel)))
			tb.mustBeLink("p=1")
			if code == 0 {
				t.Errorf("exit 0: the run reported success although it could not delete %s (it lies behind a link)", tc.key)
			} else if !strings.Contains(stdout+stderr, filepath.Join(tb.dir, "p=1")+", on the way to it, is a symbolic link") {
				t.Errorf("exit %d, %q: the output does not say that the link p=1 was in the way", code, stdout+stderr)
			}
		})
	}
}

// TestFullDirectorySwappedForLinkAfterPlanning: a data directory swapped for a link between
// planning and deleting redirected the deletes of a FULL run outside the table. The
// directory is renamed away and replaced by a link to a directory holding files of the same
// names, outside the table or inside it.
func TestFullDirectorySwappedForLinkAfterPlanning(t *testing.T) {
	for _, where := range []string{"outside", "inside"} {
		t.Run(where, func(t *testing.T) {
			tb := newLocalTable(t)
			tb.commit(addLine("live.parquet"))
			tb.file("live.parquet", 30*day)
			names := []string{"x.parquet", "y.parquet", "z.parquet"}
			for _, n := range names {
				tb.file("d/"+n, 30*day) // untracked and old: FULL deletes them
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
			planned := map[string]bool{}
			for _, f := range plan.Files.MustCollect() {
				planned[f.Path] = true
			}
			for _, n := range names {
				if !planned["d/"+n] {
					t.Fatalf("the plan does not delete d/%s: the test tests nothing (plan %+v)", n, plan.Files)
				}
			}

			target := t.TempDir()
			if where == "inside" {
				target = filepath.Join(tb.dir, "_kept") // hidden: never listed, never a candidate
			}
			var precious []string
			for _, n := range names {
				p := filepath.Join(target, n)
				writeOld(t, p, 30*day)
				precious = append(precious, p)
			}
			if err := os.Rename(filepath.Join(tb.dir, "d"), filepath.Join(t.TempDir(), "d.moved")); err != nil {
				t.Fatal(err)
			}
			symlink(t, target, filepath.Join(tb.dir, "d"))

			res, err := vacuum.Execute(ctx, table.Store, plan, vacuum.ExecOptions{})
			t.Logf("Execute: %v", err)
			mustSurvive(t, throughLink, precious...)
			tb.mustBeLink("d")
			tb.mustExist("live.parquet")
			if res != nil && res.NumDeletedFiles > 0 {
				t.Errorf("%d files reported deleted; every planned file lay behind the link", res.NumDeletedFiles)
			}
		})
	}
}

// TestSymlinkedTableRootIsRefused: a table root that is a symbolic link, or whose _delta_log
// is one, is refused with a message that says so and what to do; nothing is deleted.
func TestSymlinkedTableRootIsRefused(t *testing.T) {
	t.Run("root", func(t *testing.T) {
		tb := newLocalTable(t)
		tb.file("junk.parquet", 30*day)
		link := filepath.Join(t.TempDir(), "t")
		symlink(t, tb.dir, link)
		real := resolved(t, tb.dir)
		for _, uri := range []string{link, link + "/", "file://" + filepath.ToSlash(link)} {
			code, stderr := vacuumNow(t, uri)
			for _, want := range []string{link + " is a symbolic link to " + real, "vacuum " + real + " itself"} {
				if code != 1 || !strings.Contains(stderr, want) {
					t.Errorf("%s: exit %d, %q; want exit 1 and a message saying %q", uri, code, stderr, want)
				}
			}
			tb.mustExist("junk.parquet")
		}
	})
	t.Run("_delta_log", func(t *testing.T) {
		elsewhere := newLocalTable(t) // the real log
		elsewhere.file("junk-of-elsewhere.parquet", 30*day)
		tb := &localTable{t: t, dir: t.TempDir()}
		tb.file("junk.parquet", 30*day)
		link := filepath.Join(tb.dir, "_delta_log")
		symlink(t, filepath.Join(elsewhere.dir, "_delta_log"), link)
		want := link + " is a symbolic link to " + resolved(t, filepath.Join(elsewhere.dir, "_delta_log"))
		for _, extra := range [][]string{nil, {"--lite"}, {"--dry-run"}} {
			code, stderr := vacuumNow(t, tb.dir, extra...)
			if code != 1 || !strings.Contains(stderr, want) {
				t.Errorf("%v: exit %d, %q; want exit 1 and a message saying %q", extra, code, stderr, want)
			}
			tb.mustExist("junk.parquet")
			elsewhere.mustExist("junk-of-elsewhere.parquet")
		}
		tb.mustBeLink("_delta_log")
	})
}

// TestLivePartitionDirectoryThatIsALink: a live partition directory that is a link holding
// live files was deleted as an untracked file (a link is listed as a file). Nothing the
// table reads may be lost: not the link, not what it points to.
func TestLivePartitionDirectoryThatIsALink(t *testing.T) {
	tests := []struct {
		name string
		// linkText is what p=1 points to (relative to the table root); realDir is where the
		// files are, relative to the table's parent directory.
		linkText, realDir string
	}{
		{"target outside the table", "../real/p=1", "real/p=1"},
		{"target inside the table", "real/p=1", "t/real/p=1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			tb := newLocalTableIn(t, filepath.Join(parent, "t"))
			live := []string{"a.parquet", "b.parquet"}
			for _, n := range live {
				writeOld(t, filepath.Join(parent, filepath.FromSlash(tc.realDir), n), 30*day)
				tb.commit(addLine("p=1/" + n))
			}
			symlink(t, tc.linkText, filepath.Join(tb.dir, "p=1"))
			tb.file("junk.parquet", 30*day)
			code, stderr := vacuumNow(t, tb.dir)
			t.Logf("exit %d: %s", code, stderr)
			tb.mustBeLink("p=1")
			for _, n := range live {
				tb.mustExist("p=1/" + n) // through the link: what the table reads
				mustSurvive(t, behindLink, filepath.Join(parent, filepath.FromSlash(tc.realDir), n))
			}
			if t.Failed() && strings.HasPrefix(tc.realDir, "t/") {
				t.Log("the live files are listed a second time, under real/p=1/, where no action names them: " +
					"a listing that never follows links cannot tell that they are the files behind p=1")
			}
		})
	}
}

// TestNestedTableWhoseLogIsALink: a folder inside the table that holds a _delta_log of
// its own is another table, never entered (plan.go: o.IsDir && name == "_delta_log"). A
// _delta_log that is a symbolic link is listed as a file, not a directory: the folder is not
// recognised as a table, and its live files, named by no action of the outer log, are
// deleted as untracked. The outer table's own _delta_log being a link is refused; the nested
// one must at least be left alone.
// Found by the first review, of the deletion paths.
func TestNestedTableWhoseLogIsALink(t *testing.T) {
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

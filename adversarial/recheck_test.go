package adversarial

// The re-check during the run (vacuum/recheck.go): a commit made after planning, while the
// deletes are under way, keeps what it names: a file behind a link a new path passes through,
// a commit under a name other than its 20-digit one, a deletion vector, a cdc file. Each test
// asserts the safe behaviour, so it fails while the bug it names is there, and says which
// review found it.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestRecheckDeletesLinkANewCommitPassesThrough: the planner keeps a link a protected
// path passes through, but the executor's re-check only compares a planned key with the keys
// newer commits name. A partition folder p=1 that is a link (to a folder outside the table),
// through which no live path passed at planning, is planned as an untracked file; a writer
// then commits p=1/new.parquet (the file was there before the run). The re-check reads that
// commit, yet deletes the link, and the file just committed is unreachable.
// Found by the first review, of the deletion paths.
func TestRecheckDeletesLinkANewCommitPassesThrough(t *testing.T) {
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

// deleteHookStore runs hook once, before the first Delete call that holds a key of the plan.
type deleteHookStore struct {
	storage.Store
	once sync.Once
	hook func()
}

func (s *deleteHookStore) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	s.once.Do(s.hook)
	return s.Store.Delete(ctx, keys)
}

// latestVersion is the newest commit version of the log of store.
func latestVersion(t *testing.T, store storage.Store) int64 {
	seg, err := deltalog.ListLog(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	return seg.Version
}

// lateCommit is a commit the test makes during the run: its lines under the key name(v), v the
// next version.
type lateCommit struct {
	name  func(v int64) string
	lines []string
}

// runWithCommitsDuringDeletes plans a FULL VACUUM RETAIN 0 HOURS of a table with ten
// unreferenced files f0..f9 and, once the first batch of deletes is under way, makes the
// commits given, at the next versions. It deletes one key per batch, one batch at a time, so
// that the re-check before every later batch has a chance to see the commits.
func runWithCommitsDuringDeletes(t *testing.T, commits ...lateCommit) (*storeTable, *vacuum.Result, error) {
	return runWithExtraFiles(t, nil, commits...)
}

// runWithExtraFiles is runWithCommitsDuringDeletes with more unreferenced files.
func runWithExtraFiles(t *testing.T, extra []string, commits ...lateCommit) (*storeTable, *vacuum.Result, error) {
	return runWith(t, false, extra, commits...)
}

// listingHookStore is a deleteHookStore that lists a directory from a name on as the object
// stores do (storage.DirLister): the re-check then looks at the log with one listing a
// batch instead of a Stat a name.
type listingHookStore struct {
	*deleteHookStore
	lister storage.DirLister
}

func (s listingHookStore) ListDir(ctx context.Context, dir, from string, limit int, fn func(storage.Object) error) (bool, error) {
	return s.lister.ListDir(ctx, dir, from, limit, fn)
}

// runWith is runWithExtraFiles, on a store that lists as the object stores do when listing
// is set.
func runWith(t *testing.T, listing bool, extra []string, commits ...lateCommit) (*storeTable, *vacuum.Result, error) {
	base := mem.New("mem://review3")
	tb := newStoreTable(t, base)
	tb.commit(addLine("live.parquet"))
	tb.put("live.parquet")
	for i := 0; i < 10; i++ {
		tb.put(fmt.Sprintf("f%d.parquet", i))
	}
	for _, k := range extra {
		tb.put(k)
	}
	store := &deleteHookStore{Store: base}
	store.hook = func() {
		v := latestVersion(t, base)
		for _, c := range commits {
			v++
			if err := base.PutIfAbsent(context.Background(), c.name(v), []byte(strings.Join(c.lines, "\n")+"\n")); err != nil {
				t.Errorf("committing version %d: %v", v, err)
			}
		}
	}
	var run storage.Store = store
	if listing {
		run = listingHookStore{deleteHookStore: store, lister: base}
	}
	retain := 0.0
	res, err := deltavacuum.OpenStore(run).Vacuum(context.Background(), deltavacuum.VacuumOptions{
		Options: vacuum.Options{RetainHours: &retain, DisableRetentionCheck: true, Mode: vacuum.ModeFull,
			Now: time.Now().Add(30 * time.Second)},
		Exec: vacuum.ExecOptions{BatchSize: 1, Concurrency: 1},
	})
	if res != nil {
		t.Logf("run: %v; deleted %d, dropped %+v, rechecked through %v", err, res.NumDeletedFiles, res.Dropped, derefOr(res.RecheckedThrough))
	}
	return tb, res, err
}

// TestRecheckMissesACommitWithAnUnpaddedName: the re-check during the run (tail.probe,
// vacuum/recheck.go) looks for the next commit only under its 20-digit name
// (deltalog.CommitKey), while the log reader (deltalog.ParseLogName, as Spark's \d+\.json)
// takes "7.json" for version 7 too. A commit written during the run as _delta_log/<v>.json
// (a RESTORE that re-adds f9.parquet) is never seen by the probe, so f9.parquet, live from
// that version on, is deleted in a later batch; and since the probe then keeps looking for
// the 20-digit name of that version, every later commit of the run (padded or not) is missed
// too. Spark reads the same log and would keep f9.parquet (an add of the current snapshot).
// A commit made after the last look is the documented window of one batch per worker; this
// is the rest of the run.
// Found by the third review.
func TestRecheckMissesACommitWithAnUnpaddedName(t *testing.T) {
	unpadded := func(v int64) string { return fmt.Sprintf("_delta_log/%d.json", v) }
	padded21 := func(v int64) string { return fmt.Sprintf("_delta_log/%021d.json", v) }
	restore := []string{addLine("f9.parquet")}
	noop := []string{`{"commitInfo":{"operation":"SET TBLPROPERTIES"}}`}
	t.Run("unpadded name", func(t *testing.T) {
		tb, _, _ := runWithCommitsDuringDeletes(t, lateCommit{unpadded, restore})
		tb.mustExist("live.parquet", "f9.parquet")
	})
	t.Run("21 digits", func(t *testing.T) {
		tb, _, _ := runWithCommitsDuringDeletes(t, lateCommit{padded21, restore})
		tb.mustExist("live.parquet", "f9.parquet")
	})
	t.Run("a padded commit after an unpadded one", func(t *testing.T) {
		tb, _, _ := runWithCommitsDuringDeletes(t, lateCommit{unpadded, noop}, lateCommit{deltalog.CommitKey, restore})
		tb.mustExist("live.parquet", "f9.parquet")
	})
}

// TestRecheckMissesACommitWithAnUnpaddedNameListing: the same commits, on a store whose
// re-check lists the log once a batch (the object stores, issue 28): the unpadded and the
// 21-digit names stop the run before f9.parquet is deleted, and so does a name with a few
// leading zeros, which the listing sees too.
func TestRecheckMissesACommitWithAnUnpaddedNameListing(t *testing.T) {
	unpadded := func(v int64) string { return fmt.Sprintf("_delta_log/%d.json", v) }
	padded3 := func(v int64) string { return fmt.Sprintf("_delta_log/%03d.json", v) }
	padded21 := func(v int64) string { return fmt.Sprintf("_delta_log/%021d.json", v) }
	restore := []string{addLine("f9.parquet")}
	noop := []string{`{"commitInfo":{"operation":"SET TBLPROPERTIES"}}`}
	for name, commits := range map[string][]lateCommit{
		"unpadded name":                         {{unpadded, restore}},
		"3 digits":                              {{padded3, restore}},
		"21 digits":                             {{padded21, restore}},
		"a padded commit after an unpadded one": {{unpadded, noop}, {deltalog.CommitKey, restore}},
		"a padded commit after a 21-digit one":  {{padded21, noop}, {deltalog.CommitKey, restore}},
	} {
		t.Run(name, func(t *testing.T) {
			tb, _, _ := runWith(t, true, nil, commits...)
			tb.mustExist("live.parquet", "f9.parquet")
		})
	}
	t.Run("20 digits", func(t *testing.T) {
		tb, res, _ := runWith(t, true, nil, lateCommit{deltalog.CommitKey, restore})
		tb.mustExist("live.parquet", "f9.parquet")
		if res == nil || len(res.Dropped) != 1 || res.Dropped[0].Path != "f9.parquet" {
			t.Errorf("dropped %+v, want f9.parquet kept by the commit", res)
		}
	})
}

// TestRecheckSeesACommitDuringDeletesGuard (guard): the same commit under its 20-digit name
// is seen by the probe before the next batch, and f9.parquet is kept.
// A guard written in the third review.
func TestRecheckSeesACommitDuringDeletesGuard(t *testing.T) {
	tb, _, _ := runWithCommitsDuringDeletes(t, lateCommit{deltalog.CommitKey, []string{addLine("f9.parquet")}})
	tb.mustExist("live.parquet", "f9.parquet")
}

func derefOr(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestRecheckSeesANewDeletionVectorGuard (guard): a DELETE committed during the run gives
// the live file a deletion vector, zz/deletion_vector_<uuid>.bin, which was an unreferenced
// file when the run was planned: the re-check keeps it.
// A guard written in the third review.
func TestRecheckSeesANewDeletionVectorGuard(t *testing.T) {
	const dv = "zz/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
	withDV := `{"add":{"path":"live.parquet","size":1,"modificationTime":0,"dataChange":true,"partitionValues":{},` +
		`"deletionVector":{"storageType":"u","pathOrInlineDv":"zz^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":2}}}`
	tb, _, _ := runWithExtraFiles(t, []string{"A.parquet", dv}, lateCommit{deltalog.CommitKey, []string{removeLine("live.parquet"), withDV}})
	tb.mustExist("live.parquet", dv)
}

// TestRecheckSeesANewCDCFileGuard (guard): a commit made during the run names a
// _change_data file that was unreferenced when the run was planned: the re-check keeps it.
// A guard written in the third review.
func TestRecheckSeesANewCDCFileGuard(t *testing.T) {
	const cdc = "_change_data/cdc-00000.snappy.parquet"
	line := `{"cdc":{"path":"_change_data/cdc-00000.snappy.parquet","partitionValues":{},"size":1,"dataChange":false}}`
	// A.parquet sorts first and goes in the first batch, sent before the commit is made.
	tb, _, _ := runWithExtraFiles(t, []string{"A.parquet", cdc}, lateCommit{deltalog.CommitKey, []string{line}})
	tb.mustExist("live.parquet", cdc)
}

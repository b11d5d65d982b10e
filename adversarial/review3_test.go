package adversarial

// Attacks found in the third review (review3): the Azure Blob Batch request, the GCS backend,
// and the executor's re-check after VACUUM START. Each test asserts the safe behaviour, so it
// fails while the bug it names is there. The store tests run on fresh prefixes of the loopback
// test servers (set -a; . .cache/testservers.env; set +a) and skip without them.

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage/mem"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// r3OddPairs are (unreferenced, live) key pairs: the first is planned for deletion, the
// second is a live file a mis-encoded or mis-decoded request for the first could reach.
var r3OddPairs = [][2]string{
	{"a+b.parquet", "a b.parquet"},
	{"c%2Bd.parquet", "c+d.parquet"},
	{"e%20f.parquet", "e f.parquet"},
	{"g%2Fh.parquet", "g/h.parquet"},
	{"i\\j.parquet", "i/j.parquet"},
	{"k#l.parquet", "k"},
	{"m?n.parquet", "m"},
	{"o;p.parquet", "o"},
	{"q&r=s.parquet", "q"},
	{"t%25u.parquet", "t%u.parquet"},
	{"v:w@x$y.parquet", "v"},
	{"z\u00e9.parquet", "ze\u0301.parquet"},
	{"A.parquet", "a.parquet"},
	{"k2.parquet.", "k2.parquet"},
	{"dd./x.parquet", "dd/x.parquet"},
	{"ee /x.parquet", "ee/x.parquet"},
	{"ff%2e%2e/x.parquet", "x.parquet"},
	{"gg/%2e%2e/y.parquet", "y.parquet"},
	{"hh/..%2fz.parquet", "z.parquet"},
}

func r3LogPath(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// r3OddNames runs FULL on store with every pair: the unreferenced keys must go, the live ones
// must stay.
func r3OddNames(t *testing.T, store storage.Store) {
	tb := r2sNewTable(t, store)
	var adds []string
	for _, p := range r3OddPairs {
		adds = append(adds, addLine(r3LogPath(p[1])))
	}
	tb.commit(adds...)
	for _, p := range r3OddPairs {
		tb.put(p[1])
	}
	for _, p := range r3OddPairs {
		tb.put(p[0])
	}
	res, err := r2sVacuum(t, store, vacuum.ModeFull, nil)
	if err != nil {
		t.Fatalf("FULL: %v", err)
	}
	planned := map[string]bool{}
	for _, f := range res.Files.MustCollect() {
		planned[f.Path] = true
	}
	for _, p := range r3OddPairs {
		if !tb.exists(p[1]) {
			t.Errorf("live %q was deleted (planned: %v; its unreferenced twin %q)", p[1], planned[p[1]], p[0])
		}
		if tb.exists(p[0]) {
			t.Logf("unreferenced %q is still there (planned %v)", p[0], planned[p[0]])
		}
	}
}

// TestReview3AzureBatchOddNamesGuard (guard): keys with characters the Blob Batch
// sub-request URL escapes or leaves as they are (+, %, space, #, ?, ;, &, =, :, @, $, a
// backslash, a trailing dot, dot segments spelled with %2e) delete only themselves, never the
// live key a mis-encoding would name. Verified to pass on Azurite.
func TestReview3AzureBatchOddNamesGuard(t *testing.T) {
	r3OddNames(t, storagetest.NewAzure(t))
}

// TestReview3GCSOddNamesGuard (guard): the same keys on GCS (single JSON API deletes).
// Verified to pass on fake-gcs-server.
func TestReview3GCSOddNamesGuard(t *testing.T) {
	r3OddNames(t, storagetest.NewGCS(t))
}

// r3HookStore runs hook once, before the first Delete call that holds a key of the plan.
type r3HookStore struct {
	storage.Store
	once sync.Once
	hook func()
}

func (s *r3HookStore) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	s.once.Do(s.hook)
	return s.Store.Delete(ctx, keys)
}

// r3LatestVersion is the newest commit version of the log of store.
func r3LatestVersion(t *testing.T, store storage.Store) int64 {
	seg, err := deltalog.ListLog(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	return seg.Version
}

// r3Commit is a commit the test makes during the run: its lines under the key name(v), v the
// next version.
type r3Commit struct {
	name  func(v int64) string
	lines []string
}

// r3RunWithCommitDuringDeletes plans a FULL VACUUM RETAIN 0 HOURS of a table with ten
// unreferenced files f0..f9 and, once the first batch of deletes is under way, makes the
// commits given, at the next versions. It deletes one key per batch, one batch at a time, so
// that the re-check before every later batch has a chance to see the commits.
func r3RunWithCommitDuringDeletes(t *testing.T, commits ...r3Commit) (*r2sTable, *vacuum.Result, error) {
	return r3RunWithExtraFiles(t, nil, commits...)
}

// r3RunWithExtraFiles is r3RunWithCommitDuringDeletes with more unreferenced files.
func r3RunWithExtraFiles(t *testing.T, extra []string, commits ...r3Commit) (*r2sTable, *vacuum.Result, error) {
	base := mem.New("mem://review3")
	tb := r2sNewTable(t, base)
	tb.commit(addLine("live.parquet"))
	tb.put("live.parquet")
	for i := 0; i < 10; i++ {
		tb.put(fmt.Sprintf("f%d.parquet", i))
	}
	for _, k := range extra {
		tb.put(k)
	}
	store := &r3HookStore{Store: base}
	store.hook = func() {
		v := r3LatestVersion(t, base)
		for _, c := range commits {
			v++
			if err := base.PutIfAbsent(context.Background(), c.name(v), []byte(strings.Join(c.lines, "\n")+"\n")); err != nil {
				t.Errorf("committing version %d: %v", v, err)
			}
		}
	}
	retain := 0.0
	res, err := deltavacuum.OpenStore(store).Vacuum(context.Background(), deltavacuum.VacuumOptions{
		Options: vacuum.Options{RetainHours: &retain, DisableRetentionCheck: true, Mode: vacuum.ModeFull,
			Now: time.Now().Add(30 * time.Second)},
		Exec: vacuum.ExecOptions{BatchSize: 1, Concurrency: 1},
	})
	if res != nil {
		t.Logf("run: %v; deleted %d, dropped %+v, rechecked through %v", err, res.NumDeletedFiles, res.Dropped, derefOr(res.RecheckedThrough))
	}
	return tb, res, err
}

// TestReview3RecheckMissesACommitWithAnUnpaddedName: the re-check during the run (tail.probe,
// vacuum/recheck.go) looks for the next commit only under its 20-digit name
// (deltalog.CommitKey), while the log reader (deltalog.ParseLogName, as Spark's \d+\.json)
// takes "7.json" for version 7 too. A commit written during the run as _delta_log/<v>.json
// (a RESTORE that re-adds f9.parquet) is never seen by the probe, so f9.parquet, live from
// that version on, is deleted in a later batch; and since the probe then keeps looking for
// the 20-digit name of that version, every later commit of the run (padded or not) is missed
// too. Spark reads the same log and would keep f9.parquet (an add of the current snapshot).
// A commit made after the last look is the documented window of one batch per worker; this
// is the rest of the run.
func TestReview3RecheckMissesACommitWithAnUnpaddedName(t *testing.T) {
	unpadded := func(v int64) string { return fmt.Sprintf("_delta_log/%d.json", v) }
	padded21 := func(v int64) string { return fmt.Sprintf("_delta_log/%021d.json", v) }
	restore := []string{addLine("f9.parquet")}
	noop := []string{`{"commitInfo":{"operation":"SET TBLPROPERTIES"}}`}
	t.Run("unpadded name", func(t *testing.T) {
		tb, _, _ := r3RunWithCommitDuringDeletes(t, r3Commit{unpadded, restore})
		tb.mustExist("live.parquet", "f9.parquet")
	})
	t.Run("21 digits", func(t *testing.T) {
		tb, _, _ := r3RunWithCommitDuringDeletes(t, r3Commit{padded21, restore})
		tb.mustExist("live.parquet", "f9.parquet")
	})
	t.Run("a padded commit after an unpadded one", func(t *testing.T) {
		tb, _, _ := r3RunWithCommitDuringDeletes(t, r3Commit{unpadded, noop}, r3Commit{deltalog.CommitKey, restore})
		tb.mustExist("live.parquet", "f9.parquet")
	})
}

// TestReview3RecheckSeesACommitDuringDeletesGuard (guard): the same commit under its 20-digit name
// is seen by the probe before the next batch, and f9.parquet is kept.
func TestReview3RecheckSeesACommitDuringDeletesGuard(t *testing.T) {
	tb, _, _ := r3RunWithCommitDuringDeletes(t, r3Commit{deltalog.CommitKey, []string{addLine("f9.parquet")}})
	tb.mustExist("live.parquet", "f9.parquet")
}

func derefOr(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestReview3LiveChecksumNamedFileIsNotACompanion: the planner (the walk's hidden-name branch; the
// rule is vacuum/rules_checksum.go companionGoes) attaches any ".NAME.crc" to the unreferenced file
// NAME as its Hadoop checksum companion without asking whether the log protects it, and the
// executor (deleteBatch) deletes the companion after the file. An add of ".f.parquet.crc" makes
// that key a live file of the table (section 6: every live add's path is protected), so it is
// deleted while live. Spark on an object store (S3A, ABFS, GCS: no checksum file system) never
// lists hidden files and never deletes it; only Hadoop's local file system would. The test runs on
// a local table, on an object store (mem), and with the add committed during the run.
func TestReview3LiveChecksumNamedFileIsNotACompanion(t *testing.T) {
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
		tb := r2sNewTable(t, store)
		tb.commit(addLine(".f.parquet.crc"))
		tb.put(".f.parquet.crc")
		tb.put("f.parquet")
		res, err := r2sVacuum(t, store, vacuum.ModeFull, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("files %+v", res.Files)
		tb.mustExist(".f.parquet.crc")
	})
	t.Run("named by a commit made during the run", func(t *testing.T) {
		// The executor (vacuum/execute.go deleteBatch) deletes the companion without asking
		// the re-check (tail.keepFile) about it either.
		tb, _, _ := r3RunWithExtraFiles(t, []string{".f9.parquet.crc"},
			r3Commit{deltalog.CommitKey, []string{addLine(".f9.parquet.crc")}})
		tb.mustExist(".f9.parquet.crc")
	})
}

// TestReview3RecheckSeesANewDeletionVectorGuard (guard): a DELETE committed during the run gives
// the live file a deletion vector, zz/deletion_vector_<uuid>.bin, which was an unreferenced
// file when the run was planned: the re-check keeps it.
func TestReview3RecheckSeesANewDeletionVectorGuard(t *testing.T) {
	const dv = "zz/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
	withDV := `{"add":{"path":"live.parquet","size":1,"modificationTime":0,"dataChange":true,"partitionValues":{},` +
		`"deletionVector":{"storageType":"u","pathOrInlineDv":"zz^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":2}}}`
	tb, _, _ := r3RunWithExtraFiles(t, []string{"A.parquet", dv}, r3Commit{deltalog.CommitKey, []string{removeLine("live.parquet"), withDV}})
	tb.mustExist("live.parquet", dv)
}

// TestReview3RecheckSeesANewCDCFileGuard (guard): a commit made during the run names a
// _change_data file that was unreferenced when the run was planned: the re-check keeps it.
func TestReview3RecheckSeesANewCDCFileGuard(t *testing.T) {
	const cdc = "_change_data/cdc-00000.snappy.parquet"
	line := `{"cdc":{"path":"_change_data/cdc-00000.snappy.parquet","partitionValues":{},"size":1,"dataChange":false}}`
	// A.parquet sorts first and goes in the first batch, sent before the commit is made.
	tb, _, _ := r3RunWithExtraFiles(t, []string{"A.parquet", cdc}, r3Commit{deltalog.CommitKey, []string{line}})
	tb.mustExist("live.parquet", cdc)
}

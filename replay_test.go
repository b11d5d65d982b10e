package deltavacuum

import (
	"context"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/bench/tablegen"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/checkpointwriter"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// readCountingStore counts the opens of each key and the listings of _delta_log/, and lets a
// test act as another writer just before a listing of the log or a commit.
type readCountingStore struct {
	storage.Store
	mu       sync.Mutex
	opens    map[string]int
	logLists int
	// beforeLogList, when set, runs before the n-th listing of _delta_log/ (1-based).
	beforeLogList func(n int)
	// beforeCommit, when set, runs before a put-if-absent of a commit file.
	beforeCommit func(key string)
}

func newReadCountingStore(s storage.Store) *readCountingStore {
	return &readCountingStore{Store: s, opens: map[string]int{}}
}

func (s *readCountingStore) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	if prefix == deltalog.LogDir {
		s.mu.Lock()
		s.logLists++
		n, hook := s.logLists, s.beforeLogList
		s.mu.Unlock()
		if hook != nil {
			hook(n)
		}
	}
	return s.Store.Walk(ctx, prefix, fn)
}

func (s *readCountingStore) Open(ctx context.Context, key string) (storage.Reader, error) {
	s.mu.Lock()
	s.opens[key]++
	s.mu.Unlock()
	return s.Store.Open(ctx, key)
}

func (s *readCountingStore) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if s.beforeCommit != nil && strings.HasPrefix(key, deltalog.LogDir) && strings.HasSuffix(key, ".json") {
		s.beforeCommit(key)
	}
	return s.Store.PutIfAbsent(ctx, key, data)
}

// replayTable writes a generated table (a 4-part checkpoint at version 10, commits 10 to 15
// after it, tombstones and untracked files 30 days old) into a temporary directory.
func replayTable(t *testing.T) (*tablegen.Table, *local.Store) {
	t.Helper()
	gen, err := tablegen.New(tablegen.Spec{Live: 2000, Tombstones: 200, Untracked: 50, Commits: 5, CheckpointPartRows: 600, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "table")
	if err := gen.WriteLocal(context.Background(), dir, nil); err != nil {
		t.Fatal(err)
	}
	if n := gen.CheckpointParts(); n < 3 {
		t.Fatalf("the checkpoint has %d parts; the test wants a multi-part one", n)
	}
	st, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return gen, st
}

// plannedKey is a key the run plans to delete (a tombstoned file).
func plannedKey(gen *tablegen.Table) string {
	var key string
	gen.Files(tablegen.KindTombstone, func(k string) {
		if key == "" {
			key = k
		}
	})
	return key
}

func staleLeft(t *testing.T, gen *tablegen.Table, st storage.Store) (present, total int) {
	t.Helper()
	gen.StaleKeys(func(k string) {
		total++
		if _, err := st.Stat(context.Background(), k); err == nil {
			present++
		}
	})
	return present, total
}

func writeOther(t *testing.T, st storage.Store, v int64, actions ...any) {
	t.Helper()
	if err := deltalog.WriteCommit(context.Background(), st, v, actions); err != nil {
		t.Fatalf("the other writer's commit %d: %v", v, err)
	}
}

func readd(key string) map[string]any {
	return map[string]any{"add": map[string]any{"path": key, "size": 1, "modificationTime": time.Now().UnixMilli(), "dataChange": true, "partitionValues": map[string]string{}}}
}

var logged = true

// TestRealRunReplaysTheLogOnce: a recorded real run, FULL or LITE, reads each checkpoint part twice
// (its protocol and metaData columns when the snapshot is loaded, its file-action columns when
// the planner streams them: disjoint column chunks) and every commit after it once, lists the
// log three times (planning, START, END), never reads the checkpoint again for START, the
// re-check or END, and never reads back the START it wrote.
func TestRealRunReplaysTheLogOnce(t *testing.T) {
	for _, mode := range []vacuum.Mode{vacuum.ModeFull, vacuum.ModeLite} {
		t.Run(string(mode), func(t *testing.T) {
			gen, st := replayTable(t)
			cs := newReadCountingStore(st)
			res, err := OpenStore(cs).Vacuum(context.Background(), VacuumOptions{Logging: &logged, Options: vacuum.Options{Mode: mode}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != vacuum.StatusCompleted || res.NumDeletedFiles == 0 {
				t.Fatalf("status %s, %d deleted", res.Status, res.NumDeletedFiles)
			}
			start := *res.StartVersion
			if start != gen.LatestVersion()+1 {
				t.Fatalf("START at %d, want %d", start, gen.LatestVersion()+1)
			}
			for i := range gen.CheckpointParts() {
				key, _ := gen.CheckpointPart(i)
				if n := cs.opens[key]; n != 2 {
					t.Errorf("checkpoint part %s opened %d times, want 2 (header columns, then file actions)", key, n)
				}
			}
			for v := int64(tablegen.CheckpointVersion + 1); v <= gen.LatestVersion(); v++ {
				if n := cs.opens[deltalog.CommitKey(v)]; n != 1 {
					t.Errorf("commit %d read %d times, want once", v, n)
				}
			}
			// START, this run's own commit, is not read back (issue 37): the re-check finds it
			// at the size written, and END is committed after the snapshot with it applied.
			if n := cs.opens[deltalog.CommitKey(start)]; n != 0 {
				t.Errorf("START read %d times, want 0", n)
			}
			if cs.logLists != 3 {
				t.Errorf("the log was listed %d times, want 3 (planning, START, END)", cs.logLists)
			}
			if mode == vacuum.ModeFull {
				if present, _ := staleLeft(t, gen, st); present != 0 {
					t.Errorf("%d stale files left", present)
				}
			}
		})
	}
}

// TestCommitBetweenPlanningAndStart: another writer's commit between planning and START
// re-adds a planned file; START is built on it without the checkpoint being read again, and
// the re-check keeps the file without reading the commit again. Also when the commit takes
// the very version START was to take (the race loop).
func TestCommitBetweenPlanningAndStart(t *testing.T) {
	for _, how := range []string{"before the listing", "taking START's version"} {
		t.Run(how, func(t *testing.T) {
			gen, st := replayTable(t)
			cs := newReadCountingStore(st)
			key := plannedKey(gen)
			other := gen.LatestVersion() + 1
			once := sync.Once{}
			act := func() { once.Do(func() { writeOther(t, st, other, readd(key)) }) }
			if how == "before the listing" {
				cs.beforeLogList = func(n int) {
					if n == 2 {
						act()
					}
				}
			} else {
				cs.beforeCommit = func(k string) {
					if k == deltalog.CommitKey(other) {
						act()
					}
				}
			}
			res, err := OpenStore(cs).Vacuum(context.Background(), VacuumOptions{Logging: &logged})
			if err != nil {
				t.Fatal(err)
			}
			if *res.StartVersion != other+1 {
				t.Errorf("START at %d, want %d (after the other writer's)", *res.StartVersion, other+1)
			}
			if _, err := st.Stat(context.Background(), key); err != nil {
				t.Errorf("%s, re-added after planning, was deleted: %v", key, err)
			}
			kept := false
			for _, d := range res.Dropped {
				kept = kept || d.Path == key && d.Reason == vacuum.DropReferenced && d.Version == other
			}
			if !kept {
				t.Errorf("dropped %v, want %s referenced at %d", res.Dropped, key, other)
			}
			if n := cs.opens[deltalog.CommitKey(other)]; n != 1 {
				t.Errorf("the other writer's commit read %d times, want once (by START; the re-check takes it from START's snapshot)", n)
			}
			for i := range gen.CheckpointParts() {
				k, _ := gen.CheckpointPart(i)
				if n := cs.opens[k]; n != 2 {
					t.Errorf("checkpoint part %s opened %d times, want 2", k, n)
				}
			}
		})
	}
}

// TestLogCleanupBetweenPlanningAndStart: another writer commits twice, writes a checkpoint of
// the newest version and cleans up every commit before it, between planning and START. The
// commits after the plan are gone, so START reads the new checkpoint in full, and the
// re-check, which cannot know what they referenced, stops the run: nothing is deleted.
func TestLogCleanupBetweenPlanningAndStart(t *testing.T) {
	gen, st := replayTable(t)
	cs := newReadCountingStore(st)
	key := plannedKey(gen)
	a, b := gen.LatestVersion()+1, gen.LatestVersion()+2
	var newCheckpoint string
	cs.beforeLogList = func(n int) {
		if n != 2 {
			return
		}
		ctx := context.Background()
		writeOther(t, st, a, readd(key))
		writeOther(t, st, b, map[string]any{"commitInfo": map[string]any{"operation": "WRITE"}})
		snap, err := deltalog.Load(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		newCheckpoint = writeClassicCheckpoint(t, st, snap)
		var old []string
		for v := int64(tablegen.CheckpointVersion); v <= a; v++ {
			old = append(old, deltalog.CommitKey(v))
		}
		for i := range gen.CheckpointParts() {
			k, _ := gen.CheckpointPart(i)
			old = append(old, k)
		}
		if _, err := st.Delete(ctx, old); err != nil {
			t.Fatal(err)
		}
	}
	res, err := OpenStore(cs).Vacuum(context.Background(), VacuumOptions{Logging: &logged})
	if err == nil || !strings.Contains(err.Error(), "is missing") {
		t.Fatalf("got %v; want the run stopped by the re-check (the commits after the plan are gone)", err)
	}
	if cs.opens[newCheckpoint] == 0 {
		t.Error("START did not read the new checkpoint: it cannot have fallen back to a full read")
	}
	if res == nil || res.StartVersion == nil || *res.StartVersion != b+1 {
		t.Errorf("START: %+v, want version %d", res, b+1)
	}
	if present, total := staleLeft(t, gen, st); present != total {
		t.Errorf("%d of %d stale files were deleted", total-present, total)
	}
}

// writeClassicCheckpoint writes the checkpoint of snap (its live files, protocol and
// metaData) under the classic name and returns its key.
func writeClassicCheckpoint(t *testing.T, st *local.Store, snap *deltalog.Snapshot) string {
	t.Helper()
	var adds []*deltalog.Action
	err := snap.Files(context.Background(), st, func(f deltalog.File) error {
		if !f.Removed {
			adds = append(adds, &deltalog.Action{Add: &deltalog.Add{Path: f.LogPath, Size: f.Size, PartitionValues: map[string]string{}}})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p, m := snap.Protocol, snap.Metadata
	rows := iter.Seq[*deltalog.Action](func(yield func(*deltalog.Action) bool) {
		if !yield(&deltalog.Action{Protocol: &p}) || !yield(&deltalog.Action{Metadata: &m}) {
			return
		}
		for _, a := range adds {
			if !yield(a) {
				return
			}
		}
	})
	key := deltalog.LogDir + strings.TrimSuffix(filepath.Base(deltalog.CommitKey(snap.Version)), ".json") + ".checkpoint.parquet"
	f, err := os.Create(filepath.Join(st.Root(), filepath.FromSlash(key)))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkpointwriter.Write(f, rows); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return key
}

// TestUnsupportedFeatureBetweenPlanningAndStart: a commit between planning and START that
// enables a writer feature this program does not support refuses START: nothing is deleted
// and nothing is committed.
func TestUnsupportedFeatureBetweenPlanningAndStart(t *testing.T) {
	gen, st := replayTable(t)
	cs := newReadCountingStore(st)
	other := gen.LatestVersion() + 1
	cs.beforeLogList = func(n int) {
		if n == 2 {
			writeOther(t, st, other, map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
				"readerFeatures": []string{}, "writerFeatures": []string{"futureFeature"}}})
		}
	}
	_, err := OpenStore(cs).Vacuum(context.Background(), VacuumOptions{Logging: &logged})
	if err == nil || !strings.Contains(err.Error(), "futureFeature") || !strings.Contains(err.Error(), "nothing was deleted") {
		t.Fatalf("got %v; want START refused for futureFeature", err)
	}
	if present, total := staleLeft(t, gen, st); present != total {
		t.Errorf("%d of %d stale files were deleted", total-present, total)
	}
	if _, err := st.Stat(context.Background(), deltalog.CommitKey(other+1)); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("a commit was written after the unsupported protocol: %v", err)
	}
}

// TestVacuumFromSnapshot: a run given a snapshot read before (VacuumOptions.From, as the
// service passes the one its policy read) plans from it advanced by the commits made since,
// reading none of the older ones again; a snapshot of another table is refused.
func TestVacuumFromSnapshot(t *testing.T) {
	ctx := context.Background()
	gen, st := replayTable(t)
	cs := newReadCountingStore(st)
	from, err := deltalog.Load(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	// Another writer removes a live file after the snapshot was read, long enough ago.
	var live string
	gen.Files(tablegen.KindLive, func(k string) {
		if live == "" {
			live = k
		}
	})
	other := gen.LatestVersion() + 1
	writeOther(t, st, other, map[string]any{"remove": map[string]any{"path": live, "deletionTimestamp": time.Now().Add(-30 * 24 * time.Hour).UnixMilli(), "dataChange": true}})
	clear(cs.opens)
	res, err := OpenStore(cs).Vacuum(ctx, VacuumOptions{DryRun: true, From: from})
	if err != nil {
		t.Fatal(err)
	}
	planned := false
	for _, f := range res.Files.MustCollect() {
		planned = planned || f.Path == live
	}
	if !planned || res.Version != other {
		t.Errorf("planned at version %d, %s planned: %v; want the commit after the snapshot seen", res.Version, live, planned)
	}
	for v := int64(tablegen.CheckpointVersion); v <= gen.LatestVersion(); v++ {
		if n := cs.opens[deltalog.CommitKey(v)]; n != 0 {
			t.Errorf("commit %d read again %d times", v, n)
		}
	}
	if cs.opens[deltalog.CommitKey(other)] != 1 {
		t.Errorf("the new commit read %d times, want once", cs.opens[deltalog.CommitKey(other)])
	}

	// A snapshot of another table.
	_, st2 := replayTable(t)
	_, err = OpenStore(st2).Vacuum(ctx, VacuumOptions{DryRun: true, From: from})
	if err == nil || !strings.Contains(err.Error(), "another table") {
		t.Errorf("got %v, want the foreign snapshot refused", err)
	}
}

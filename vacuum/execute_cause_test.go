package vacuum

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

var errBatchRefused = errors.New("the service refused the batch (503)")

// failWhileProbing is a store whose first delete fails while the re-check probes the log for
// the next batch: a probe made while the run deletes (counters' phase) waits for a delete to
// begin, lets it fail, then waits until the run stops and returns what a cancelled request
// returns (a listing, or a Stat where the store lists no directory from a name).
type failWhileProbing struct {
	storage.Store
	lister   storage.DirLister
	counters *Counters
	deleting chan struct{} // closed when the first delete begins
	probing  chan struct{} // closed when a probe during the deletes begins
	onceDel  sync.Once
	onceProb sync.Once
}

// probe is a request for the log made while the run deletes: it waits as said above.
func (s *failWhileProbing) probe(ctx context.Context) error {
	<-s.deleting
	s.onceProb.Do(func() { close(s.probing) })
	<-ctx.Done()
	return ctx.Err()
}

func (s *failWhileProbing) ListDir(ctx context.Context, dir, from string, limit int, fn func(storage.Object) error) (bool, error) {
	if s.counters.Phase() == "deleting" {
		return false, s.probe(ctx)
	}
	return s.lister.ListDir(ctx, dir, from, limit, fn)
}

func (s *failWhileProbing) Stat(ctx context.Context, key string) (storage.Object, error) {
	if s.counters.Phase() == "deleting" && strings.HasPrefix(key, deltalog.LogDir) {
		return storage.Object{}, s.probe(ctx)
	}
	return s.Store.Stat(ctx, key)
}

func (s *failWhileProbing) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	s.onceDel.Do(func() { close(s.deleting) })
	select {
	case <-s.probing:
	case <-ctx.Done():
	}
	return nil, errBatchRefused
}

// TestStopSaysWhy: a run whose batch of deletes fails while the re-check probes the log for
// the next batch stops, and its error says why (the batch's failure), not the words of the
// probe the stop cut short ("context canceled"). Found on the Azure test server (issue 37),
// where a run stopped with "re-checking the log ...: context canceled" and no cause.
func TestStopSaysWhy(t *testing.T) {
	tb := newTable(t, tableSpec{})
	for i := range 40 {
		tb.file(fmt.Sprintf("f%02d.parquet", i), 30*day)
	}
	plan := tb.plan(retain0)
	counters := NewCounters()
	st := &failWhileProbing{Store: tb.store, lister: tb.store, counters: counters, deleting: make(chan struct{}), probing: make(chan struct{})}
	res, err := Execute(context.Background(), st, plan, ExecOptions{BatchSize: 1, Concurrency: 2, Counters: counters})
	if err == nil {
		t.Fatal("the run went on after a batch failed")
	}
	if !errors.Is(err, errBatchRefused) || strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("the run stopped with %q; want the batch's failure as its cause", err)
	}
	if res == nil || res.NumDeletedFiles != 0 || !exists(tb, "f00.parquet") {
		t.Fatalf("result %+v; want nothing deleted", res)
	}
}

// commitOnFirstDelete commits actions (the next version of tb) once its first delete is done:
// a writer committing while the last batch of files is deleted.
type commitOnFirstDelete struct {
	storage.Store
	tb      *table
	actions []any
	once    sync.Once
}

func (s *commitOnFirstDelete) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	res, err := s.Store.Delete(ctx, keys)
	s.once.Do(func() { s.tb.commit(s.actions...) })
	return res, err
}

// TestRecheckBeforeTheDirectories: the log is looked at again before the planned directories
// are removed: a commit made while the last batch of files was deleted, which adds a file
// under a directory the plan would remove (a writer about to write it there), keeps that
// directory, reported with the commit's version (a mutant that skipped this look lived).
func TestRecheckBeforeTheDirectories(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.file("a/stale.parquet", 30*day)
	plan := tb.plan(retain0)
	if len(plan.Dirs) != 1 || plan.Dirs[0].Path != "a" {
		t.Fatalf("planned directories %v, want a", plan.Dirs)
	}
	st := &commitOnFirstDelete{Store: tb.store, tb: tb, actions: []any{add("a/coming.parquet")}}
	res, err := Execute(context.Background(), st, plan, ExecOptions{BatchSize: 1, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumDeletedFiles != 1 || res.NumDeletedDirectories != 0 {
		t.Fatalf("deleted %d files, %d directories; want the file, not the directory", res.NumDeletedFiles, res.NumDeletedDirectories)
	}
	if len(res.Dropped) != 1 || res.Dropped[0].Path != "a" || res.Dropped[0].Version != plan.Version+1 {
		t.Fatalf("dropped %+v; want the directory a, kept for version %d", res.Dropped, plan.Version+1)
	}
}

// refuseDeletes is a store whose delete requests fail whole.
type refuseDeletes struct{ storage.Store }

func (s refuseDeletes) Delete(context.Context, []string) ([]storage.DeleteResult, error) {
	return nil, errBatchRefused
}

// TestFailedLastBatchStopsTheRun: a run whose only batch of files fails whole stops there,
// with the batch's failure as its cause, and does not go on to the directories (a mutant that
// let it go on lived).
func TestFailedLastBatchStopsTheRun(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.file("a/stale.parquet", 30*day)
	plan := tb.plan(retain0)
	res, err := Execute(context.Background(), refuseDeletes{tb.store}, plan, ExecOptions{BatchSize: 10, Concurrency: 1})
	var stopped *StoppedError
	if !errors.As(err, &stopped) || !errors.Is(err, errBatchRefused) {
		t.Fatalf("got %v; want the run stopped by the batch's failure", err)
	}
	if res.NumDeletedFiles != 0 || len(res.Failed) != 1 || !exists(tb, "a/stale.parquet") {
		t.Fatalf("deleted %d, failed %v; want the one file failed and still there", res.NumDeletedFiles, res.Failed)
	}
}

// dirDeletes counts the delete requests for directories (keys ending in '/').
type dirDeletes struct {
	storage.Store
	asked []string
}

func (s *dirDeletes) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	for _, k := range keys {
		if strings.HasSuffix(k, "/") {
			s.asked = append(s.asked, k)
		}
	}
	return s.Store.Delete(ctx, keys)
}

// TestEveryPlannedDirectoryRemoved: every directory the plan empties is asked to be removed,
// children before parents, not only the first (a mutant that stopped after the first
// directory's request lived: the store here, like the object stores, lets an emptied folder
// go by itself, so only the requests tell).
func TestEveryPlannedDirectoryRemoved(t *testing.T) {
	tb := newTable(t, tableSpec{})
	for _, f := range []string{"a/x/stale.parquet", "b/stale.parquet", "c/stale.parquet"} {
		tb.file(f, 30*day)
	}
	plan := tb.plan(retain0)
	st := &dirDeletes{Store: tb.store}
	res, err := Execute(context.Background(), st, plan, ExecOptions{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/x/", "a/", "b/", "c/"}; res.NumDeletedFiles != 3 || !slices.Equal(st.asked, want) {
		t.Fatalf("deleted %d files, directories asked %q; want 3 files and %q", res.NumDeletedFiles, st.asked, want)
	}
}

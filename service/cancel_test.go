package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// gatedStore holds every Delete call until released, so a test can cancel a run in the
// middle of its deletes: the executor has at most 8 batches of 1000 in flight, and sends
// no other once cancelled.
type gatedStore struct {
	*local.Store
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (g *gatedStore) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	g.once.Do(func() { close(g.entered) })
	<-g.release
	return g.Store.Delete(context.WithoutCancel(ctx), keys)
}

// n is more than the 8 batches of 1000 the executor keeps in flight.
const n = 9500

// manyStray adds n untracked, old files to the table at dir: more than one batch of deletes.
func manyStray(t *testing.T, dir string, n int) {
	t.Helper()
	old := t0.Add(-10 * 24 * time.Hour)
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("stray-%05d.parquet", i))
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

func countStray(t *testing.T, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "stray-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// gate makes the server open table a through a gated store.
func gate(t *testing.T, f *fixture) *gatedStore {
	t.Helper()
	st, err := local.New(filepath.Join(f.dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedStore{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
	f.srv.tables.SetOpenHook(func(context.Context, *tables.Table) (*deltavacuum.Table, error) {
		return deltavacuum.OpenStore(g), nil
	})
	return g
}

// lastCommit returns the newest commit of the table at dir.
func lastCommit(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "_delta_log", "*.json"))
	if len(m) == 0 {
		t.Fatal("no commit")
	}
	b, err := os.ReadFile(m[len(m)-1])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCancelMidRun: a run cancelled while its first batch is being deleted finishes that
// batch, sends no other, records VACUUM END as FAILED, and ends FAILED, never COMPLETED.
func TestCancelMidRun(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	a := filepath.Join(f.dir, "a")
	manyStray(t, a, n)
	g := gate(t, f)
	code, body := f.do(t, "POST", "/api/tables/a/runs", "{}")
	if code != 202 {
		t.Fatalf("start: %d %v", code, body)
	}
	id := body["id"].(string)
	<-g.entered
	if code, _ := f.do(t, "POST", "/api/tables/a/runs", "{}"); code != 409 {
		t.Errorf("a second run while one is in progress: %d, want 409", code)
	}
	_, tables := f.do(t, "GET", "/api/tables", "")
	if got := tables["tables"].([]any)[0].(map[string]any)["running"]; got != id {
		t.Errorf("the table is held by %v, want %s", got, id)
	}
	if code, body := f.do(t, "POST", "/api/runs/"+id+"/cancel", "{}"); code != 202 {
		t.Fatalf("cancel: %d %v", code, body)
	}
	close(g.release)
	f.srv.Wait()
	_, run := f.do(t, "GET", "/api/runs/"+id, "")
	if run["status"] != "FAILED" || !strings.Contains(run["error"].(string), "cancelled through the API") {
		t.Fatalf("got %v, want FAILED, cancelled", run)
	}
	if left := countStray(t, a); left == 0 || left == n {
		t.Errorf("%d of %d files left: want the batches in flight deleted and the rest kept", left, n)
	}
	if c := lastCommit(t, a); !strings.Contains(c, "VACUUM END") || !strings.Contains(c, "FAILED") {
		t.Errorf("the last commit is not a FAILED VACUUM END: %s", c)
	}
	_, m := f.do(t, "GET", "/metrics", "")
	if !strings.Contains(m["text"].(string), `deltavacuum_serve_runs_total{status="FAILED",table="a",trigger="api"} 1`) {
		t.Error("the cancelled run is not counted FAILED")
	}
}

// TestShutdownMidRun: shutdown lets the batch in progress finish, records the run FAILED
// (VACUUM END FAILED), and returns once it has.
func TestShutdownMidRun(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	a := filepath.Join(f.dir, "a")
	manyStray(t, a, n)
	g := gate(t, f)
	code, body := f.do(t, "POST", "/api/tables/a/runs", "{}")
	if code != 202 {
		t.Fatalf("start: %d %v", code, body)
	}
	id := body["id"].(string)
	<-g.entered
	done := make(chan error, 1)
	go func() { done <- f.srv.Shutdown(context.Background()) }()
	select {
	case err := <-done:
		t.Fatalf("shutdown returned (%v) while a batch was in progress", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The run's record says FAILED; the service keeps only that it asked the run to stop.
	_, run := f.do(t, "GET", "/api/runs/"+id, "")
	if run["status"] != "FAILED" || run["state"] != "failed" || !strings.Contains(run["error"].(string), "shutting down") {
		t.Errorf("got %v, want FAILED, shutting down", run)
	}
	if sr, err := f.db.Run(context.Background(), id); err != nil || !strings.Contains(sr.Cancelled, "shutting down") || sr.RecordID != id {
		t.Errorf("the state database keeps %+v (%v), want the cancel and the link to the record", sr, err)
	}
	if left := countStray(t, a); left == 0 || left == n {
		t.Errorf("%d of %d files left: want the batches in flight deleted and the rest kept", left, n)
	}
	if c := lastCommit(t, a); !strings.Contains(c, "VACUUM END") || !strings.Contains(c, "FAILED") {
		t.Errorf("the last commit is not a FAILED VACUUM END: %s", c)
	}
}

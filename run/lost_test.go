package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// beatStore fails the writes of heartbeats as fails says, one entry a write, once the run's
// first delete has called onDelete (the run is then in progress, its heartbeat beating).
type beatStore struct {
	*mem.Store
	mu       sync.Mutex
	fails    []bool
	once     sync.Once
	onDelete func()
}

func (s *beatStore) Put(ctx context.Context, key string, data []byte) error {
	if strings.HasSuffix(key, beatSuffix) {
		s.mu.Lock()
		fail := len(s.fails) > 0 && s.fails[0]
		if len(s.fails) > 0 {
			s.fails = s.fails[1:]
		}
		s.mu.Unlock()
		if fail {
			return errors.New("503 SlowDown")
		}
	}
	return s.Store.Put(ctx, key, data)
}

func (s *beatStore) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	s.once.Do(s.onDelete)
	return s.Store.Delete(ctx, keys)
}

// TestHeartbeatLostStopsTheRun: a run whose heartbeat cannot be renewed twice in a row stops
// (FAILED, ErrHeartbeatLost): another process would soon take its record for stale and run
// beside it. A single failed beat, renewed at the next, does not stop it. The beats are
// ticked by the test (a send returns once the beat loop has taken the tick, so the beat
// before it has been written or failed).
func TestHeartbeatLostStopsTheRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		beats []bool // true: the beat fails
		lost  bool
	}{
		{"two beats in a row fail", []bool{true, true}, true},
		{"one beat fails, the next is written", []bool{true, false, true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store := &beatStore{Store: mem.New("s3://bucket/t")}
			writeEmptyTable(t, store)
			old := time.Now().Add(-48 * time.Hour)
			for _, k := range []string{"a.parquet", "b.parquet", "c.parquet"} {
				store.PutAt(k, []byte("x"), old)
			}
			ticks := make(chan time.Time)
			store.onDelete = func() {
				store.mu.Lock()
				store.fails = tc.beats
				store.mu.Unlock()
				for range tc.beats {
					ticks <- time.Now()
				}
				ticks <- time.Now() // taken once the last beat above is done
			}
			zero := 0.0
			res, err := Vacuum(ctx, store, Request{
				Options:    vacuum.Options{Now: time.Now(), RetainHours: &zero, DisableRetentionCheck: true},
				Exec:       vacuum.ExecOptions{BatchSize: 1, Concurrency: 1},
				Heartbeats: func() (<-chan time.Time, func()) { return ticks, func() {} },
			})
			if got := errors.Is(err, ErrLockLost); got != tc.lost {
				t.Fatalf("stopped for a lost heartbeat: %v, want %v (error: %v)", got, tc.lost, err)
			}
			want := vacuum.StatusCompleted
			if tc.lost {
				want = vacuum.StatusFailed
			}
			if res == nil || res.Status != want {
				t.Fatalf("result %+v, want status %s", res, want)
			}
			rec, err := ReadRecord(ctx, store, res.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status != want {
				t.Errorf("run record says %s, want %s", rec.Status, want)
			}
		})
	}
}

// forcingStore runs unlock --force on itself when the delete numbered at is called (1 for the
// first batch), and counts the deletes of data files.
type forcingStore struct {
	*mem.Store
	at      int
	mu      sync.Mutex
	deletes int
	files   int
}

func (s *forcingStore) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	data := !strings.HasPrefix(keys[0], "_deltavacuum/")
	if data {
		s.mu.Lock()
		s.deletes++
		n := s.deletes
		s.files += len(keys)
		s.mu.Unlock()
		res, err := s.Store.Delete(ctx, keys)
		if n == s.at {
			if _, err := Unlock(ctx, s.Store, UnlockOptions{Force: true}); err != nil {
				return nil, err
			}
		}
		return res, err
	}
	return s.Store.Delete(ctx, keys)
}

// TestForcedUnlockStopsTheRun: unlock --force while a run deletes stops it before its next
// batch (each batch confirms the ticket first: not at the next heartbeat, a minute on); forced
// after the last batch, the run does not report success. Either way the run ends FAILED, in
// its result, its record and its VACUUM END, and says why.
func TestForcedUnlockStopsTheRun(t *testing.T) {
	for _, tc := range []struct {
		name        string
		at, batches int // unlock --force during delete number at, of batches
	}{
		{"during the first of ten batches", 1, 10},
		{"during the last batch", 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store := &forcingStore{Store: mem.New("mem://t"), at: tc.at}
			writeEmptyTable(t, store)
			old := time.Now().Add(-48 * time.Hour)
			for i := range tc.batches * 5 {
				store.PutAt(fmt.Sprintf("f%03d.parquet", i), []byte("x"), old)
			}
			zero := 0.0
			res, err := Vacuum(ctx, store, Request{
				Options:    vacuum.Options{Now: time.Now(), RetainHours: &zero, DisableRetentionCheck: true},
				Exec:       vacuum.ExecOptions{BatchSize: 5, Concurrency: 1},
				Heartbeats: func() (<-chan time.Time, func()) { return nil, func() {} },
			})
			if !errors.Is(err, ErrLockLost) || !strings.Contains(err.Error(), "removed by another process") {
				t.Fatalf("error %v, want the lost lock named", err)
			}
			if store.deletes != tc.at || store.files != tc.at*5 {
				t.Errorf("%d batches (%d files) deleted, want %d: the run went on after losing the table", store.deletes, store.files, tc.at)
			}
			if res == nil || res.Status != vacuum.StatusFailed {
				t.Fatalf("result %+v, want FAILED", res)
			}
			rec, err := ReadRecord(ctx, store, res.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status != vacuum.StatusFailed {
				t.Errorf("run record says %s, want FAILED", rec.Status)
			}
			snap, err := deltalog.Load(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			b, err := storage.ReadAll(ctx, store, deltalog.CommitKey(snap.Version))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"VACUUM END"`) || !strings.Contains(string(b), `"FAILED"`) {
				t.Errorf("the last commit is not VACUUM END FAILED: %s", b)
			}
		})
	}
}

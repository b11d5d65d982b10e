package bench

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/bench/tablegen"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// walkRecorder records every directory a store's Walk lists (the prefix given and each
// directory it descends into).
type walkRecorder struct {
	storage.Store
	mu     sync.Mutex
	listed []string
}

func (w *walkRecorder) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	w.mu.Lock()
	w.listed = append(w.listed, prefix)
	w.mu.Unlock()
	return w.Store.Walk(ctx, prefix, func(o storage.Object) error {
		err := fn(o)
		if o.IsDir && err == nil {
			w.mu.Lock()
			w.listed = append(w.listed, o.Key)
			w.mu.Unlock()
		}
		return err
	})
}

// TestLiteListsOnlyTheLog checks the LITE target: a LITE vacuum (plan and execution) lists
// nothing outside _delta_log/, while FULL lists every directory.
func TestLiteListsOnlyTheLog(t *testing.T) {
	ctx := context.Background()
	tb, err := tablegen.New(tablegen.Spec{Live: 2000, Tombstones: 300, Untracked: 100, Partitions: 10, DVFraction: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "table")
	if err := tb.WriteLocal(ctx, dir, nil); err != nil {
		t.Fatal(err)
	}
	l, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	zero := 0.0
	for _, mode := range []vacuum.Mode{vacuum.ModeLite, vacuum.ModeFull} {
		rec := &walkRecorder{Store: l}
		pl, err := vacuum.NewPlanner(ctx, rec, vacuum.Options{Mode: mode, RetainHours: &zero, DisableRetentionCheck: true, Now: time.Now().Add(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := pl.Plan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := vacuum.Execute(ctx, rec, plan, vacuum.ExecOptions{}); err != nil {
			t.Fatal(err)
		}
		outside := 0
		for _, p := range rec.listed {
			if !strings.HasPrefix(p, "_delta_log/") {
				outside++
			}
		}
		t.Logf("%s: %d files deleted, %d directories listed, %d outside _delta_log/", mode, plan.NumFilesToDelete, len(rec.listed), outside)
		if mode == vacuum.ModeLite && outside != 0 {
			t.Errorf("LITE listed %d directories outside _delta_log/: %v", outside, rec.listed)
		}
		if mode == vacuum.ModeFull && outside < tb.Partitions+1 {
			t.Errorf("FULL listed %d directories outside _delta_log/, want at least %d", outside, tb.Partitions+1)
		}
		if err := tb.Reset(ctx, dir, true); err != nil {
			t.Fatal(err)
		}
	}
}

package vacuum

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
)

// brokenListing fails the listing part-way, as an unreadable directory does.
type brokenListing struct{ storage.Store }

func (b brokenListing) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	if strings.HasPrefix(prefix, "_delta_log/") {
		return b.Store.Walk(ctx, prefix, fn)
	}
	n := 0
	return b.Store.Walk(ctx, prefix, func(o storage.Object) error {
		if n++; n > 2 {
			return errors.New("open p=2: permission denied")
		}
		return fn(o)
	})
}

func TestUnreadableDirectoryStopsThePlan(t *testing.T) {
	tb := newTable(t, tableSpec{})
	for _, k := range []string{"a.parquet", "b.parquet", "p=2/c.parquet"} {
		tb.file(k, 30*day)
	}
	p, err := NewPlanner(context.Background(), brokenListing{tb.store}, Options{RetainHours: hours(0), DisableRetentionCheck: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.Plan(context.Background())
	if err == nil || plan != nil || !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), "nothing was deleted") {
		t.Errorf("got plan %v, error %v; want no plan and the listing error", plan, err)
	}
}

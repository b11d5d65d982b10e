package run

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// walkerFunc is an inventory that is never read.
type walkerFunc func()

func (walkerFunc) Walk(context.Context, string, func(storage.Object) error) error { return nil }

// TestValidate: every request wrong whatever the table is refused by one check, with the field
// named and the typed errors (ErrInvalidRequest, vacuum.ErrInvalidOptions and the reason), and
// before the table is read or locked: the store is not touched.
func TestValidate(t *testing.T) {
	h := func(x float64) *float64 { return &x }
	v := func(x int64) *int64 { return &x }
	for _, tc := range []struct {
		name   string
		req    Request
		field  string
		reason error
	}{
		{"NaN hours", Request{Options: vacuum.Options{RetainHours: h(math.NaN())}}, "retainHours", vacuum.ErrRetentionNotANumber},
		{"negative hours", Request{Options: vacuum.Options{RetainHours: h(-1)}}, "retainHours", vacuum.ErrNegativeRetention},
		{"infinite hours", Request{Options: vacuum.Options{RetainHours: h(math.Inf(1))}}, "retainHours", vacuum.ErrRetentionTooLarge},
		{"unknown mode", Request{Options: vacuum.Options{Mode: "FAST"}}, "mode", nil},
		{"negative version", Request{Options: vacuum.Options{Version: v(-1)}}, "version", nil},
		{"shard without version", Request{Options: vacuum.Options{Shard: &vacuum.Shard{Index: 0, Count: 2}}}, "shard", vacuum.ErrShardWithoutVersion},
		{"shard out of range", Request{Options: vacuum.Options{Shard: &vacuum.Shard{Index: 2, Count: 2}, Version: v(1)}}, "shard", nil},
		{"inventory with LITE", Request{Options: vacuum.Options{Mode: vacuum.ModeLite, Inventory: walkerFunc(nil)}}, "inventory", vacuum.ErrInventoryWithLite},
		{"trash outside", Request{Trash: "../x"}, "trash", vacuum.ErrTrashFolder},
		{"trash without record", Request{Trash: "_t", NoRunRecord: true}, "trash", nil},
		{"bad digest", Request{ExpectPlan: "nope"}, "expectPlan", nil},
		{"lock on a dry run", Request{DryRun: true, Lock: &Lock{}}, "lock", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.Validate()
			var re *RequestError
			if !errors.As(err, &re) || re.Field != tc.field || !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("got %v, want a RequestError of %s", err, tc.field)
			}
			if tc.reason != nil && !errors.Is(err, tc.reason) {
				t.Errorf("%v does not match %v", err, tc.reason)
			}
			if tc.field == "lock" {
				return // a lock of another store: Vacuum's own refusal is tested in TestLockGiven
			}
			store := mem.New("mem://t")
			if _, err := Vacuum(context.Background(), store, tc.req); !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), "mem://t") {
				t.Errorf("Vacuum: %v", err)
			}
			if len(store.Keys()) != 0 {
				t.Errorf("a refused request wrote %v", store.Keys())
			}
		})
	}
	if err := (&Request{Options: vacuum.Options{RetainHours: h(0.4), Mode: vacuum.ModeFull}, Trash: "_t"}).Validate(); err != nil {
		t.Errorf("a valid request: %v", err)
	}
}

// TestLockGiven: a lock the caller took is used only for the run it was taken for (the table,
// the shard, a run record), and is released when refused.
func TestLockGiven(t *testing.T) {
	ctx := context.Background()
	store, other := mem.New("mem://t"), mem.New("mem://other")
	lk, err := TakeLock(ctx, other, Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Vacuum(ctx, store, Request{Lock: lk}); err == nil || !strings.Contains(err.Error(), "mem://other") {
		t.Fatalf("a lock of another table: %v", err)
	}
	if _, err := Acquire(ctx, other, LockOptions{Purpose: PurposeVacuum}); err != nil {
		t.Errorf("the refused lock was not released: %v", err)
	}
}

package run

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
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
		{"a run id that is none", Request{RunID: "../../x"}, "runId", nil},
		{"a run id without a record", Request{RunID: "20261201T000000Z-0000000a", NoRunRecord: true}, "runId", nil},
		{"an unknown purpose", Request{Purpose: "reindex"}, "purpose", nil},
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

// TestRefusalWritesNothing: a refused run changes nothing in the table's folder, on local disk
// where a ticket would make folders: not a Delta table at all, a retention shorter than the
// table's with the safety check on, an unsupported feature, a broken log, --trash onto a
// partition folder, a sharded run's version beyond the log, a table another process holds.
// Each is refused before anything is written (the tree, its sizes and times, is as it was).
func TestRefusalWritesNothing(t *testing.T) {
	ctx := context.Background()
	v := func(x int64) *int64 { return &x }
	meta := func(partitions []string, conf map[string]string) map[string]any {
		return map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[{"name":"p","type":"string","nullable":true,"metadata":{}}]}`, "partitionColumns": partitions, "configuration": conf}}
	}
	proto := map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}}
	one := 1.0
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, store storage.Store, dir string)
		req   Request
		want  string
	}{
		{"not a Delta table", func(t *testing.T, store storage.Store, dir string) {
			put(t, store, "part-0.parquet", "x")
		}, Request{}, "not a Delta table"},
		{"a retention shorter than the table's", func(t *testing.T, store storage.Store, dir string) {
			commit(t, store, 0, proto, meta(nil, map[string]string{}))
		}, Request{Options: vacuum.Options{RetainHours: &one}}, "retentionDurationCheck"},
		{"an unsupported feature", func(t *testing.T, store storage.Store, dir string) {
			commit(t, store, 0, map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
				"readerFeatures": []string{}, "writerFeatures": []string{"aFeatureOf2030"}}}, meta(nil, map[string]string{}))
		}, Request{}, "aFeatureOf2030"},
		{"a gap in the log", func(t *testing.T, store storage.Store, dir string) {
			commit(t, store, 0, proto, meta(nil, map[string]string{}))
			commit(t, store, 2, map[string]any{"commitInfo": map[string]any{}})
		}, Request{}, "1"},
		{"--trash onto a partition folder", func(t *testing.T, store storage.Store, dir string) {
			commit(t, store, 0, proto, meta([]string{"_t"}, map[string]string{}))
		}, Request{Trash: "_t=1"}, "partition column"},
		{"a shard's version beyond the log", func(t *testing.T, store storage.Store, dir string) {
			commit(t, store, 0, proto, meta(nil, map[string]string{}))
		}, Request{Options: vacuum.Options{Shard: &vacuum.Shard{Index: 0, Count: 2}, Version: v(5)}}, "does not exist"},
		{"a table another process holds", func(t *testing.T, store storage.Store, dir string) {
			commit(t, store, 0, proto, meta(nil, map[string]string{}))
			plantLive(t, store, LockOptions{Purpose: PurposeUndo})
		}, Request{}, "held by"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			store, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			tc.setup(t, store, dir)
			before := tree(t, dir)
			_, err = Vacuum(ctx, store, tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a refusal saying %q", err, tc.want)
			}
			if after := tree(t, dir); !slices.Equal(before, after) {
				t.Errorf("the refusal changed the folder:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func commit(t *testing.T, store storage.Store, v int64, actions ...any) {
	t.Helper()
	if err := deltalog.WriteCommit(context.Background(), store, v, actions); err != nil {
		t.Fatal(err)
	}
}

// tree is every entry below dir with its size and modification time.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %d", p, fi.Size(), fi.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

package vacuum

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// pagedLister is a store whose listing of a directory from a name holds at most page
// entries a request, as a service's page does.
type pagedLister struct {
	storage.Store
	lister storage.DirLister
	page   int
}

func (p pagedLister) ListDir(ctx context.Context, dir, from string, limit int, fn func(storage.Object) error) (bool, error) {
	if limit <= 0 || limit > p.page {
		limit = p.page
	}
	return p.lister.ListDir(ctx, dir, from, limit, fn)
}

// TestRecheckListingAcrossPages: the re-check's listing of the log, a few names a page,
// reads every commit made since the last look whatever the page boundaries (checksums and
// checkpoints among them), and stops the run for a version under another spelling the log
// reader takes (fewer leading zeros), for a commit past a missing version, and for a page
// of the next version's other files that does not reach its commit; the 21-digit spelling,
// which sorts before, on the first probe.
func TestRecheckListingAcrossPages(t *testing.T) {
	commit := func(v int64) string { return deltalog.CommitKey(v) }
	crc := func(v int64) string { return fmt.Sprintf("_delta_log/%020d.crc", v) }
	for _, tc := range []struct {
		name string
		keys []string
		next int64  // the version to read next after the probe
		err  string // in the error, when the run must stop
	}{
		{"commits and checksums", []string{crc(1), commit(1), crc(2), commit(2), crc(3), commit(3), commit(4), crc(5), commit(5)}, 6, ""},
		{"then the other files", []string{commit(1), commit(2), commit(3), "_delta_log/_last_checkpoint", "_delta_log/_sidecars/a.parquet"}, 4, ""},
		{"unpadded after a page", []string{commit(1), commit(2), commit(3), "_delta_log/4.json"}, 3, "4.json"},
		{"three digits", []string{crc(1), commit(1), crc(2), commit(2), "_delta_log/003.json"}, 3, "003.json"},
		{"a gap", []string{commit(1), commit(2), commit(4)}, 3, "version 4 is committed but version 3 is not"},
		{"a gap after a page", []string{crc(1), commit(1), crc(2), commit(2), crc(4), commit(4)}, 3, "version 4 is committed but version 3 is not"},
		{"21 digits", []string{commit(1), "_delta_log/000000000000000000002.json"}, 2, "000000000000000000002.json"},
		{"a page of the next version's checkpoint", []string{
			"_delta_log/00000000000000000001.checkpoint.0000000001.0000000003.parquet",
			"_delta_log/00000000000000000001.checkpoint.0000000002.0000000003.parquet",
			"_delta_log/00000000000000000001.checkpoint.0000000003.0000000003.parquet", commit(1)}, 1, "more files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTable(t, tableSpec{})
			tb.file("a.parquet", 30*day)
			plan := tb.plan(retain0)
			if plan.Version != 0 {
				t.Fatalf("planned version %d, want 0", plan.Version)
			}
			for _, k := range tc.keys {
				if err := tb.store.Put(context.Background(), k, []byte(`{"commitInfo":{"operation":"WRITE"}}`+"\n")); err != nil {
					t.Fatal(err)
				}
			}
			tl, err := newTail(pagedLister{Store: tb.store, lister: tb.store, page: 2}, plan)
			if err != nil {
				t.Fatal(err)
			}
			err = tl.probe(context.Background())
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("probe: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("probe: %v; want an error naming %q", err, tc.err)
			}
			if tl.next != tc.next || tl.statProbes {
				t.Errorf("next version %d (stat probes %v), want %d by listing", tl.next, tl.statProbes, tc.next)
			}
		})
	}
}

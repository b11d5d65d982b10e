package vacuum

import (
	"context"
	"fmt"
	"slices"
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
// of the next version's other files, or of odd names, that does not reach its commit; and for the 21-digit
// spelling, which sorts before the 20-digit names, where the listing starts.
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
		{"21 digits", []string{commit(1), "_delta_log/000000000000000000002.json"}, 1, "000000000000000000002.json"},
		// A page that ends on a name led by a 9 (the last digit) is followed like any other: the
		// commit under fewer leading zeros behind it is not left unseen (a boundary mutant of
		// probeListing lived without this case).
		{"a page ending on a name led by a nine", []string{"_delta_log/9.crc", "_delta_log/99.crc", "_delta_log/999.json"}, 1, "more files"},
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

// pagedCounter is a pagedLister that counts its listings and the Stats of log files.
type pagedCounter struct {
	pagedLister
	probe *probeCounter
}

func (p pagedCounter) ListDir(ctx context.Context, dir, from string, limit int, fn func(storage.Object) error) (bool, error) {
	return p.probe.ListDir(ctx, dir, from, limit, fn)
}

func (p pagedCounter) Stat(ctx context.Context, key string) (storage.Object, error) {
	return p.probe.Stat(ctx, key)
}

// TestRecheckWideGapBetweenSpellings (issue 37): at version 10, the files of versions 2 to 9
// sort between the 21-digit and the 20-digit names of version 11; when they fill the first
// page of the listing from the 21-digit name, the re-check lists again from the 20-digit name
// and asks for the 21-digit name of the next version (a HEAD), and the later batches do that
// from the start: a commit of the next version under its 21-digit name still stops the run
// before its next batch, and one under its 20-digit name is read (the file it adds is kept).
func TestRecheckWideGapBetweenSpellings(t *testing.T) {
	for _, key := range []string{fmt.Sprintf("_delta_log/%021d.json", 11), deltalog.CommitKey(11)} {
		t.Run(storage.Base(key), func(t *testing.T) {
			tb := newTable(t, tableSpec{})
			for tb.version < 10 {
				tb.commit(map[string]any{"commitInfo": map[string]any{"operation": "WRITE"}})
			}
			for i := range 20 {
				tb.file(fmt.Sprintf("f%02d.parquet", i), 30*day)
			}
			plan := tb.plan(retain0)
			if plan.Version != 10 {
				t.Fatalf("planned version %d, want 10", plan.Version)
			}
			c := &probeCounter{Store: tb.store, lister: pagedLister{Store: tb.store, lister: tb.store, page: 3}}
			w := &spellingWriter{Store: pagedCounter{pagedLister: pagedLister{Store: tb.store, lister: tb.store, page: 3}, probe: c}, key: key}
			st := listingWriter{DirLister: c, spellingWriter: w}
			res, err := Execute(context.Background(), st, plan, ExecOptions{BatchSize: 2, Concurrency: 1})
			if key != deltalog.CommitKey(11) {
				if err == nil || w.deletes != 1 || res == nil || res.NumDeletedFiles != 2 || !strings.Contains(err.Error(), storage.Base(key)) {
					t.Fatalf("after the commit %s: %d delete requests, %v; want the run stopped after its first batch, naming it", key, w.deletes, err)
				}
				return
			}
			if err != nil || res.NumDeletedFiles != 19 || !exists(tb, "f19.parquet") {
				t.Fatalf("after the commit %s: %v; want every file deleted but f19.parquet, which it adds", key, err)
			}
			// The first look's first page reached 000000000000000000011.json (it sorts before
			// 00000000000000000002.json); each later batch lists from the 20-digit name of
			// version 12 and asks for its 21-digit name.
			if want := slices.Repeat([]string{"_delta_log/000000000000000000012.json"}, 9); !slices.Equal(c.stats, want) || c.lists != 2+9 {
				t.Errorf("%d listings, Stats of the log %q; want 11 listings and %q", c.lists, c.stats, want)
			}
		})
	}
}

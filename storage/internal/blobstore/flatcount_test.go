package blobstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// table is the names of a Delta table laid out as writers lay it: commits in _delta_log/,
// Spark's file names in partition folders (one level, or date/hour).
type table struct {
	commits int    // _delta_log/<20 digits>.json
	folders int    // partition folders (date=…), or dates of hours folders
	hours   int    // when > 0: date=…/hour=HH/ folders, hours per date
	files   int    // files per (leaf) folder
	extra   string // another top-level folder: NAME:COUNT (a hidden folder of COUNT files)
}

func (tb table) names() (log, data []string) {
	for v := range tb.commits {
		log = append(log, fmt.Sprintf("_delta_log/%020d.json", v))
	}
	leaf := func(dir string) {
		for f := range tb.files {
			data = append(data, fmt.Sprintf("%spart-%05d-6f1b2a9c-%04d.c000.snappy.parquet", dir, f, f))
		}
	}
	for d := range tb.folders {
		date := fmt.Sprintf("date=%s/", time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d).Format(time.DateOnly))
		if tb.hours == 0 {
			leaf(date)
			continue
		}
		for h := range tb.hours {
			leaf(fmt.Sprintf("%shour=%02d/", date, h))
		}
	}
	if name, n, ok := strings.Cut(tb.extra, ":"); ok {
		var count int
		fmt.Sscan(n, &count)
		for i := range count {
			log = append(log, fmt.Sprintf("%s/%06d", name, i))
		}
	}
	return log, data
}

// hidden is the planner's rule, near enough: a folder whose name starts with '_' or '.'.
func hidden(dir string) bool {
	n := storage.Base(dir)
	return strings.HasPrefix(n, "_") || strings.HasPrefix(n, ".")
}

func ceil(a, b int) int { return (a + b - 1) / b }

// TestFlatWalkListsAtTheFloor: the list requests of a walk that skips the hidden folders are
// the pages of the names it reports, ceil(names / page size), plus one page of the first
// level when the listing is longer than splitAfter pages, plus one page for each hidden folder the
// listing meets at a page boundary (a listing started again after it); the hidden folders'
// names are not listed past that page. Folder by folder it was one request per folder.
func TestFlatWalkListsAtTheFloor(t *testing.T) {
	for _, tc := range []struct {
		name string
		tb   table
		page int
		// flat is the pages of the flat listing, at concurrency 1.
		flat int
	}{
		// 6 k files in 100 folders, a short log: the log shares the first page.
		{"100 folders", table{commits: 20, folders: 100, files: 60}, 1000, ceil(20+6000, 1000)},
		// A log longer than a page: one page of it, then the listing starts after it.
		{"100 folders, long log", table{commits: 100_000, folders: 100, files: 60}, 1000, 1 + ceil(6000, 1000)},
		{"10 000 folders", table{commits: 10, folders: 10_000, files: 3}, 1000, ceil(10+30_000, 1000)},
		{"date/hour", table{commits: 10, folders: 30, hours: 24, files: 2}, 100, ceil(10+30*24*2, 100)},
		{"one page", table{commits: 3, folders: 5, files: 2}, 1000, 1},
		// .spark-staging/ sorts before _delta_log/: met at the first page boundary too.
		{"hidden folder first", table{commits: 500, folders: 10, files: 40, extra: ".spark-staging:250"}, 100, 1 + 1 + ceil(400, 100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, data := tc.tb.names()
			b := newListBackend(OrderBytes, tc.page, append(log, data...)...)
			s := New(b, Config{Concurrency: 1})
			got, err := walkAll(t, s, "", hidden, nil)
			if err != nil {
				t.Fatal(err)
			}
			delimited := 0
			if tc.flat > splitAfter {
				delimited = 1
			}
			if b.lists != tc.flat || b.delimited != delimited || b.probes != 0 {
				t.Errorf("%d flat pages, %d delimited, %d probes; want %d, %d, 0", b.lists, b.delimited, b.probes, tc.flat, delimited)
			}
			// What was reported: the data, its folders, the hidden folders (not their contents).
			files := 0
			for _, g := range got {
				if !strings.Contains(g, "/ ") {
					files++
				}
			}
			if files != len(data) {
				t.Errorf("reported %d files, want %d", files, len(data))
			}
			// The same walk folder by folder: one listing per folder, each of its pages.
			old := newListBackend(OrderBytes, tc.page, append(log, data...)...)
			want := theWalk(t, old, "", "", hidden, nil)
			if len(got) != len(want) {
				t.Errorf("flat walk reported %d entries, folder by folder %d", len(got), len(want))
			}
			t.Logf("flat: %d list requests; folder by folder: %d", b.lists+b.delimited, old.delimited)
		})
	}
}

// TestFlatWalkSplitsLongListings: at concurrency 16 a long listing is split at first-level
// names into ranges listed in parallel; each range costs at most one page more than the
// listing in sequence (its last page is short), and there are no more ranges than one per
// minPagesPerRange pages: the requests stay within 1 + 1/minPagesPerRange of the floor,
// plus the first level's page.
func TestFlatWalkSplitsLongListings(t *testing.T) {
	for _, tc := range []struct {
		name string
		tb   table
		page int
	}{
		{"60 k files in 100 folders", table{commits: 100_000, folders: 100, files: 600}, 1000},
		{"10 000 folders", table{commits: 10, folders: 10_000, files: 3}, 100},
		{"date/hour", table{commits: 10, folders: 100, hours: 24, files: 5}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, data := tc.tb.names()
			b := newListBackend(OrderBytes, tc.page, append(log, data...)...)
			b.delay = 200 * time.Microsecond // a request's round trip: the first range is still listing when it splits
			s := New(b, Config{Concurrency: 16})
			got, err := walkAll(t, s, "", hidden, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := theWalk(t, newListBackend(OrderBytes, tc.page, append(log, data...)...), "", "", hidden, nil)
			if len(got) != len(want) {
				t.Fatalf("reported %d entries, want %d", len(got), len(want))
			}
			floor := ceil(len(data), tc.page)
			ranges := 0
			for _, f := range b.froms {
				if strings.HasSuffix(f, "/") {
					ranges++
				}
			}
			limit := floor + 1 + 1 + min(15, floor/minPagesPerRange) // + the log's first page + the first level + a page a range
			if b.lists+b.delimited > limit || b.probes != 0 {
				t.Errorf("%d flat pages + %d delimited + %d probes (%d ranges), want at most %d in all (floor %d)", b.lists, b.delimited, b.probes, ranges, limit, floor)
			}
			t.Logf("floor %d: %d flat pages, %d delimited, %d extra ranges", floor, b.lists, b.delimited, ranges)
		})
	}
}

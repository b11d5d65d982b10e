package blobstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestFlatWalkJumpsOnlyFromInsideASkippedFolder: a directory entity without a trailing '/'
// (an Azure folder blob, hdi_isfolder, in a flat namespace) sorts before the names it is a
// prefix of with a byte below '/' after it ("_delta_log-x", "_delta_log.json", and in the
// log "00000000000000000005.json" after a folder "00000000000000000005"). A page that ends
// on such an entity must not start the listing again after the folder's contents: that would
// leave those siblings out of the walk (a commit out of the log's listing).
func TestFlatWalkJumpsOnlyFromInsideASkippedFolder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prefix string
		names  []string
	}{
		{"table root", "", []string{"dir:_delta_log", "_delta_log-x", "_delta_log.json", "_delta_log/00000000000000000000.json",
			"_delta_log/00000000000000000001.json", "a.parquet"}},
		{"log", "_delta_log/", []string{"_delta_log/00000000000000000004.json", "dir:_delta_log/00000000000000000005",
			"_delta_log/00000000000000000005.json", "_delta_log/00000000000000000005/x", "_delta_log/00000000000000000006.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for pageSize := 1; pageSize <= 4; pageSize++ {
				for _, order := range []Order{OrderBytes, OrderUTF16} {
					b := newListBackend(order, pageSize, tc.names...)
					b.claimed = OrderBytes | OrderUTF16 // an Azure flat namespace
					pruned := func(d string) bool {
						return tc.prefix != "" || strings.HasPrefix(d, "_") // the log: every folder
					}
					want := theWalk(t, b, "", tc.prefix, pruned, nil)
					for _, conc := range []int{1, 4} {
						got, err := walkAll(t, New(b, Config{Concurrency: conc}), tc.prefix, pruned, nil)
						if err != nil {
							t.Fatalf("page %d, order %b, conc %d: %v", pageSize, order, conc, err)
						}
						if diff := cmp.Diff(want, got); diff != "" {
							t.Fatalf("page %d, order %b, conc %d: walk (-delimited +flat):\n%s", pageSize, order, conc, diff)
						}
					}
				}
			}
		})
	}
}

// TestFlatWalkSplitsAtABoundaryTheFirstRangeIsListingPast: the first range is split while a
// page of it is on its way (the split sees the names listed before that page); a boundary
// inside that page must end the first range there, not leave the page's names past it to be
// listed twice, by both ranges (a file reported twice: the walk failed on its own order).
func TestFlatWalkSplitsAtABoundaryTheFirstRangeIsListingPast(t *testing.T) {
	var names []string
	for i := range 8 * 10 {
		names = append(names, fmt.Sprintf("a/%04d", i))
	}
	names = append(names, "b")
	for i := range 30 {
		names = append(names, fmt.Sprintf("c/%02d", i))
	}
	b := newListBackend(OrderBytes, 10, names...)
	b.delay = 20 * time.Millisecond // the ninth page is still coming when the first level is read
	want := theWalk(t, b, "", "", nil, nil)
	got, err := walkAll(t, New(b, Config{Concurrency: 2}), "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("walk (-delimited +flat):\n%s", diff)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.froms) == 0 {
		t.Fatalf("the listing was not split")
	}
}

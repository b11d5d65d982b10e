package blobstore

import (
	"strings"
	"testing"

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

package vacuum

import (
	"strings"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// HiddenIn reports whether VACUUM leaves key alone as hidden in the table of snap (the rule
// the planner uses: a component starting with '_' or '.', but not _change_data*,
// _delta_index* or a partition directory). A folder the tool keeps its own files in (run
// records, a trash) must be hidden, or a VACUUM would delete them as untracked.
func HiddenIn(snap *deltalog.Snapshot, key string) bool {
	formats, _ := snap.Property(deltalog.PropUniversalFormats)
	h := hiddenRule{partitionColumns: snap.PartitionColumns(), icebergMetadata: containsFold(strings.Split(formats, ","), "iceberg")}
	return h.hiddenPath(key)
}

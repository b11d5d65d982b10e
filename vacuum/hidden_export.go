package vacuum

import (
	"strings"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// hiddenRuleOf is the hidden-name rule of a table (section 5): the one place it is built, from
// the snapshot's metaData (the planner's, the re-check's for a newer metaData, the trash's).
func hiddenRuleOf(snap *deltalog.Snapshot) hiddenRule {
	formats, _ := snap.Property(deltalog.PropUniversalFormats)
	return hiddenRule{partitionColumns: snap.PartitionColumns(), icebergMetadata: containsFold(strings.Split(formats, ","), "iceberg")}
}

// HiddenIn reports whether VACUUM leaves key alone as hidden in the table of snap (the rule
// the planner uses: a component starting with '_' or '.', but not _change_data*,
// _delta_index* or a partition directory). Undo restores no file into a hidden folder: no run
// can have deleted it there.
func HiddenIn(snap *deltalog.Snapshot, key string) bool {
	return hiddenRuleOf(snap).hiddenPath(key)
}

package vacuum

import (
	"strings"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// hiddenRule says which path components are hidden (section 5): names starting with '_' or
// '.', except _change_data*, _delta_index* and <partitionColumn>=; plus "metadata" on UniForm
// Iceberg tables. Hidden directories are not descended into; hidden files are never
// candidates (but for the checksum companion of a deleted file, rules_checksum.go). It applies
// per component in every mode: FULL's listing, the inventory's rows, LITE's candidates, the
// re-check (with a newer metaData's rule), the trash folder and undo.
type hiddenRule struct {
	partitionColumns []string
	icebergMetadata  bool
}

// hiddenRuleOf is the hidden-name rule of a table: the one place it is built, from the
// snapshot's metaData (the planner's, the re-check's for a newer metaData, the trash's).
func hiddenRuleOf(snap *deltalog.Snapshot) hiddenRule {
	formats, _ := snap.Property(deltalog.PropUniversalFormats)
	return hiddenRule{partitionColumns: snap.PartitionColumns(), icebergMetadata: containsFold(strings.Split(formats, ","), "iceberg")}
}

func (h hiddenRule) hidden(name string) bool {
	if h.icebergMetadata && name == "metadata" {
		return true
	}
	if name == "" || (name[0] != '_' && name[0] != '.') {
		return false
	}
	if strings.HasPrefix(name, "_change_data") || strings.HasPrefix(name, "_delta_index") {
		return false
	}
	for _, c := range h.partitionColumns {
		if strings.HasPrefix(name, c+"=") {
			return false
		}
	}
	return true
}

// hiddenPath reports whether any component of key (relative, '/'-separated) is hidden.
func (h hiddenRule) hiddenPath(key string) bool {
	for _, c := range strings.Split(strings.TrimSuffix(key, "/"), "/") {
		if h.hidden(c) {
			return true
		}
	}
	return false
}

// HiddenIn reports whether VACUUM leaves key alone as hidden in the table of snap (the rule
// the planner uses: a component starting with '_' or '.', but not _change_data*,
// _delta_index* or a partition directory). Undo restores no file into a hidden folder: no run
// can have deleted it there.
func HiddenIn(snap *deltalog.Snapshot, key string) bool {
	return hiddenRuleOf(snap).hiddenPath(key)
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(strings.TrimSpace(x), s) {
			return true
		}
	}
	return false
}

package vacuum

import "strings"

// hiddenRule says which path components are hidden: names starting with '_' or '.', except
// _change_data*, _delta_index* and <partitionColumn>=; plus "metadata" on UniForm Iceberg
// tables. Hidden directories are not descended into; hidden files are never candidates.
type hiddenRule struct {
	partitionColumns []string
	icebergMetadata  bool
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

// checksumOf returns the file a Hadoop checksum companion ".<name>.crc" belongs to.
func checksumOf(name string) (string, bool) {
	if len(name) > len("..crc") && name[0] == '.' && strings.HasSuffix(name, ".crc") {
		return name[1 : len(name)-len(".crc")], true
	}
	return "", false
}

func isDeletionVectorName(name string) bool {
	return strings.HasPrefix(name, "deletion_vector_") && strings.HasSuffix(name, ".bin")
}

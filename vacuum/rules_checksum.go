package vacuum

import (
	"strings"

	"github.com/deltavacuum/deltavacuum/storage"
)

// The checksum companion rule (section 5): a Hadoop checksum companion ".<name>.crc" is hidden,
// and never a candidate of its own, but it is deleted with its file when this run deletes that
// file and the log does not protect the companion itself (an add of ".f.parquet.crc" is live),
// as Hadoop's local file system deletes it. In a listing the two meet in either order within
// their folder; LITE, which lists nothing, looks for the companion of each candidate on local
// disk only.

// checksumOf returns the file a Hadoop checksum companion ".<name>.crc" belongs to.
func checksumOf(name string) (string, bool) {
	if len(name) > len("..crc") && name[0] == '.' && strings.HasSuffix(name, ".crc") {
		return name[1 : len(name)-len(".crc")], true
	}
	return "", false
}

// checksumCompanion is the key of the checksum companion of the file at key.
func checksumCompanion(key string) string {
	return storage.Dir(key) + "." + storage.Base(key) + ".crc"
}

// companionGoes reports whether the hidden file at key, named name, is a checksum companion
// that goes with its file, should this run delete that file.
func (p *Planner) companionGoes(key, name string) bool {
	_, ok := checksumOf(name)
	return ok && !p.protected(key)
}

// companionListed is told of a checksum companion that goes with its file (its key's hash h),
// listed in folder d: it returns the place in the plan of that file when it was planned
// already (the pair is made), and otherwise remembers the companion for it.
func (d *dirState) companionListed(h uint64) (int, bool) {
	if i, ok := d.candWait[h]; ok {
		delete(d.candWait, h)
		return i, true
	}
	if d.crcSeen == nil {
		d.crcSeen = map[uint64]struct{}{}
	}
	d.crcSeen[h] = struct{}{}
	return 0, false
}

// candidatePlanned is told of a file of folder d planned at place i of the plan, whose
// companion's key hashes to ch: it reports whether that companion was listed already (the
// pair is made), and otherwise remembers the file for it.
func (d *dirState) candidatePlanned(ch uint64, i int) bool {
	if _, ok := d.crcSeen[ch]; ok {
		delete(d.crcSeen, ch)
		return true
	}
	if d.candWait == nil {
		d.candWait = map[uint64]int{}
	}
	d.candWait[ch] = i
	return false
}

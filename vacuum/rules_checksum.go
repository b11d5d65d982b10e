package vacuum

import (
	"context"
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

// ChecksumCompanion is the key of the Hadoop checksum companion a file at key would have
// (.<name>.crc beside it): undo tells a run's companions from its files by it.
func ChecksumCompanion(key string) string { return checksumCompanion(key) }

// companionGoes reports whether the hidden file at key, named name, is a checksum companion
// that goes with its file, should this run delete that file.
func (p *Planner) companionGoes(key, name string) bool {
	_, ok := checksumOf(name)
	return ok && !p.protected(key)
}

// companionSize is the size of a checksum companion paired with its file: size as listed, or,
// when the listing did not stat it (-1: a lazy listing of local disk stats only what it must),
// one stat now (0 when that fails: the size is for reports and undo, never for a decision).
func (p *Planner) companionSize(ctx context.Context, key string, size int64) int64 {
	if size >= 0 {
		return size
	}
	if o, err := p.store.Stat(ctx, key); err == nil {
		return o.Size
	}
	return 0
}

// companionListed is told of a checksum companion that goes with its file (its key's hash h),
// listed in folder d: it returns the place in the plan of that file when it was planned
// already (the pair is made), and otherwise remembers the companion for it.
func (d *dirState) companionListed(h uint64, size int64) (int, bool) {
	if i, ok := d.candWait[h]; ok {
		delete(d.candWait, h)
		return i, true
	}
	if d.crcSeen == nil {
		d.crcSeen = map[uint64]int64{}
	}
	d.crcSeen[h] = size
	return 0, false
}

// candidatePlanned is told of a file of folder d planned at place i of the plan, whose
// companion's key hashes to ch: it reports whether that companion was listed already (the
// pair is made; *size is set to the companion's), and otherwise remembers the file for it.
func (d *dirState) candidatePlanned(ch uint64, i int, size *int64) bool {
	if n, ok := d.crcSeen[ch]; ok {
		delete(d.crcSeen, ch)
		*size = n
		return true
	}
	if d.candWait == nil {
		d.candWait = map[uint64]int{}
	}
	d.candWait[ch] = i
	return false
}

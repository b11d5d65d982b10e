//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package local

import (
	"math/bits"
	"slices"
	"strings"
)

// sortByName returns the entries of one directory sorted by key, that is by name: every key
// is the directory's key (its first dir bytes) followed by the name. The walk's contract wants
// the entries of a directory in byte order; comparing whole keys compares the directory's part
// again at every step, then the prefix the names of a table's data files share (part-000…).
//
// So each entry is ranked by the bytes of its name that follow the prefix all the names share,
// read as one big-endian number (zero-padded: a name holds no NUL byte, so a shorter name
// ranks before a longer one it begins), and the ranks are sorted as plain integers with the
// entry's place in their low bits. Names of equal rank are then compared in full. The order is
// exactly strings.Compare's of the keys.
func sortByName(ents []dirent, dir int) []dirent {
	n := len(ents)
	if n < 2 {
		return ents
	}
	first := ents[0].key[dir:]
	common := len(first)
	for _, e := range ents[1:] {
		name := e.key[dir:]
		m := min(common, len(name))
		i := 0
		for i < m && name[i] == first[i] {
			i++
		}
		if common = i; common == 0 {
			break
		}
	}
	low := uint(bits.Len(uint(n - 1))) // the bits of an entry's place
	ranked := make([]uint64, n)
	for i, e := range ents {
		ranked[i] = rankOf(e.key[dir+common:])>>low<<low | uint64(i)
	}
	slices.Sort(ranked)
	out := make([]dirent, n)
	mask := uint64(1)<<low - 1
	for i, r := range ranked {
		out[i] = ents[r&mask]
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && ranked[j]>>low == ranked[i]>>low {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(out[i:j], func(a, b dirent) int { return strings.Compare(a.key, b.key) })
		}
		i = j
	}
	return out
}

// rankOf reads the first eight bytes of s as a big-endian number, zero-padded.
func rankOf(s string) uint64 {
	var r uint64
	for i := range 8 {
		r <<= 8
		if i < len(s) {
			r |= uint64(s[i])
		}
	}
	return r
}

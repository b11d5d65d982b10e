package vacuum

import (
	"cmp"
	"math"
	mbits "math/bits"
	"slices"
	"sort"
)

// The sets of key hashes the planner decides with: built once from the log, then only queried,
// once per listed entry, so that their size and their lookups decide how far the planner
// scales (docs/scaling.md).

// keySet is a set of 64-bit key hashes. A collision can only make an unreferenced file look
// referenced, so it errs on the side of keeping; it never makes a referenced file deletable.
type keySet struct{ m map[uint64]struct{} }

func newKeySet() keySet { return keySet{m: map[uint64]struct{}{}} }

// add inserts h and reports whether it was new.
func (s keySet) add(h uint64) bool {
	if _, ok := s.m[h]; ok {
		return false
	}
	s.m[h] = struct{}{}
	return true
}

func (s keySet) has(h uint64) bool { _, ok := s.m[h]; return ok }

// hashList is a set of 64-bit key hashes built once and then only queried: sorted slices,
// 8 bytes per key (a Go map takes about 40), so that the protected set of 10 M live files
// stays near 80 MB. Collisions err on the side of keeping, as for keySet.
//
// The hashes are kept in 256 buckets by their top byte, each grown by append while the log is
// read: a bucket that outgrows its array copies 1/256 of the set, where one slice of 100 M
// hashes would hold its old 640 MB and its new 800 MB array at once. Sealed, the buckets
// laid end to end are the sorted set, and find gives a key's place in it.
//
// The hashes are uniform, so the sealed set is also cut into 2^bits finer buckets by their
// top bits (bits ≥ 8, so that each lies inside one of the 256), each about 8 hashes:
// fine[f] is the place of the first hash of fine bucket f in the whole set (half a byte per
// key). A lookup reads its fine bucket's bounds and searches those few hashes, two cache
// misses where a binary search of millions takes twenty.
type hashList struct {
	b     [hashBuckets][]uint64
	off   [hashBuckets + 1]int // off[i]: the place of b[i][0] in the whole set
	fine  []uint32
	shift uint // 64 - bits
}

const hashBuckets = 256

func bucketOf(h uint64) int { return int(h >> 56) }

func (l *hashList) add(h uint64) { i := bucketOf(h); l.b[i] = append(l.b[i], h) }

// seal sorts and deduplicates; has may be called only after it.
func (l *hashList) seal() {
	for i := range l.b {
		slices.Sort(l.b[i])
		l.b[i] = fit(slices.Compact(l.b[i]))
		l.off[i+1] = l.off[i] + len(l.b[i])
	}
	l.index()
}

// fit returns s in an array of its length when append left it in one much larger (up to
// twice: the set would keep that room for the whole run), one bucket at a time, so that
// 1/256 of the set is ever held twice.
func fit[T any](s []T) []T {
	if cap(s)-len(s) <= len(s)/16 {
		return slices.Clip(s)
	}
	return slices.Clone(s)
}

// hashListOf makes a sealed list of sorted, distinct hashes, sharing s.
func hashListOf(s []uint64) hashList {
	var l hashList
	for i := range l.b {
		lo := l.off[i]
		hi := lo + sort.Search(len(s)-lo, func(j int) bool { return bucketOf(s[lo+j]) > i })
		l.b[i] = s[lo:hi:hi]
		l.off[i+1] = hi
	}
	l.index()
	return l
}

// index builds the fine buckets of the sealed set.
func (l *hashList) index() {
	l.fine = nil
	n := l.len()
	bits := uint(mbits.Len64(uint64(n) / 8))
	if bits < 8 || n > math.MaxUint32 {
		return // the 256 buckets hold a few cache lines each, or beyond uint32 places
	}
	l.shift = 64 - bits
	l.fine = make([]uint32, 1<<bits+1)
	f := 0
	for i := range l.b {
		for j, h := range l.b[i] {
			for top := int(h >> l.shift); f <= top; f++ {
				l.fine[f] = uint32(l.off[i] + j)
			}
		}
	}
	for ; f < len(l.fine); f++ {
		l.fine[f] = uint32(n)
	}
}

func (l *hashList) has(h uint64) bool {
	_, ok := l.find(h)
	return ok
}

// find returns the place of h in the sealed set (where it would go when absent).
func (l *hashList) find(h uint64) (int, bool) {
	i := bucketOf(h)
	if l.fine == nil {
		j, ok := slices.BinarySearch(l.b[i], h)
		return l.off[i] + j, ok
	}
	f := h >> l.shift
	lo, hi := int(l.fine[f])-l.off[i], int(l.fine[f+1])-l.off[i]
	j, ok := slices.BinarySearch(l.b[i][lo:hi], h)
	return l.off[i] + lo + j, ok
}

func (l *hashList) len() int { return l.off[hashBuckets] }

// tombList is a set of 64-bit key hashes with, for each, the newest deletion time (ms) of the
// expired tombstones naming it: built once, then only queried, 16 bytes per key, in buckets
// as hashList. A collision can only give a file a later deletion time than its own, which
// keeps it sooner.
type tombList struct{ b [hashBuckets][]tomb }

type tomb struct {
	h  uint64
	ts int64
}

func (l *tombList) add(h uint64, ts int64) { i := bucketOf(h); l.b[i] = append(l.b[i], tomb{h, ts}) }

// seal sorts by hash and keeps one entry per hash, with the newest time.
func (l *tombList) seal() {
	for i := range l.b {
		slices.SortFunc(l.b[i], func(a, b tomb) int {
			if a.h != b.h {
				return cmp.Compare(a.h, b.h)
			}
			return cmp.Compare(b.ts, a.ts) // newest first
		})
		l.b[i] = fit(slices.CompactFunc(l.b[i], func(a, b tomb) bool { return a.h == b.h }))
	}
}

func (l *tombList) find(h uint64) (tomb, bool) {
	s := l.b[bucketOf(h)]
	i, ok := slices.BinarySearchFunc(s, h, func(t tomb, h uint64) int { return cmp.Compare(t.h, h) })
	if !ok {
		return tomb{}, false
	}
	return s[i], true
}

func (l *tombList) has(h uint64) bool { _, ok := l.find(h); return ok }

// newest returns the newest deletion time of the tombstones naming h.
func (l *tombList) newest(h uint64) (int64, bool) {
	t, ok := l.find(h)
	return t.ts, ok
}

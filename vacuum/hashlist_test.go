package vacuum

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHashListBuckets: the bucketed set answers as one sorted slice would: membership, the
// place of a key (which the verdicts index by), duplicates merged; built from sorted hashes
// (the verdict path) it is the same set; the tombstones keep the newest time per hash.
func TestHashListBuckets(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var l hashList
	var tl tombList
	var all []uint64
	newest := map[uint64]int64{}
	for i := range 20000 {
		h := r.Uint64()
		if i%7 == 0 && len(all) > 0 {
			h = all[r.IntN(len(all))] // a duplicate
		}
		if i%1000 == 0 {
			h = uint64(i) // bucket 0, and the top bucket below
		}
		if i%1000 == 1 {
			h = ^uint64(i)
		}
		l.add(h)
		all = append(all, h)
		ts := r.Int64N(1000)
		tl.add(h, ts)
		newest[h] = max(newest[h], ts)
	}
	l.seal()
	tl.seal()
	slices.Sort(all)
	all = slices.Compact(all)
	if l.len() != len(all) {
		t.Fatalf("len %d, want %d", l.len(), len(all))
	}
	from := hashListOf(slices.Clone(all))
	for i, h := range all {
		if j, ok := l.find(h); !ok || j != i {
			t.Fatalf("find(%x) = %d, %v; want %d, true", h, j, ok, i)
		}
		if j, ok := from.find(h); !ok || j != i {
			t.Fatalf("hashListOf: find(%x) = %d, %v; want %d, true", h, j, ok, i)
		}
		if ts, ok := tl.newest(h); !ok || ts != newest[h] {
			t.Fatalf("newest(%x) = %d, %v; want %d", h, ts, ok, newest[h])
		}
		if h+1 != all[min(i+1, len(all)-1)] && (l.has(h+1) || tl.has(h+1)) {
			t.Fatalf("%x is not in the set", h+1)
		}
	}
	if from.len() != len(all) {
		t.Fatalf("hashListOf: len %d", from.len())
	}
}

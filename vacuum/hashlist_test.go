package vacuum

import (
	"math"
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

// The fine-bucketed lookup of a sealed hashList answers as a binary search of the whole
// sorted set does, for members, non-members and the extreme hashes, at every size (below and
// above the size that gets fine buckets; skewed sets whose hashes share their top bits too).
func TestHashListFindMatchesBinarySearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 2047, 2048, 4096, 100_000} {
		for _, skew := range []bool{false, true} {
			var l hashList
			var all []uint64
			for range n {
				h := r.Uint64()
				if skew {
					h >>= 20 // all in the lowest buckets
				}
				l.add(h)
				all = append(all, h)
			}
			if n > 2 {
				for _, h := range []uint64{all[0], 0, math.MaxUint64} { // a duplicate, the extremes
					l.add(h)
					all = append(all, h)
				}
			}
			l.seal()
			slices.Sort(all)
			all = slices.Compact(all)
			if n >= 100_000 && l.fine == nil {
				t.Fatalf("n=%d: no fine buckets", n)
			}
			probes := []uint64{0, 1, math.MaxUint64, math.MaxUint64 - 1}
			for i := 0; i < len(all); i += max(1, len(all)/500) {
				probes = append(probes, all[i], all[i]+1, all[i]-1)
			}
			for range 2000 {
				probes = append(probes, r.Uint64(), r.Uint64()>>20)
			}
			for _, h := range probes {
				wi, wok := slices.BinarySearch(all, h)
				gi, gok := l.find(h)
				if gi != wi || gok != wok {
					t.Fatalf("n=%d skew=%v: find(%#x) = %d, %v; want %d, %v", n, skew, h, gi, gok, wi, wok)
				}
			}
		}
	}
}

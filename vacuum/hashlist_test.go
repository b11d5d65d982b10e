package vacuum

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The bucketed lookup of a sealed hashList answers as a binary search of the whole list
// does, for members, non-members and the extreme hashes, at every size (below and above
// the size that gets buckets; skewed lists whose hashes share their top bits too).
func TestHashListFindMatchesBinarySearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 4096, 100_000} {
		for _, skew := range []bool{false, true} {
			var l hashList
			for range n {
				h := r.Uint64()
				if skew {
					h >>= 20 // all in the lowest buckets
				}
				l.add(h)
			}
			if n > 2 {
				l.add(l.s[0]) // a duplicate
				l.add(0)
				l.add(math.MaxUint64)
			}
			l.seal()
			probes := []uint64{0, 1, math.MaxUint64, math.MaxUint64 - 1}
			for i := 0; i < len(l.s); i += max(1, len(l.s)/500) {
				probes = append(probes, l.s[i], l.s[i]+1, l.s[i]-1)
			}
			for range 2000 {
				probes = append(probes, r.Uint64(), r.Uint64()>>20)
			}
			for _, h := range probes {
				wi, wok := slices.BinarySearch(l.s, h)
				gi, gok := l.find(h)
				if gi != wi || gok != wok {
					t.Fatalf("n=%d skew=%v: find(%#x) = %d, %v; want %d, %v", n, skew, h, gi, gok, wi, wok)
				}
			}
		}
	}
}

package bench

import (
	"fmt"
	"hash/maphash"
	"runtime"
	"slices"
	"testing"
)

// BenchmarkKeySetMemory compares the memory of the planner's protected set as it is
// (vacuum.keySet: a map[uint64]struct{}) with a sorted []uint64 searched by binary search, the
// change docs/scaling.md recommends. It reports the retained heap per key;
// BenchmarkKeySetLookup times a lookup in each.
func BenchmarkKeySetMemory(b *testing.B) {
	sizes := []int{1_000_000}
	if full() {
		sizes = []int{1_000_000, 10_000_000}
	}
	seed := maphash.MakeSeed()
	key := func(i int) uint64 { return maphash.Comparable(seed, i) }
	for _, n := range sizes {
		b.Run(fmt.Sprintf("map/n=%s", name(int64(n))), func(b *testing.B) {
			var perKey float64
			var m map[uint64]struct{}
			for b.Loop() {
				m = nil //nolint:ineffassign // drops the previous map before the heap is measured
				base := LiveHeap()
				m = map[uint64]struct{}{}
				for i := range n {
					m[key(i)] = struct{}{}
				}
				perKey = float64(LiveHeap()-base) / float64(n)
				runtime.KeepAlive(m)
			}
			b.ReportMetric(perKey, "B/key")
		})
		b.Run(fmt.Sprintf("sorted/n=%s", name(int64(n))), func(b *testing.B) {
			var perKey float64
			var s []uint64
			for b.Loop() {
				s = nil
				base := LiveHeap()
				for i := range n {
					s = append(s, key(i))
				}
				slices.Sort(s)
				s = slices.Compact(s)
				s = slices.Clip(s)
				perKey = float64(LiveHeap()-base) / float64(n)
				runtime.KeepAlive(s)
			}
			b.ReportMetric(perKey, "B/key")
		})
	}
}

// BenchmarkKeySetLookup times one membership test in each layout (1 M keys, half the probes
// present).
func BenchmarkKeySetLookup(b *testing.B) {
	const n = 1_000_000
	seed := maphash.MakeSeed()
	key := func(i int) uint64 { return maphash.Comparable(seed, i) }
	m := map[uint64]struct{}{}
	s := make([]uint64, 0, n)
	for i := range n {
		m[key(i)] = struct{}{}
		s = append(s, key(i))
	}
	slices.Sort(s)
	b.Run("map", func(b *testing.B) {
		i := 0
		for b.Loop() {
			_, _ = m[key(i%(2*n))]
			i++
		}
	})
	b.Run("sorted", func(b *testing.B) {
		i := 0
		for b.Loop() {
			_, _ = slices.BinarySearch(s, key(i%(2*n)))
			i++
		}
	})
}

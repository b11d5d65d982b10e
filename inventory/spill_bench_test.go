package inventory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
)

// BenchmarkSpilledListing measures the inventory's spilled listing: 200 k rows in random order
// (one key in 20 given twice) kept 20 k at a time in memory, the rest written as sorted runs
// (Build), and walked, the runs merged k-way (Walk).
func BenchmarkSpilledListing(b *testing.B) {
	const n, budget = 200_000, 20_000
	r := rand.New(rand.NewPCG(26, 4))
	entries := make([]entry, 0, n)
	for i := range n {
		k := i
		if i%20 == 19 {
			k = r.IntN(i) // a key given again, later
		}
		key := fmt.Sprintf("date=2026-01-%02d/part-%05d-%08x.c000.snappy.parquet", 1+k%28, k%100000, uint32(k)*2654435761)
		entries = append(entries, entry{key: key, size: int64(r.IntN(1 << 28)), mtime: 1_760_000_000_000 + int64(i), timed: true})
	}
	r.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	b.Run("Build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l := build(b, entries, budget)
			l.Close()
		}
	})
	l := build(b, entries, budget)
	want := l.Len()
	b.Run("Walk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			k := 0
			err := l.Walk(context.Background(), "", func(o storage.Object) error {
				if !o.IsDir {
					k++
				}
				return nil
			})
			if err != nil || k != want {
				b.Fatal(fmt.Sprint(k, " of ", want), err)
			}
		}
	})
}

package vacuum

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// benchFiles is n files as a listing plans them: partitioned part files in listing order, some
// with checksum companions, all with times.
func benchFiles(n int) []File {
	r := rand.New(rand.NewPCG(26, 4))
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	files := make([]File, n)
	for i := range files {
		p := fmt.Sprintf("date=2026-01-%02d/part-%05d-%08x-%04x-4bd2-9c1e-%012x.c000.snappy.parquet", 1+i/(n/28+1), i%100000, r.Uint32(), r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
		files[i] = File{Path: p, Size: int64(r.IntN(1 << 28)), ModificationTime: base.Add(time.Duration(i) * time.Second), Reason: ReasonUntracked, eligible: since(i)}
		if i%3 == 0 {
			files[i].Checksum = checksumCompanion(p)
		}
	}
	return files
}

// BenchmarkSpilledFileList measures the plan's spilled list: 200 k files of which all but the
// last 20 k are written out (Append), read back in order (Each), checked (Verify) and sorted by
// path in runs of 20 k (Sorted).
func BenchmarkSpilledFileList(b *testing.B) {
	const n, limit = 200_000, 20_000
	files := benchFiles(n)
	build := func(b *testing.B) FileList {
		l := newSpillingList(limit, b.TempDir(), "mem://bench")
		for _, f := range files {
			if err := l.Append(f); err != nil {
				b.Fatal(err)
			}
		}
		return l
	}
	b.Run("Append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l := build(b)
			l.Close()
		}
	})
	l := build(b)
	defer l.Close()
	b.Run("Each", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			k := 0
			if err := l.Each(func(File) error { k++; return nil }); err != nil || k != n {
				b.Fatal(k, err)
			}
		}
	})
	b.Run("Verify", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := l.Verify(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Sorted", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			k := 0
			if err := l.Sorted(func(File) error { k++; return nil }); err != nil || k != n {
				b.Fatal(k, err)
			}
		}
	})
}

package blobstore

import (
	"context"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
)

// BenchmarkFlatWalk: the merger's CPU per listed name (no request latency), against the
// folder-by-folder walk of the same names.
func BenchmarkFlatWalk(b *testing.B) {
	log, data := table{commits: 1000, folders: 100, files: 2000}.names()
	for _, mode := range []struct {
		name      string
		order     Order
		delimited bool
	}{{"flat", OrderBytes, false}, {"flat-azure-unknown-order", OrderBytes, false}, {"delimited", OrderBytes, true}} {
		be := newListBackend(mode.order, 1000, append(log, data...)...)
		if mode.name == "flat-azure-unknown-order" {
			be.claimed = OrderBytes | OrderUTF16 | OrderTree | OrderTreeUTF16
			be.from = false
		}
		s := New(be, Config{Concurrency: 16, Delimited: mode.delimited})
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				err := s.WalkPruned(context.Background(), "", hidden, func(o storage.Object) error { n++; return nil })
				if err != nil || n < len(data) {
					b.Fatal(err, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(data)), "ns/name")
		})
	}
}

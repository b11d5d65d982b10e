package vacuum

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// sliceWalker lists a fixed slice of objects, sorted as a listing is, honouring SkipDir.
type sliceWalker []storage.Object

func (s sliceWalker) Walk(_ context.Context, _ string, fn func(storage.Object) error) error {
	skip := ""
	for _, o := range s {
		if skip != "" && len(o.Key) > len(skip) && o.Key[:len(skip)] == skip {
			continue
		}
		skip = ""
		if err := fn(o); err != nil {
			if err == storage.SkipDir && o.IsDir {
				skip = o.Key
				continue
			}
			return err
		}
	}
	return nil
}

// benchListing is a table of parts partitions of perPart files each, and its listing: of every
// 10 files, 6 are live, 1 named by an expired tombstone, 1 by one inside the retention, 1
// untracked and old, 1 untracked and too new; every 4th file has a checksum companion, and each
// partition a hidden _temporary folder with one file.
func benchListing(b *testing.B, parts, perPart int) (*table, sliceWalker) {
	b.Helper()
	tb := newTable(b, tableSpec{partitionColumns: []string{"p"}})
	var adds, removes []any
	var listing sliceWalker
	old, young := now.Add(-30*day), now.Add(-time.Hour)
	for p := range parts {
		dir := fmt.Sprintf("p=%03d/", p)
		listing = append(listing, storage.Object{Key: dir, IsDir: true, ModTime: old})
		var files []storage.Object
		for i := range perPart {
			key := fmt.Sprintf("%spart-%05d-6c0b5a3e-1f2d-4bd2-9c1e-%012x.c000.snappy.parquet", dir, i, i*7919)
			mt := old
			switch i % 10 {
			case 0, 1, 2, 3, 4, 5:
				adds = append(adds, add(key))
			case 6:
				removes = append(removes, remove(key, 20*day))
			case 7:
				removes = append(removes, remove(key, day))
			case 9:
				mt = young
			}
			files = append(files, storage.Object{Key: key, Size: 1 << 20, ModTime: mt})
			if i%4 == 0 {
				files = append(files, storage.Object{Key: dir + "." + key[len(dir):] + ".crc", Size: 12, ModTime: mt})
			}
		}
		files = append(files, storage.Object{Key: dir + "_temporary/", IsDir: true, ModTime: old},
			storage.Object{Key: dir + "_temporary/x.parquet", Size: 1, ModTime: old})
		sortObjects(files)
		listing = append(listing, files...)
	}
	tb.commit(adds...)
	tb.commit(removes...)
	return tb, listing
}

func sortObjects(s []storage.Object) {
	slices.SortFunc(s, func(a, b storage.Object) int { return strings.Compare(a.Key, b.Key) })
}

// BenchmarkPlanListing measures the walk of a FULL plan over a listing held in memory (the
// protected set is built once, outside the loop): 100 partitions of 2 000 files, 250 k
// entries with the companions, the folders and the hidden ones. "observe" adds an observer,
// as inspect and explain do.
func BenchmarkPlanListing(b *testing.B) {
	tb, listing := benchListing(b, 100, 2000)
	snap, err := deltalog.Load(context.Background(), tb.store)
	if err != nil {
		b.Fatal(err)
	}
	for _, observe := range []bool{false, true} {
		name := "plain"
		opts := Options{Now: now, Listing: listing, FilesInMemory: -1}
		if observe {
			name = "observe"
			n := 0
			opts.Observe = func(Verdict) { n++ }
		}
		b.Run(name, func(b *testing.B) {
			p, err := NewPlannerFor(context.Background(), tb.store, snap, opts)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				plan, err := p.Plan(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if plan.NumFilesToDelete != 100*2000*2/10 {
					b.Fatalf("planned %d files", plan.NumFilesToDelete)
				}
			}
		})
	}
}

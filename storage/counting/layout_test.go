package counting_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/counting"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// layout is a Delta table's names: commits in _delta_log/, files in date= folders.
func layout(commits, folders, files int) (log, data []string) {
	for v := range commits {
		log = append(log, fmt.Sprintf("_delta_log/%020d.json", v))
	}
	for d := range folders {
		for f := range files {
			data = append(data, fmt.Sprintf("date=2020-01-%02d/part-%05d-7c1e.c000.snappy.parquet", d+1, f))
		}
	}
	return log, data
}

func putKeys(t *testing.T, s storage.Store, keys []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	sem := make(chan struct{}, 16)
	for _, k := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := s.Put(context.Background(), k, nil); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// hiddenDir is the planner's skip, near enough: folders named _… or ….
func hiddenDir(dir string) bool {
	n := storage.Base(dir)
	return strings.HasPrefix(n, "_") || strings.HasPrefix(n, ".")
}

// walkPruned walks s as the planner does and returns the files it reported.
func walkPruned(t *testing.T, s storage.Store) int {
	t.Helper()
	files := 0
	err := s.(storage.PrunedWalker).WalkPruned(context.Background(), "", hiddenDir, func(o storage.Object) error {
		if !o.IsDir {
			files++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestFlatWalkRequestCounts: a walk that skips _delta_log/ lists a table of 12 folders at the
// flat floor on each test server (pages of 10 names): ceil(names / 10) pages of one listing
// without a delimiter, plus one page of the first level (read after 8 pages, to split the
// rest when it is long). On S3 and GCS the listing starts
// again after _delta_log/ once a page ends in it (one page of the log, then the data); Azure
// (Azurite) ignores startFrom and does not say whether its namespace is hierarchical (one
// Get Account Information), so the log is paged through and the walk stays on one listing.
func TestFlatWalkRequestCounts(t *testing.T) {
	log, data := layout(25, 12, 7)
	type server struct {
		name string
		new  func(t *testing.T) storage.Store
		want counting.RequestCounts
	}
	for _, sv := range []server{
		{"s3", func(t *testing.T) storage.Store {
			cfg := storagetest.S3Config(t)
			cfg.ListPageSize, cfg.Concurrency = 10, 1
			return storagetest.NewS3Config(t, cfg)
		}, counting.RequestCounts{List: 1 + (84+9)/10 + 1}},
		{"gcs", func(t *testing.T) storage.Store {
			cfg := storagetest.GCSConfig(t)
			cfg.ListPageSize, cfg.Concurrency = 10, 1
			return storagetest.NewGCSConfig(t, cfg)
		}, counting.RequestCounts{List: 1 + (84+9)/10 + 1}},
		{"azure", func(t *testing.T) storage.Store {
			cfg := storagetest.AzureConfig(t)
			cfg.ListPageSize, cfg.Concurrency = 10, 1
			return storagetest.NewAzureConfig(t, cfg)
		}, counting.RequestCounts{List: (25+84+9)/10 + 1, Get: 1}},
	} {
		t.Run(sv.name, func(t *testing.T) {
			s := sv.new(t)
			putKeys(t, s, append(log, data...))
			before, _ := counting.Requests(s)
			if files := walkPruned(t, s); files != len(data) {
				t.Fatalf("reported %d files, want %d", files, len(data))
			}
			after, _ := counting.Requests(s)
			if got := after.Sub(before); got != sv.want {
				t.Errorf("requests %+v, want %+v", got, sv.want)
			}
		})
	}
}

// TestFlatWalkSplitRequestCounts: a longer listing (800 files in 40 folders, pages of 10) at
// concurrency 4 is split into ranges listed in parallel; each range costs one short page at
// most, so the walk stays within the floor (one page of the log, 80 of data), the first
// level's page, and one page a range (3 ranges at most).
func TestFlatWalkSplitRequestCounts(t *testing.T) {
	log, data := layout(25, 40, 20)
	for _, sv := range []struct {
		name string
		new  func(t *testing.T) storage.Store
	}{
		{"s3", func(t *testing.T) storage.Store {
			cfg := storagetest.S3Config(t)
			cfg.ListPageSize, cfg.Concurrency = 10, 4
			return storagetest.NewS3Config(t, cfg)
		}},
		{"gcs", func(t *testing.T) storage.Store {
			cfg := storagetest.GCSConfig(t)
			cfg.ListPageSize, cfg.Concurrency = 10, 4
			return storagetest.NewGCSConfig(t, cfg)
		}},
	} {
		t.Run(sv.name, func(t *testing.T) {
			s := sv.new(t)
			putKeys(t, s, append(log, data...))
			before, _ := counting.Requests(s)
			if files := walkPruned(t, s); files != len(data) {
				t.Fatalf("reported %d files, want %d", files, len(data))
			}
			after, _ := counting.Requests(s)
			got := after.Sub(before)
			floor := int64(1 + len(data)/10)
			if got.List < floor+1 || got.List > floor+1+3 || got.Get != 0 {
				t.Errorf("requests %+v, want %d to %d lists (floor %d)", got, floor+1, floor+4, floor)
			}
			t.Logf("%d list requests, floor %d", got.List, floor)
		})
	}
}

package storagetest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// Known failures of the local and in-memory backends, skipped only while the backend still
// has them (a probe checks); the fixes are in storage/README.md.
func localKnown(t *testing.T) storagetest.Option {
	dir := t.TempDir()
	s, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	skip := map[string]string{}
	_ = s.Put(context.Background(), "probe/", nil)
	if fi, err := os.Stat(filepath.Join(dir, "probe")); err != nil || !fi.IsDir() {
		skip["DirectoryMarker"] = "known failure: local.Put of a directory key writes a file instead of creating the directory (fix in storage/README.md)"
	}
	return storagetest.Skip(skip)
}

func memKnown() storagetest.Option {
	skip := map[string]string{}
	if err := mem.New("mem://probe").Put(context.Background(), "../probe", nil); err == nil {
		skip["DeleteInvalidKeys"] = "known failure: mem accepts invalid keys (fix in storage/README.md)"
	}
	return storagetest.Skip(skip)
}

func TestLocalConformance(t *testing.T) { storagetest.Run(t, storagetest.NewLocal, localKnown(t)) }

func TestMemConformance(t *testing.T) { storagetest.Run(t, storagetest.NewMem, memKnown()) }

func TestS3Conformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return storagetest.NewS3(t) })
}

// Small pages and batches: every listing spans pages, every Delete many batches.
func TestS3ConformanceSmallPages(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		cfg := storagetest.S3Config(t)
		cfg.ListPageSize, cfg.BatchSize, cfg.Concurrency = 2, 3, 4
		return storagetest.NewS3Config(t, cfg)
	})
}

func TestAzureConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return storagetest.NewAzure(t) }, storagetest.AzuriteKnown())
}

func TestAzureConformanceSmallPages(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		cfg := storagetest.AzureConfig(t)
		cfg.ListPageSize, cfg.BatchSize, cfg.Concurrency = 2, 3, 4
		return storagetest.NewAzureConfig(t, cfg)
	}, storagetest.AzuriteKnown())
}

func TestGCSConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return storagetest.NewGCS(t) })
}

func TestGCSConformanceSmallPages(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		cfg := storagetest.GCSConfig(t)
		cfg.ListPageSize, cfg.Concurrency = 2, 4
		return storagetest.NewGCSConfig(t, cfg)
	})
}

func TestLocalLinks(t *testing.T) { storagetest.RunLinks(t, storagetest.NewLocalDir) }

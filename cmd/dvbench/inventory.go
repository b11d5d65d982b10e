package main

import (
	"context"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/deltavacuum/deltavacuum/bench/synthetic"
	"github.com/deltavacuum/deltavacuum/storage"
)

// inventoryRow is one row of a VACUUM ... USING INVENTORY inventory (Spark's schema).
type inventoryRow struct {
	Path             string `parquet:"path"`
	Length           int64  `parquet:"length"`
	IsDir            bool   `parquet:"isDir"`
	ModificationTime int64  `parquet:"modificationTime"`
}

func inventoryPath(dir string) string { return strings.TrimSuffix(dir, "/") + ".inventory.parquet" }

// writeInventory writes a Parquet inventory of every entry the synthetic store lists (the
// log included, as a cloud inventory report has it), with fully qualified file:// paths.
func writeInventory(ctx context.Context, store *synthetic.Store, path string) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := parquet.NewGenericWriter[inventoryRow](f, parquet.Compression(&parquet.Snappy))
	root := strings.TrimSuffix(store.Location(), "/") + "/"
	batch := make([]inventoryRow, 0, 4096)
	var n int64
	flush := func() error {
		_, err := w.Write(batch)
		batch = batch[:0]
		return err
	}
	err = store.Walk(ctx, "", func(o storage.Object) error {
		batch = append(batch, inventoryRow{Path: root + strings.TrimSuffix(o.Key, "/"), Length: o.Size, IsDir: o.IsDir, ModificationTime: o.ModTime.UnixMilli()})
		n++
		if len(batch) == cap(batch) {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = w.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

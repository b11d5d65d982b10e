package gcs_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
)

// TestRestoreOfAnUnknownSize: storage.Deleted says Size < 0 (a checksum companion, as
// the run record keeps it) matches any size. GCS Restore must bring such an object back.
func TestRestoreOfAnUnknownSize(t *testing.T) {
	ctx := context.Background()
	st, _ := newVersioned(t)
	k := "t/.part-0.parquet.crc"
	b := bytes.Repeat([]byte{1, 2, 3}, 4)
	if err := st.Put(ctx, k, b); err != nil {
		t.Fatal(err)
	}
	deleteKeys(t, st, k)
	if err := st.Restore(ctx, storage.Deleted{Key: k, Size: -1}); err != nil {
		t.Fatalf("restore of a companion (Size -1): %v", err)
	}
}

package azure

import (
	"context"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
)

// TestRestoreOfAnUnknownSize: a checksum companion is recorded with Size -1, which
// storage.Deleted documents as "any size matches". Azure Restore must restore it.
func TestRestoreOfAnUnknownSize(t *testing.T) {
	for _, tc := range []struct {
		name       string
		softDays   int
		versioning bool
		hns        bool
	}{
		{"soft delete", 7, false, false},
		{"soft delete HNS", 7, false, true},
		{"versioning", 0, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newFakeAccount(t)
			f.softDays, f.versioning, f.hns = tc.softDays, tc.versioning, tc.hns
			f.refuseVersions = tc.hns
			s := f.store(t, srv)
			ctx := context.Background()
			key := "p/.part-0.parquet.crc"
			if err := s.Put(ctx, key, []byte("crc-bytes")); err != nil {
				t.Fatal(err)
			}
			deleteKey(t, s, key)
			if err := s.Restore(ctx, storage.Deleted{Key: key, Size: -1}); err != nil {
				t.Fatalf("Restore(Size -1): %v", err)
			}
		})
	}
}

package storagetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

func TestS3VersionedRestore(t *testing.T) {
	s := storagetest.NewS3Versioned(t)
	if r := s.Recovery(context.Background()); r.Kind != storage.RecoveryVersioning {
		t.Fatalf("recovery of a versioned bucket: %+v", r)
	}
	storagetest.RunRestore(t, s)
}

func TestS3UnversionedRecovery(t *testing.T) {
	s := storagetest.NewS3(t)
	r := s.Recovery(context.Background())
	if r.Kind != storage.RecoveryNone || !r.Reclaimed() {
		t.Fatalf("recovery of a bucket without versioning: %+v", r)
	}
}

func TestMove(t *testing.T) {
	for _, b := range storagetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := b.New(t)
			if b.Name == "gcs" {
				s = storagetest.NewGCSStrict(t) // fake-gcs-server ignores the copy's precondition
			}
			if !storage.CanMove(s) {
				t.Fatalf("%s cannot move", b.Name)
			}
			storagetest.RunMove(t, s)
		})
	}
}

// A key written again with the same size after the run, then deleted again: the restore
// brings back the version the run deleted (by its modification time), not the newer bytes.
func TestS3RestorePicksTheRecordedVersion(t *testing.T) {
	s := storagetest.NewS3Versioned(t)
	ctx := context.Background()
	const k = "x.parquet"
	del := func() {
		if res, err := s.Delete(ctx, []string{k}); err != nil || res[0].Err != nil {
			t.Fatal(err, res)
		}
	}
	if err := s.Put(ctx, k, []byte("AAAA")); err != nil {
		t.Fatal(err)
	}
	o, err := s.Stat(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	del()
	time.Sleep(1100 * time.Millisecond) // S3 keeps seconds
	if err := s.Put(ctx, k, []byte("BBBB")); err != nil {
		t.Fatal(err)
	}
	del()
	if err := s.Restore(ctx, storage.Deleted{Key: k, Size: 4, ModTime: o.ModTime}); err != nil {
		t.Fatal(err)
	}
	if b, _ := storage.ReadAll(ctx, s, k); string(b) != "AAAA" {
		t.Errorf("restored %q, the run deleted AAAA", b)
	}
}

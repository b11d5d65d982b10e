package storagetest_test

import (
	"context"
	"testing"

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

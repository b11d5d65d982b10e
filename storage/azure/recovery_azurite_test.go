package azure_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// Against Azurite: Copy Blob (which it completes at once), the move built on it, and the
// refusals of restore (Azurite keeps no deleted blob: no soft delete, no versions, Undelete
// Blob answers 501).

func TestMoveAzurite(t *testing.T) {
	s := storagetest.NewAzure(t)
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	from, to := "p=00%3A00/a b+é.parquet", "_trash/run 1/p=00%3A00/a b+é.parquet"
	if err := s.Put(ctx, from, data); err != nil {
		t.Fatal(err)
	}
	if err := s.Move(ctx, from, to); err != nil {
		t.Fatalf("Move: %v", err)
	}
	got, err := storage.ReadAll(ctx, s, to)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("moved object: %d bytes, %v; want the %d bytes written", len(got), err, len(data))
	}
	if _, err := s.Stat(ctx, from); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("Stat(from) after the move: %v, want ErrNotExist", err)
	}
	// A taken destination is never replaced, and the source stays.
	if err := s.Put(ctx, from, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := s.Move(ctx, from, to); !errors.Is(err, storage.ErrExist) {
		t.Fatalf("Move onto a taken key: %v, want ErrExist", err)
	}
	if got, _ := storage.ReadAll(ctx, s, to); !bytes.Equal(got, data) {
		t.Fatalf("the destination was replaced: %q", got[:min(len(got), 16)])
	}
	if got, _ := storage.ReadAll(ctx, s, from); string(got) != "new" {
		t.Fatalf("the source changed: %q", got)
	}
	if err := s.Move(ctx, "missing.parquet", "_trash/missing.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("Move of a missing key: %v, want ErrNotExist", err)
	}
	if _, err := s.Stat(ctx, "_trash/missing.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("a failed move left a destination: %v", err)
	}
	for _, k := range []string{"../outside", "/abs", "a//b", "dir/"} {
		if err := s.Move(ctx, k, "x"); err == nil {
			t.Errorf("Move(%q) accepted", k)
		}
		if err := s.Move(ctx, from, k); err == nil {
			t.Errorf("Move to %q accepted", k)
		}
	}
}

func TestRestoreAzurite(t *testing.T) {
	s := storagetest.NewAzure(t)
	ctx := context.Background()
	key := "p=1/f 100%.parquet"
	if err := s.Put(ctx, key, []byte("live")); err != nil {
		t.Fatal(err)
	}
	// An object at the key now is never replaced.
	if err := s.Restore(ctx, storage.Deleted{Key: key, Size: 4}); !errors.Is(err, storage.ErrExist) {
		t.Fatalf("Restore over a live object: %v, want ErrExist", err)
	}
	if got, _ := storage.ReadAll(ctx, s, key); string(got) != "live" {
		t.Fatalf("the live object changed: %q", got)
	}
	if res, err := s.Delete(ctx, []string{key}); err != nil || res[0].Err != nil {
		t.Fatalf("Delete: %v %+v", err, res)
	}
	// Azurite keeps nothing: not there, and the message names the key and why.
	err := s.Restore(ctx, storage.Deleted{Key: key, Size: 4})
	if !errors.Is(err, storage.ErrNotExist) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "soft delete") {
		t.Fatalf("Restore with nothing kept: %v, want ErrNotExist naming the key and why", err)
	}
	for _, k := range []string{"../x", "", "d/", "a/./b"} {
		if err := s.Restore(ctx, storage.Deleted{Key: k}); err == nil || errors.Is(err, storage.ErrNotExist) {
			t.Errorf("Restore(%q) = %v, want an invalid-key error", k, err)
		}
	}
}

// Azurite stores the blob service properties it is given: the soft-delete policy is read
// from them. The test sets the emulator account's policy and sets it back off.
func TestRecoveryAzurite(t *testing.T) {
	cfg := storagetest.AzureConfig(t)
	s := storagetest.NewAzureConfig(t, cfg)
	ctx := context.Background()
	cred, err := blob.NewSharedKeyCredential(cfg.Account, cfg.AccountKey)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := service.NewClientWithSharedKeyCredential(cfg.ServiceURL, cred, &service.ClientOptions{ClientOptions: azcore.ClientOptions{InsecureAllowCredentialWithHTTP: true}})
	if err != nil {
		t.Fatal(err)
	}
	set := func(on bool, days int32) {
		t.Helper()
		p := &service.RetentionPolicy{Enabled: to.Ptr(on)}
		if on {
			p.Days = to.Ptr(days)
		}
		if _, err := sc.SetProperties(ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: p}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { set(false, 0) })
	if err := s.Put(ctx, "_delta_log/00000000000000000000.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	set(true, 5)
	r := s.Recovery(ctx)
	if r.Kind != storage.RecoverySoftDelete || r.Days != 5 || !strings.Contains(r.Detail, "no version id") {
		t.Fatalf("Recovery with a 5-day policy = %+v", r)
	}
	set(false, 0)
	if r := s.Recovery(ctx); r.Kind != storage.RecoveryNone {
		t.Fatalf("Recovery with soft delete off = %+v", r)
	}
}

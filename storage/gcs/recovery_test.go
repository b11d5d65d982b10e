package gcs_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/gcs"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// newVersioned returns a store on a new versioned bucket of fake-gcs-server, through the
// proxy that enforces the generation preconditions it ignores.
func newVersioned(t *testing.T) (*gcs.Store, *storagetest.GCSProxy) {
	t.Helper()
	cfg := storagetest.GCSVersionedConfig(t)
	p := storagetest.NewGCSProxy(t, cfg.Endpoint)
	cfg.Endpoint = p.Endpoint
	st, err := gcs.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, p
}

func deleteKeys(t *testing.T, st storage.Store, keys ...string) {
	t.Helper()
	res, err := st.Delete(context.Background(), keys)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil || r.Gone {
			t.Fatalf("deleting %s: %+v", r.Key, r)
		}
	}
}

// TestRestoreVersionedByteForByte: on a versioned bucket of fake-gcs-server, objects deleted
// through the store come back, byte for byte, from their noncurrent generations.
func TestRestoreVersionedByteForByte(t *testing.T) {
	ctx := context.Background()
	st, p := newVersioned(t)
	if r := st.Recovery(ctx); r.Kind != storage.RecoveryVersioning || !r.Restorable() {
		t.Errorf("Recovery = %+v, want versioning", r)
	}
	data := map[string][]byte{}
	for i, k := range []string{"t/part-0.parquet", "t/p=a b%3A/ü x.parquet", "t/_delta_log/.00.crc", "t/empty"} {
		b := bytes.Repeat([]byte{byte(i), 0, 0xff, '\n'}, 1000*i)
		data[k] = b
		if err := st.Put(ctx, k, b); err != nil {
			t.Fatal(err)
		}
	}
	var deleted []storage.Deleted
	for k, b := range data {
		o, err := st.Stat(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		deleted = append(deleted, storage.Deleted{Key: k, Size: int64(len(b)), ModTime: o.ModTime})
		deleteKeys(t, st, k)
	}
	for _, d := range deleted {
		if err := st.Restore(ctx, d); err != nil {
			t.Fatalf("restore %s: %v", d.Key, err)
		}
		got, err := storage.ReadAll(ctx, st, d.Key)
		if err != nil || !bytes.Equal(got, data[d.Key]) {
			t.Errorf("%s after restore: %d bytes, %v; want the %d bytes deleted", d.Key, len(got), err, len(data[d.Key]))
		}
		if err := st.Restore(ctx, d); !errors.Is(err, storage.ErrExist) {
			t.Errorf("restoring %s again: got %v, want ErrExist (it is there now)", d.Key, err)
		}
	}
	// Each restore is a rewrite of one generation, on the condition that nothing is live.
	n := 0
	for _, r := range p.Requests() {
		if strings.Contains(r, "/rewriteTo/") && strings.Contains(r, "ifGenerationMatch=0") && strings.Contains(r, "sourceGeneration=") {
			n++
		}
	}
	if n != len(deleted) {
		t.Errorf("%d rewrites of a generation with ifGenerationMatch=0, want %d: %q", n, len(deleted), p.Requests())
	}
}

// TestRestoreVersionedChoosesBySize: the newest noncurrent generation of the size recorded is
// brought back, not merely the newest; none of that size, or none at all, is ErrNotExist
// naming the key; an object written since the delete is never replaced.
func TestRestoreVersionedChoosesBySize(t *testing.T) {
	ctx := context.Background()
	st, _ := newVersioned(t)
	for _, v := range []string{"five!", "seven!!", "FIVE!", "nine!!!!!"} {
		if err := st.Put(ctx, "a.parquet", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	deleteKeys(t, st, "a.parquet")
	if err := st.Restore(ctx, storage.Deleted{Key: "a.parquet", Size: 5}); err != nil {
		t.Fatal(err)
	}
	if got, _ := storage.ReadAll(ctx, st, "a.parquet"); string(got) != "FIVE!" {
		t.Errorf("restored %q, want the newest generation of 5 bytes, FIVE!", got)
	}
	if err := st.Restore(ctx, storage.Deleted{Key: "a.parquet", Size: 9}); !errors.Is(err, storage.ErrExist) {
		t.Errorf("restore over a live object: got %v, want ErrExist", err)
	}
	if got, _ := storage.ReadAll(ctx, st, "a.parquet"); string(got) != "FIVE!" {
		t.Errorf("the live object became %q", got)
	}
	deleteKeys(t, st, "a.parquet")
	err := st.Restore(ctx, storage.Deleted{Key: "a.parquet", Size: 6})
	if !errors.Is(err, storage.ErrNotExist) || !strings.Contains(err.Error(), "a.parquet") || !strings.Contains(err.Error(), "6 bytes") {
		t.Errorf("no generation of 6 bytes: got %v, want ErrNotExist naming the key and the size", err)
	}
	if err := st.Restore(ctx, storage.Deleted{Key: "never.parquet", Size: 5}); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("a key never written: got %v, want ErrNotExist", err)
	}
	// A name that only begins like the key is not its generation.
	if err := st.Put(ctx, "b.parquet.old", []byte("five!")); err != nil {
		t.Fatal(err)
	}
	deleteKeys(t, st, "b.parquet.old")
	if err := st.Restore(ctx, storage.Deleted{Key: "b.parquet", Size: 5}); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("another key's generation: got %v, want ErrNotExist", err)
	}
}

// TestRestoreHostileKeys: keys that are not a file's are refused before any request.
func TestRestoreHostileKeys(t *testing.T) {
	st := storagetest.NewGCS(t)
	for _, k := range []string{"", "d/", "../x", "a//b", "/abs"} {
		if err := st.Restore(context.Background(), storage.Deleted{Key: k}); err == nil || errors.Is(err, storage.ErrNotExist) {
			t.Errorf("Restore(%q) = %v, want an invalid-key error", k, err)
		}
	}
}

// TestRecoveryFakeGCS: fake-gcs-server reports versioning but no softDeletePolicy: a bucket
// without versioning is unknown, with the reason.
func TestRecoveryFakeGCS(t *testing.T) {
	r := storagetest.NewGCS(t).Recovery(context.Background())
	if r.Kind != storage.RecoveryUnknown || !strings.Contains(r.Detail, "softDeletePolicy") {
		t.Errorf("got %+v, want unknown (no softDeletePolicy reported)", r)
	}
}

// TestRestoreOnUnversionedFakeGCS: without versioning the emulator keeps nothing (and
// ignores softDeleted listings, which list live objects only): ErrNotExist.
func TestRestoreOnUnversionedFakeGCS(t *testing.T) {
	ctx := context.Background()
	st := storagetest.NewGCS(t)
	if err := st.Put(ctx, "a.parquet", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	deleteKeys(t, st, "a.parquet")
	if err := st.Restore(ctx, storage.Deleted{Key: "a.parquet", Size: 3}); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("got %v, want ErrNotExist", err)
	}
}

// TestMove: a server-side copy (never over an existing object: ifGenerationMatch=0, enforced
// by the proxy since fake-gcs-server ignores it on copies) then a delete.
func TestMove(t *testing.T) {
	ctx := context.Background()
	st, p := proxied(t)
	for k, v := range map[string]string{"from.parquet": "payload", "taken.parquet": "other"} {
		if err := st.Put(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Move(ctx, "from.parquet", "taken.parquet"); !errors.Is(err, storage.ErrExist) {
		t.Errorf("move over an object: got %v, want ErrExist", err)
	}
	for k, v := range map[string]string{"from.parquet": "payload", "taken.parquet": "other"} {
		if got, err := storage.ReadAll(ctx, st, k); err != nil || string(got) != v {
			t.Errorf("%s after a refused move: %q, %v; want %q", k, got, err, v)
		}
	}
	if err := st.Move(ctx, "missing.parquet", "to.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("move of a missing object: got %v, want ErrNotExist", err)
	}
	if err := st.Move(ctx, "from.parquet", "d/to é.parquet"); err != nil {
		t.Fatal(err)
	}
	if got, err := storage.ReadAll(ctx, st, "d/to é.parquet"); err != nil || string(got) != "payload" {
		t.Errorf("moved: %q, %v", got, err)
	}
	if _, err := st.Stat(ctx, "from.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("from after the move: %v, want gone", err)
	}
	sent := false
	for _, r := range p.Requests() {
		sent = sent || (strings.Contains(r, "/rewriteTo/") && strings.Contains(r, "ifGenerationMatch=0"))
	}
	if !sent {
		t.Errorf("no rewrite with ifGenerationMatch=0 in %q", p.Requests())
	}
}

// A key written again with the same size after the run, then deleted again: the restore
// brings back the generation the run deleted (by its modification time), not the newer one.
func TestRestorePicksTheRecordedGeneration(t *testing.T) {
	st, _ := newVersioned(t)
	ctx := context.Background()
	const k = "x.parquet"
	if err := st.Put(ctx, k, []byte("AAAA")); err != nil {
		t.Fatal(err)
	}
	o, err := st.Stat(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	deleteKeys(t, st, k)
	time.Sleep(20 * time.Millisecond)
	if err := st.Put(ctx, k, []byte("BBBB")); err != nil {
		t.Fatal(err)
	}
	deleteKeys(t, st, k)
	if err := st.Restore(ctx, storage.Deleted{Key: k, Size: 4, ModTime: o.ModTime}); err != nil {
		t.Fatal(err)
	}
	if b, _ := storage.ReadAll(ctx, st, k); string(b) != "AAAA" {
		t.Errorf("restored %q, the run deleted AAAA", b)
	}
}

package storagetest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdks3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/s3"
)

// NewS3Versioned returns a store on a fresh prefix of a versioned bucket of the versioned S3
// test server (EnvS3VersionedEndpoint), emptied when the test ends (noncurrent versions stay).
func NewS3Versioned(t *testing.T) *s3.Store {
	t.Helper()
	ep := requireServer(t, "versioned S3", EnvS3VersionedEndpoint)
	cfg := s3TestConfig(ep, "deltavacuum-versioned")
	ensureOnce(t, "versioned s3 bucket "+ep+"/"+cfg.Bucket, func(ctx context.Context) error {
		c := cfg
		c.Prefix = ""
		st, err := s3.New(ctx, c)
		if err != nil {
			return err
		}
		_, err = st.Client().CreateBucket(ctx, &sdks3.CreateBucketInput{Bucket: aws.String(cfg.Bucket)})
		var ae smithy.APIError
		if err != nil && !(errors.As(err, &ae) && (ae.ErrorCode() == "BucketAlreadyOwnedByYou" || ae.ErrorCode() == "BucketAlreadyExists")) {
			return err
		}
		_, err = st.Client().PutBucketVersioning(ctx, &sdks3.PutBucketVersioningInput{
			Bucket:                  aws.String(cfg.Bucket),
			VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled},
		})
		return err
	})
	return NewS3Config(t, cfg)
}

// RunRestore checks storage.Restorer on a store that keeps deleted objects: files deleted
// through the store come back byte for byte; a key written again since its delete, a key
// never written and a size that no kept copy has are refused, and nothing is replaced.
func RunRestore(t *testing.T, s storage.Store) {
	t.Helper()
	ctx := context.Background()
	r, ok := s.(storage.Restorer)
	if !ok {
		t.Fatalf("%T does not implement storage.Restorer", s)
	}
	files := map[string][]byte{
		"part-00000.snappy.parquet":              []byte("first version of a data file"),
		"date=2024-01-01/part 01 +%25 é.parquet": []byte("a name with a space, a plus, a percent sign and an accent"),
		"deep/a/b/c.parquet":                     bytes.Repeat([]byte{0, 1, 2, 3}, 4096),
	}
	var deleted []storage.Deleted
	for k, data := range files {
		if err := s.Put(ctx, k, data); err != nil {
			t.Fatal(err)
		}
		o, err := s.Stat(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		deleted = append(deleted, storage.Deleted{Key: k, Size: o.Size, ModTime: o.ModTime})
	}
	// A key rewritten since its delete, of another size: never replaced.
	if err := s.Put(ctx, "rewritten.parquet", []byte("old")); err != nil {
		t.Fatal(err)
	}
	keys := []string{"rewritten.parquet"}
	for _, d := range deleted {
		keys = append(keys, d.Key)
	}
	res, err := s.Delete(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res {
		if x.Err != nil {
			t.Fatal(x.Err)
		}
	}
	if err := s.Put(ctx, "rewritten.parquet", []byte("written again after the delete")); err != nil {
		t.Fatal(err)
	}
	for _, d := range deleted {
		if err := r.Restore(ctx, d); err != nil {
			t.Fatalf("restore %s: %v", d.Key, err)
		}
		got, err := storage.ReadAll(ctx, s, d.Key)
		if err != nil {
			t.Fatalf("read %s after restore: %v", d.Key, err)
		}
		if !bytes.Equal(got, files[d.Key]) {
			t.Fatalf("%s after restore: %q, want %q", d.Key, got, files[d.Key])
		}
	}
	// Restoring twice: the object is there, nothing replaced.
	if err := r.Restore(ctx, deleted[0]); !errors.Is(err, storage.ErrExist) {
		t.Fatalf("second restore of %s: %v, want ErrExist", deleted[0].Key, err)
	}
	if err := r.Restore(ctx, storage.Deleted{Key: "rewritten.parquet", Size: 3}); !errors.Is(err, storage.ErrExist) {
		t.Fatalf("restore over a newer object: %v, want ErrExist", err)
	}
	if got, _ := storage.ReadAll(ctx, s, "rewritten.parquet"); string(got) != "written again after the delete" {
		t.Fatalf("the newer object was replaced: %q", got)
	}
	if err := r.Restore(ctx, storage.Deleted{Key: "never-written.parquet", Size: 1}); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("restore of a key never written: %v, want ErrNotExist", err)
	}
	// A kept copy of another size is not what the run deleted.
	if err := s.Put(ctx, "sized.parquet", []byte("12345")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, []string{"sized.parquet"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(ctx, storage.Deleted{Key: "sized.parquet", Size: 6}); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("restore with another size: %v, want ErrNotExist", err)
	}
	if _, err := s.Stat(ctx, "sized.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("a copy of another size was restored: %v", err)
	}
	for _, bad := range []string{"", "../x", "/abs", "dir/", "a//b"} {
		if err := r.Restore(ctx, storage.Deleted{Key: bad}); err == nil || errors.Is(err, storage.ErrNotExist) && bad == "" {
			t.Errorf("restore of key %q: %v, want an invalid-key error", bad, err)
		}
	}
}

// RunMove checks storage.Mover: a file moves with its bytes, nothing at the target is
// replaced, a missing source is ErrNotExist.
func RunMove(t *testing.T, s storage.Store) {
	t.Helper()
	ctx := context.Background()
	m, ok := s.(storage.Mover)
	if !ok {
		t.Fatalf("%T does not implement storage.Mover", s)
	}
	data := []byte("moved bytes")
	if err := s.Put(ctx, "a/part 1 +%.parquet", data); err != nil {
		t.Fatal(err)
	}
	if err := m.Move(ctx, "a/part 1 +%.parquet", "_trash/r1/a/part 1 +%.parquet"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, "a/part 1 +%.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("the source is still there after the move: %v", err)
	}
	if got, err := storage.ReadAll(ctx, s, "_trash/r1/a/part 1 +%.parquet"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("moved file: %q, %v", got, err)
	}
	if err := s.Put(ctx, "b.parquet", []byte("other")); err != nil {
		t.Fatal(err)
	}
	if err := m.Move(ctx, "b.parquet", "_trash/r1/a/part 1 +%.parquet"); !errors.Is(err, storage.ErrExist) {
		t.Fatalf("move onto an existing file: %v, want ErrExist", err)
	}
	if got, _ := storage.ReadAll(ctx, s, "_trash/r1/a/part 1 +%.parquet"); !bytes.Equal(got, data) {
		t.Fatalf("the target was replaced: %q", got)
	}
	if _, err := s.Stat(ctx, "b.parquet"); err != nil {
		t.Fatalf("the source of a refused move is gone: %v", err)
	}
	if err := m.Move(ctx, "missing.parquet", "_trash/r1/missing.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("move of a missing file: %v, want ErrNotExist", err)
	}
	for _, bad := range [][2]string{{"../x", "y"}, {"b.parquet", "../y"}, {"b.parquet", "/abs"}, {"b.parquet", "dir/"}, {"", "y"}} {
		if err := m.Move(ctx, bad[0], bad[1]); err == nil {
			t.Errorf("move %q to %q: no error", bad[0], bad[1])
		}
	}
}

package storagetest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	gcsapi "cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/deltavacuum/deltavacuum/storage/gcs"
)

// GCSConfig returns the configuration of a fresh prefix of the GCS test bucket (created when
// missing), skipping the test when no GCS test server is configured.
func GCSConfig(t *testing.T) gcs.Config {
	t.Helper()
	ep := requireServer(t, "GCS", EnvGCSEndpoint)
	cfg := gcs.Config{
		Bucket:    envOr(EnvGCSBucket, "deltavacuum-test"),
		Prefix:    UniquePrefix(),
		Endpoint:  ep,
		AllowHTTP: true,
	}
	ensureOnce(t, "gcs bucket "+ep+"/"+cfg.Bucket, func(ctx context.Context) error {
		st, err := gcs.New(ctx, cfg)
		if err != nil {
			return err
		}
		defer st.Close()
		err = st.Client().Bucket(cfg.Bucket).Create(ctx, "deltavacuum-test", nil)
		var ge *googleapi.Error
		if errors.As(err, &ge) && ge.Code == http.StatusConflict {
			return nil
		}
		return err
	})
	return cfg
}

// NewGCSConfig returns a store for cfg, emptied and closed when the test ends.
func NewGCSConfig(t *testing.T, cfg gcs.Config) *gcs.Store {
	t.Helper()
	st, err := gcs.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	clean := cfg
	clean.WrapTransport = nil
	cst, err := gcs.New(context.Background(), clean)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); cst.Close() })
	cleanupStore(t, cst)
	return st
}

// NewGCS returns a store on a fresh prefix of the GCS test bucket.
func NewGCS(t *testing.T) *gcs.Store {
	t.Helper()
	return NewGCSConfig(t, GCSConfig(t))
}

// NewGCSStrict is NewGCS through a GCSProxy, which enforces the generation preconditions
// fake-gcs-server ignores (on deletes and on a copy's destination), as GCS does.
func NewGCSStrict(t *testing.T) *gcs.Store {
	t.Helper()
	cfg := GCSConfig(t)
	cfg.Endpoint = NewGCSProxy(t, cfg.Endpoint).Endpoint
	return NewGCSConfig(t, cfg)
}

// GCSVersionedConfig returns the configuration of a new bucket of the GCS test server, of its
// own name, with object versioning enabled (fake-gcs-server keeps noncurrent generations);
// every generation and the bucket are deleted when the test ends.
func GCSVersionedConfig(t *testing.T) gcs.Config {
	t.Helper()
	cfg := GCSConfig(t)
	cfg.Bucket = "dv-versioned-" + strings.ToLower(strings.TrimPrefix(UniquePrefix(), "t-"))
	cfg.Prefix = ""
	ctx := context.Background()
	st, err := gcs.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := st.Client().Bucket(cfg.Bucket)
	if err := b.Create(ctx, "deltavacuum-test", &gcsapi.BucketAttrs{VersioningEnabled: true}); err != nil {
		st.Close()
		t.Fatalf("creating versioned bucket %s: %v", cfg.Bucket, err)
	}
	t.Cleanup(func() {
		defer st.Close()
		it := b.Objects(ctx, &gcsapi.Query{Versions: true})
		for {
			a, err := it.Next()
			if err != nil {
				break
			}
			_ = b.Object(a.Name).Generation(a.Generation).Delete(ctx) // best-effort cleanup
		}
		_ = b.Delete(ctx)
	})
	return cfg
}

package location_test

import (
	"context"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// Stores opened by URI and options, as the command line opens them, pass the conformance suite
// on the test servers. (Each call's Config helper creates the bucket and picks a fresh prefix.)
func TestOpenConformance(t *testing.T) {
	open := func(t *testing.T, uri string, flags ...string) storage.Store {
		t.Helper()
		opts, err := location.ParseStorageOptions(flags)
		if err != nil {
			t.Fatal(err)
		}
		s, err := location.Open(context.Background(), uri, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := storagetest.Empty(context.Background(), s); err != nil {
				t.Logf("cleanup: %v", err)
			}
		})
		return s
	}
	t.Run("s3", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store {
			c := storagetest.S3Config(t)
			return open(t, "s3a://"+c.Bucket+"/"+c.Prefix, "aws_endpoint="+c.Endpoint, "aws_allow_http=true",
				"aws_access_key_id="+c.AccessKeyID, "aws_secret_access_key="+c.SecretAccessKey, "aws_region="+c.Region, "delete_batch_size=4")
		})
	})
	t.Run("azure", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store {
			c := storagetest.AzureConfig(t)
			return open(t, "az://"+c.Container+"/"+c.Prefix, "azure_endpoint="+c.ServiceURL, "azure_allow_http=true",
				"azure_storage_account_name="+c.Account, "azure_storage_account_key="+c.AccountKey, "delete_batch_size=4")
		}, storagetest.AzuriteKnown())
	})
	t.Run("gcs", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store {
			c := storagetest.GCSConfig(t)
			return open(t, "gs://"+c.Bucket+"/"+c.Prefix, "google_endpoint="+c.Endpoint, "google_allow_http=true")
		})
	})
}

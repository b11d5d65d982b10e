package storagetest

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdks3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/deltavacuum/deltavacuum/storage/s3"
)

// S3Config returns the configuration of a fresh prefix of the S3 test bucket (created when
// missing), skipping the test when no S3 test server is configured.
func S3Config(t *testing.T) s3.Config {
	t.Helper()
	ep := requireServer(t, "S3", EnvS3Endpoint)
	cfg := s3TestConfig(ep, envOr(EnvS3Bucket, "deltavacuum-test"))
	ensureOnce(t, "s3 bucket "+ep+"/"+cfg.Bucket, func(ctx context.Context) error {
		c := cfg
		c.Prefix = ""
		st, err := s3.New(ctx, c)
		if err != nil {
			return err
		}
		_, err = st.Client().CreateBucket(ctx, &sdks3.CreateBucketInput{Bucket: aws.String(cfg.Bucket)})
		var ae smithy.APIError
		if errors.As(err, &ae) && (ae.ErrorCode() == "BucketAlreadyOwnedByYou" || ae.ErrorCode() == "BucketAlreadyExists") {
			return nil
		}
		return err
	})
	return cfg
}

// s3TestConfig is the configuration of a fresh prefix of bucket on the test server at ep.
func s3TestConfig(ep, bucket string) s3.Config {
	return s3.Config{
		Bucket:          bucket,
		Prefix:          UniquePrefix(),
		Region:          envOr(EnvS3Region, "us-east-1"),
		Endpoint:        ep,
		PathStyle:       true,
		AllowHTTP:       true,
		AccessKeyID:     envOr(EnvS3AccessKeyID, "deltavacuum-test"),
		SecretAccessKey: envOr(EnvS3SecretAccessKey, "deltavacuum-test-secret"),
	}
}

// NewS3Config returns a store for cfg, emptied when the test ends.
func NewS3Config(t *testing.T, cfg s3.Config) *s3.Store {
	t.Helper()
	st, err := s3.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	clean := cfg
	clean.WrapTransport = nil
	cst, err := s3.New(context.Background(), clean)
	if err != nil {
		t.Fatal(err)
	}
	cleanupStore(t, cst)
	return st
}

// NewS3 returns a store on a fresh prefix of the S3 test bucket.
func NewS3(t *testing.T) *s3.Store {
	t.Helper()
	return NewS3Config(t, S3Config(t))
}

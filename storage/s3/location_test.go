package s3

import (
	"fmt"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage/location"
)

// The resolution of s3:// locations (moved here from package location with the code).

func mustResolve(t *testing.T, uri string, o location.Options) Config {
	t.Helper()
	c, err := location.ResolveConfig(uri, o.WithEnv(func(string) string { return "" }), configFor)
	if err != nil {
		t.Fatalf("resolve(%q): %v", uri, err)
	}
	return c
}

func TestResolveS3(t *testing.T) {
	tg := mustResolve(t, "s3a://bucket/tables/my%20table/", location.Options{"aws_endpoint": "http://127.0.0.1:7070", "aws_allow_http": "1", "delete_batch_size": "500", "max_retries": "2"})
	c := tg
	if c.Bucket != "bucket" || c.Prefix != "tables/my table" || !c.PathStyle || !c.AllowHTTP || c.BatchSize != 500 || c.MaxAttempts != 3 {
		t.Fatalf("%+v", c)
	}
	if c.Location != "s3a://bucket/tables/my%20table" {
		t.Errorf("Location %q", c.Location)
	}
	if c := mustResolve(t, "s3://b", location.Options{"aws_endpoint": "https://minio.example", "aws_virtual_hosted_style_request": "true"}); c.PathStyle {
		t.Error("virtual hosted style ignored")
	}
	if c := mustResolve(t, "s3://b/x", nil); c.PathStyle || c.Endpoint != "" || c.Prefix != "x" {
		t.Errorf("%+v", c)
	}
}

func TestAzureKeyOnS3(t *testing.T) {
	// An Azure key on an S3 location changes nothing there.
	tg := mustResolve(t, "s3://b/t", location.Options{"azure_use_fabric_endpoint": "true", "aws_endpoint": "http://127.0.0.1:7070", "aws_allow_http": "true"})
	if tg.Endpoint != "http://127.0.0.1:7070" {
		t.Errorf("s3 with an Azure key: %+v", tg)
	}
}

func TestS3ConfigNeverPrintsSecrets(t *testing.T) {
	c := mustResolve(t, "s3://b/t", location.Options{"aws_secret_access_key": "SECRET1", "aws_access_key_id": "AKID", "aws_session_token": "SECRET2"})
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, c); strings.Contains(s, "SECRET") {
			t.Errorf("%s of a config shows a secret: %s", verb, s)
		}
	}
}

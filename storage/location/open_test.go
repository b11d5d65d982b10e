package location_test

import (
	"context"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage/location"
	_ "github.com/deltavacuum/deltavacuum/storage/location/all"
)

func TestErrorsHideSecrets(t *testing.T) {
	for _, uri := range []string{
		"ftp://user:SECRETPW@host/x",
		"https://example.com/x?sig=SECRETSIG",
		"s3://user:SECRETPW@/x",
		"abfss://myacct.dfs.core.windows.net/x?sig=SECRETSIG",
	} {
		_, err := location.Open(context.Background(), uri, nil)
		if err == nil {
			t.Errorf("Open(%q) succeeded", location.SafeURI(uri))
			continue
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("Open error shows a secret: %v", err)
		}
	}
	_, err := location.Open(context.Background(), "s3://b/x", location.Options{"aws_endpoint": "http://SECRETUSER:SECRETPW@127.0.0.1:1/?x=SECRET"})
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("Open error: %v", err)
	}
}

func TestLocationHasNoSecret(t *testing.T) {
	s, err := location.Open(context.Background(), "https://acct.blob.core.windows.net/c/t?sv=2022-11-02&sp=rl&sig=SECRETSIG", nil)
	if err != nil {
		t.Fatal(err)
	}
	if loc := s.Location(); strings.Contains(loc, "SECRET") || loc != "abfss://c@acct.dfs.core.windows.net/t" {
		t.Fatalf("Location %q", loc)
	}
	s, err = location.Open(context.Background(), "s3://bucket/t", location.Options{"aws_access_key_id": "AKID", "aws_secret_access_key": "SECRET", "aws_region": "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if loc := s.Location(); loc != "s3://bucket/t" {
		t.Fatalf("Location %q", loc)
	}
}

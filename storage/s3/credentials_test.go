package s3

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
)

// noAWSCredentials leaves the AWS SDK nothing to find: no AWS_* variable, a HOME and shared
// files that do not exist, and the EC2 instance metadata service switched off (the SDK honours
// AWS_EC2_METADATA_DISABLED, so that it is never contacted).
func noAWSCredentials(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, "") // restored after the test
			os.Unsetenv(k)
		}
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(home, "no-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "no-credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// TestNoCredentialsSaysWhatToSet: without credentials, the error is one paragraph that names
// the table, where the SDK looked and what to set (options, variables, the anonymous way),
// not the SDK's chain ("failed to refresh cached credentials, no EC2 IMDS role found, …").
func TestNoCredentialsSaysWhatToSet(t *testing.T) {
	noAWSCredentials(t)
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusForbidden)
	}))
	defer srv.Close()
	st, err := New(context.Background(), Config{Bucket: "bucket", Prefix: "sales", Region: "us-east-1", Endpoint: srv.URL, AllowHTTP: true, PathStyle: true, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	for name, op := range map[string]func() error{
		"stat": func() error { _, err := st.Stat(context.Background(), "_delta_log/_last_checkpoint"); return err },
		"walk": func() error {
			return st.Walk(context.Background(), "_delta_log/", func(storage.Object) error { return nil })
		},
	} {
		err := op()
		var ce *CredentialError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: %v, want a CredentialError", name, err)
		}
		msg := err.Error()
		for _, want := range []string{"no AWS credentials for s3://bucket/sales", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "~/.aws/credentials",
			"--storage-option aws_access_key_id and aws_secret_access_key", "aws_profile", "aws_skip_signature=true"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the message lacks %q:\n%s", name, want, msg)
			}
		}
		for _, sdk := range []string{"IMDS", "failed to refresh", "get identity", "operation error"} {
			if strings.Contains(msg, sdk) {
				t.Errorf("%s: the message carries the SDK's %q:\n%s", name, sdk, msg)
			}
		}
		if strings.Count(msg, "\n") > 0 {
			t.Errorf("%s: more than one paragraph:\n%s", name, msg)
		}
		if ce.Unwrap() == nil || !strings.Contains(ce.Unwrap().Error(), "IMDS") {
			t.Errorf("%s: the SDK's error is not kept: %v", name, ce.Unwrap())
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d unsigned requests reached the store", n)
	}

	// A public bucket: aws_skip_signature sends the request, unsigned.
	st, err = New(context.Background(), Config{Bucket: "bucket", Region: "us-east-1", Endpoint: srv.URL, AllowHTTP: true, PathStyle: true, MaxAttempts: 1, SkipSignature: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Stat(context.Background(), "k")
	var ce *CredentialError
	if errors.As(err, &ce) || requests.Load() == 0 {
		t.Errorf("skip signature: %v, %d requests; want the request sent", err, requests.Load())
	}
}

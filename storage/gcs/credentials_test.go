package gcs

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
)

// noGoogleCredentials leaves application default credentials nothing to find: no
// GOOGLE_APPLICATION_CREDENTIALS, a HOME (and CLOUDSDK_CONFIG, APPDATA) without gcloud's
// configuration, and no metadata server (onGCE answers false without probing one).
func noGoogleCredentials(t *testing.T) string {
	t.Helper()
	for _, k := range []string{"GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_SERVICE_ACCOUNT", "GOOGLE_SERVICE_ACCOUNT_PATH", "GOOGLE_SERVICE_ACCOUNT_KEY", "STORAGE_EMULATOR_HOST", "GCE_METADATA_HOST"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("APPDATA", home)
	t.Setenv("CLOUDSDK_CONFIG", filepath.Join(home, "gcloud-config"))
	orig := onGCE
	t.Cleanup(func() { onGCE = orig })
	onGCE = func() bool { return false }
	return home
}

// TestNoCredentialsSaysWhatToSet: without credentials, the error is one paragraph that names
// the table, where application default credentials are looked for and what to set (options,
// variables, the anonymous way), and nothing is sent.
func TestNoCredentialsSaysWhatToSet(t *testing.T) {
	home := noGoogleCredentials(t)
	var requests atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusForbidden)
	}))
	defer srv.Close()
	_, err := New(context.Background(), Config{Bucket: "bucket", Prefix: "sales", Endpoint: srv.URL, MaxAttempts: 1})
	var ce *CredentialError
	if !errors.As(err, &ce) {
		t.Fatalf("New: %v, want a CredentialError", err)
	}
	msg := err.Error()
	for _, want := range []string{"no Google Cloud credentials for gs://bucket/sales", "GOOGLE_APPLICATION_CREDENTIALS",
		filepath.Join(home, ".config", "gcloud", "application_default_credentials.json"), "gcloud auth application-default login",
		"--storage-option google_service_account", "google_service_account_key", "google_skip_signature=true"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("more than one paragraph:\n%s", msg)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the store", n)
	}

	// Where a source exists, the SDK looks as always: gcloud's file (here one it cannot use).
	adc := filepath.Join(home, "gcloud-config", "application_default_credentials.json")
	if err := os.MkdirAll(filepath.Dir(adc), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(adc, []byte(`{"type":"authorized_user","client_id":"x","client_secret":"y","refresh_token":"z"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if ce := noDefaultCredentials("gs://bucket"); ce != nil {
		t.Errorf("with %s: %v, want the SDK to look", adc, ce)
	}
	os.Remove(adc)
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(home, "key.json"))
	if ce := noDefaultCredentials("gs://bucket"); ce != nil {
		t.Errorf("with GOOGLE_APPLICATION_CREDENTIALS: %v, want the SDK to look", ce)
	}
	os.Unsetenv("GOOGLE_APPLICATION_CREDENTIALS")
	onGCE = func() bool { return true }
	if ce := noDefaultCredentials("gs://bucket"); ce != nil {
		t.Errorf("on a Google Cloud machine: %v, want the SDK to look", ce)
	}

	// A public bucket: google_skip_signature needs no credentials.
	onGCE = func() bool { return false }
	if _, err := New(context.Background(), Config{Bucket: "bucket", Endpoint: srv.URL, Anonymous: true}); err != nil {
		t.Errorf("anonymous: %v", err)
	}
}

func TestSDKsNoCredentialsIsExplained(t *testing.T) {
	sdk := errors.New("credentials: could not find default credentials. See https://cloud.google.com/docs/authentication/external/set-up-adc for more information")
	err := explainNoCredentials(sdk, "gs://b/t")
	var ce *CredentialError
	if !errors.As(err, &ce) || !errors.Is(err, sdk) || !strings.Contains(err.Error(), "gs://b/t") || strings.Contains(err.Error(), "could not find") {
		t.Errorf("got %v", err)
	}
	other := errors.New("credentials: invalid key")
	if got := explainNoCredentials(other, "gs://b/t"); got != other {
		t.Errorf("another error became %v", got)
	}
}

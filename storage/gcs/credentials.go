package gcs

import (
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"cloud.google.com/go/compute/metadata"
)

// CredentialError is the absence of Google Cloud credentials, told in one paragraph: for which
// table, where application default credentials are looked for, and which storage options or
// environment variables give credentials (as storage/azure's CredentialError does for Microsoft
// Entra). Err is the SDK's error when it was the SDK that found none (logged at debug level).
type CredentialError struct {
	// Location is the table, or the bucket and prefix of the store.
	Location string
	// WellKnown is the file gcloud auth application-default login writes, on this machine.
	WellKnown string
	Err       error
}

func (e *CredentialError) Error() string {
	return "no Google Cloud credentials for " + e.Location + ": application default credentials found none " +
		"(GOOGLE_APPLICATION_CREDENTIALS is not set, there is no " + e.WellKnown + " from gcloud auth application-default login, " +
		"and no metadata server of a Google Cloud machine answers). Give --storage-option google_service_account with the path of " +
		"a service-account key file, or google_service_account_key with the key's JSON; or set GOOGLE_APPLICATION_CREDENTIALS " +
		"(or GOOGLE_SERVICE_ACCOUNT) to such a file, or run gcloud auth application-default login. A public bucket needs none: " +
		"--storage-option google_skip_signature=true sends no credentials."
}

func (e *CredentialError) Unwrap() error { return e.Err }

// onGCE reports whether a metadata server gives this machine's credentials (memoized by the
// SDK). A variable so that a test never probes one: the probe sends a request to 169.254.169.254
// and a DNS query for metadata.google.internal.
var onGCE = metadata.OnGCE

// adcFiles are the files application default credentials are read from besides
// $GOOGLE_APPLICATION_CREDENTIALS: gcloud's, where the SDK looks for it (cloud.google.com/go/auth:
// %APPDATA%\gcloud on Windows, $HOME/.config/gcloud elsewhere; golang.org/x/oauth2/google:
// $CLOUDSDK_CONFIG too).
func adcFiles() []string {
	const name = "application_default_credentials.json"
	var out []string
	if d := os.Getenv("CLOUDSDK_CONFIG"); d != "" {
		out = append(out, filepath.Join(d, name))
	}
	if runtime.GOOS == "windows" {
		return append(out, filepath.Join(os.Getenv("APPDATA"), "gcloud", name))
	}
	home := os.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return append(out, filepath.Join(home, ".config", "gcloud", name))
}

// noDefaultCredentials returns the CredentialError of loc when application default
// credentials have nowhere to come from, and nil when the SDK may find some: then the SDK
// looks, as always.
func noDefaultCredentials(loc string) *CredentialError {
	if os.Getenv("GOOGLE_APPLICATION_CREDENTIALS") != "" {
		return nil
	}
	files := adcFiles()
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			return nil
		}
	}
	if onGCE() {
		return nil
	}
	return &CredentialError{Location: loc, WellKnown: files[len(files)-1]}
}

// explainNoCredentials turns the SDK's "could not find default credentials" into the
// CredentialError of loc; other errors are returned as they are.
func explainNoCredentials(err error, loc string) error {
	if err == nil || !strings.Contains(err.Error(), "could not find default credentials") {
		return err
	}
	slog.Debug("google sdk: no credentials", "location", loc, "error", err.Error())
	files := adcFiles()
	return &CredentialError{Location: loc, WellKnown: files[len(files)-1], Err: err}
}

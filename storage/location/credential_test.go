package location

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage/azure"
)

// noAzureCredentials clears every environment variable that gives the SDK's default chain a
// credential, points managed identity at a loopback endpoint that refuses (the App Service
// protocol, so that nothing probes the real instance metadata address), and empties PATH so
// that no Azure CLI, Azure Developer CLI or PowerShell is found: the chain fails the same way
// on every machine, and no request leaves 127.0.0.1.
func noAzureCredentials(t *testing.T) {
	t.Helper()
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":"invalid_request","error_description":"Identity not found"}`))
	}))
	t.Cleanup(refuse.Close)
	for _, e := range []string{
		"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH",
		"AZURE_USERNAME", "AZURE_PASSWORD", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_TOKEN_CREDENTIALS",
		"MSI_ENDPOINT", "MSI_SECRET", "IMDS_ENDPOINT", "IDENTITY_SERVER_THUMBPRINT",
		"AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_ACCESS_KEY", "AZURE_STORAGE_KEY",
		"AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_SAS_KEY", "AZURE_STORAGE_TOKEN", "AZURE_USE_AZURE_CLI",
		"AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT",
		"AZURE_STORAGE_USE_EMULATOR", "AZURE_SKIP_SIGNATURE",
	} {
		t.Setenv(e, "") // restored at the end
		os.Unsetenv(e)
	}
	t.Setenv("IDENTITY_ENDPOINT", refuse.URL+"/msi/token")
	t.Setenv("IDENTITY_HEADER", "not-a-secret")
	t.Setenv("PATH", t.TempDir())
}

// blobEndpoint is a Blob endpoint that no request may reach (the credential fails first).
func blobEndpoint(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request reached the Blob endpoint without a credential: %s %s", r.Method, r.URL.Path)
		w.WriteHeader(http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/acct"
}

// checkParagraph checks that a credential failure reads as one short paragraph naming the
// table and the ways to give a credential, without the SDK's dump.
func checkParagraph(t *testing.T, err error, table string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error without a credential")
	}
	var ce *azure.CredentialError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not an azure.CredentialError", err)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\t") || len(msg) > 1000 {
		t.Errorf("not one short paragraph (%d characters): %q", len(msg), msg)
	}
	// The command line redacts the value after a secret key's '=': the advice names the keys
	// without one, so that it is printed as written.
	for _, k := range []string{"azure_storage_account_key=", "azure_storage_sas_token=", "azure_storage_token=", "azure_client_secret="} {
		if strings.Contains(msg, k) {
			t.Errorf("the message writes %q, which the command line would print redacted: %s", k, msg)
		}
	}
	for _, dump := range []string{"RESPONSE 400", "-----", "Identity not found", "troubleshoot", "127.0.0.1"} {
		if strings.Contains(msg, dump) {
			t.Errorf("the message holds the SDK's dump (%q): %s", dump, msg)
		}
	}
	for _, w := range append([]string{table, "azure_storage_account_key", "azure_storage_sas_token", "azure_client_id", "azure_client_secret",
		"azure_tenant_id", "azure_storage_token", "azure_use_azure_cli", "AZURE_STORAGE_ACCOUNT_KEY", "AZURE_CLIENT_ID"}, want...) {
		if !strings.Contains(msg, w) {
			t.Errorf("the message does not say %q: %s", w, msg)
		}
	}
}

func statLog(t *testing.T, uri string, o Options) error {
	t.Helper()
	st, err := Open(context.Background(), uri, o)
	if err != nil {
		return err
	}
	_, err = st.Stat(context.Background(), "_delta_log/")
	return err
}

// The default chain, with nothing configured: one paragraph saying which of its credentials
// were tried, with the default retries (a credential failure is not retried).
func TestMissingCredentialDefaultChain(t *testing.T) {
	noAzureCredentials(t)
	err := statLog(t, "az://c/t", Options{"azure_endpoint": blobEndpoint(t), "azure_allow_http": "true"})
	checkParagraph(t, err, "az://c/t", "default chain", "environment", "workload identity", "managed identity, which was refused with HTTP 400")
}

// AZURE_TOKEN_CREDENTIALS=dev: the developer tools, none of them on PATH.
func TestMissingCredentialDeveloperTools(t *testing.T) {
	noAzureCredentials(t)
	t.Setenv("AZURE_TOKEN_CREDENTIALS", "dev")
	err := statLog(t, "az://c/t", Options{"azure_endpoint": blobEndpoint(t), "azure_allow_http": "true"})
	checkParagraph(t, err, "az://c/t", "Azure CLI: az login", "Azure Developer CLI")
}

// azure_use_azure_cli=true without the Azure CLI on PATH.
func TestMissingCredentialAzureCLI(t *testing.T) {
	noAzureCredentials(t)
	err := statLog(t, "az://c/t", Options{"azure_endpoint": blobEndpoint(t), "azure_allow_http": "true", "azure_use_azure_cli": "true"})
	checkParagraph(t, err, "az://c/t", "the Azure CLI (azure_use_azure_cli)", "not found")
}

package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/deltavacuum/deltavacuum/storage/location"
)

// The resolution of Azure locations (moved here from package location with the code).

func noEnv(string) string { return "" }

// resolve resolves an Azure location as location.Open does, without opening it.
func resolve(uri string, o location.Options) (*target, error) {
	l, err := location.ParseObject(uri, o)
	if err != nil {
		return nil, err
	}
	if l.Kind != "azure" {
		return nil, fmt.Errorf("%s is a %s location", uri, l.Kind)
	}
	return resolveTarget(l, o)
}

func mustResolve(t *testing.T, uri string, o location.Options) *target {
	t.Helper()
	tg, err := resolve(uri, o.WithEnv(noEnv))
	if err != nil {
		t.Fatalf("resolve(%q): %v", uri, err)
	}
	return tg
}

func TestAzureSASOfTheLocation(t *testing.T) {
	tg, err := resolve("abfss://c@acct.dfs.core.windows.net/t?sv=1&sig=x", location.Options{})
	if err != nil || tg.az.SASToken != "sv=1&sig=x" {
		t.Errorf("an abfss:// SAS is used: %+v %v", tg, err)
	}
}

func TestAzureConfigNeverPrintsSecrets(t *testing.T) {
	o := location.Options{"azure_storage_account_name": "acct", "azure_storage_account_key": "U0VDUkVUMw==", "azure_storage_sas_token": "sv=1&sig=SECRET4"}
	c := mustResolve(t, "az://c/t", o).az
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, c); strings.Contains(s, "SECRET") || strings.Contains(s, "U0VDUkVUMw") {
			t.Errorf("%s of a config shows a secret: %s", verb, s)
		}
	}
}

// The storage-option keys Fabric and delta-rs users pass (object_store's AzureConfigKey list):
// each is honoured, ignored where ignoring it is correct, or refused with what to use instead.

func TestUseFabricEndpoint(t *testing.T) {
	const lake = "https://onelake.blob.fabric.microsoft.com"
	for _, tc := range []struct {
		uri        string
		opts       []string
		service    string // want ServiceURL; "" when refused
		wantErr    string
		wantLoc    string
		wantPrefix string
	}{
		{uri: "az://ws/lh.Lakehouse/Tables/t", opts: []string{"use_fabric_endpoint=true"}, service: lake,
			wantLoc: "abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse/Tables/t", wantPrefix: "lh.Lakehouse/Tables/t"},
		{uri: "az://ws/lh.Lakehouse/Tables/t", opts: []string{"AZURE_USE_FABRIC_ENDPOINT=1"}, service: lake},
		{uri: "az://ws/lh.Lakehouse/Tables/t", opts: []string{"azure_storage_use_fabric_endpoint=yes", "account_name=onelake"}, service: lake},
		{uri: "az://ws/lh.Lakehouse/Tables/t", opts: []string{"azure_use_fabric_endpoint=true", "azure_storage_account_name=WestUS-OneLake"},
			service: "https://westus-onelake.blob.fabric.microsoft.com", wantLoc: "abfss://ws@westus-onelake.dfs.fabric.microsoft.com/lh.Lakehouse/Tables/t"},
		// A key meant for S3 changes nothing on an Azure location.
		{uri: "az://ws/lh.Lakehouse/Tables/t", opts: []string{"use_fabric_endpoint=true", "aws_endpoint=http://127.0.0.1:1", "aws_s3_path_style=true"}, service: lake},
		// The URI names OneLake already: the option agrees, or is false (the default).
		{uri: "abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse/Tables/t", opts: []string{"use_fabric_endpoint=true"}, service: lake},
		{uri: "abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse/Tables/t", opts: []string{"use_fabric_endpoint=false"}, service: lake},
		{uri: "https://onelake.dfs.fabric.microsoft.com/ws/lh.Lakehouse/Tables/t", opts: []string{"use_fabric_endpoint=true"}, service: lake},
		// Empty is false: az:// then needs an account, as without the option.
		{uri: "az://ws/lh.Lakehouse/Tables/t", opts: []string{"use_fabric_endpoint="}, wantErr: "azure_storage_account_name"},
		// Hostile and contradictory.
		{uri: "az://ws/t", opts: []string{"use_fabric_endpoint=maybe"}, wantErr: "want true or false"},
		{uri: "az://ws/t", opts: []string{"use_fabric_endpoint=true", "azure_storage_account_name=acct"}, wantErr: "onelake or REGION-onelake"},
		{uri: "az://ws/t", opts: []string{"use_fabric_endpoint=true", "azure_storage_account_name=evil.example/x"}, wantErr: "onelake or REGION-onelake"},
		{uri: "az://ws/t", opts: []string{"use_fabric_endpoint=true", "azure_storage_account_name=onelake.evil.example"}, wantErr: "onelake or REGION-onelake"},
		{uri: "az://ws/t", opts: []string{"use_fabric_endpoint=true", "azure_storage_account_name=-onelake"}, wantErr: "onelake or REGION-onelake"},
		{uri: "abfss://c@acct.dfs.core.windows.net/t", opts: []string{"use_fabric_endpoint=true"}, wantErr: "not a OneLake host"},
		{uri: "https://acct.blob.core.windows.net/c/t", opts: []string{"use_fabric_endpoint=true"}, wantErr: "not a OneLake host"},
		{uri: "wasbs://c@blob.example.com/t", opts: []string{"use_fabric_endpoint=true"}, wantErr: "not a OneLake host"},
		{uri: "az://ws/t", opts: []string{"use_fabric_endpoint=true", "azure_endpoint=https://blob.example.com"}, wantErr: "azure_endpoint"},
		{uri: "az://ws/t", opts: []string{"use_fabric_endpoint=true", "azure_storage_use_emulator=true"}, wantErr: "azure_storage_use_emulator"},
	} {
		name := tc.uri + " " + strings.Join(tc.opts, " ")
		o, err := location.ParseStorageOptions(tc.opts)
		if err == nil {
			var tg *target
			tg, err = resolve(tc.uri, o.WithEnv(noEnv))
			if err == nil {
				c := tg.az
				if tc.wantErr != "" {
					t.Errorf("%s: resolved to %s, want an error about %q", name, c.ServiceURL, tc.wantErr)
					continue
				}
				if c.ServiceURL != tc.service || c.Container != "ws" || c.Account != "" || c.AccountKey != "" {
					t.Errorf("%s: ServiceURL %q container %q account %q, want %q ws and no account", name, c.ServiceURL, c.Container, c.Account, tc.service)
				}
				if tc.wantLoc != "" && c.Location != tc.wantLoc {
					t.Errorf("%s: Location %q, want %q", name, c.Location, tc.wantLoc)
				}
				if tc.wantPrefix != "" && c.Prefix != tc.wantPrefix {
					t.Errorf("%s: Prefix %q, want %q", name, c.Prefix, tc.wantPrefix)
				}
				if !strings.Contains(c.DFSURL, ".dfs.fabric.microsoft.com") {
					t.Errorf("%s: DFS endpoint %q, want OneLake's", name, c.DFSURL)
				}
				continue
			}
		}
		if tc.wantErr == "" {
			t.Errorf("%s: %v", name, err)
		} else if !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %q, want it to say %q", name, err, tc.wantErr)
		}
	}
}

// clearAzureIdentityEnv unsets what the SDK's credentials read from the environment.
func clearAzureIdentityEnv(t *testing.T) {
	for _, e := range []string{"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST",
		"IDENTITY_ENDPOINT", "IDENTITY_HEADER", "MSI_ENDPOINT", "IMDS_ENDPOINT", "IDENTITY_SERVER_THUMBPRINT"} {
		t.Setenv(e, "")
		os.Unsetenv(e)
	}
}

func credentialFor(t *testing.T, uri string, flags ...string) (any, error) {
	t.Helper()
	o, err := location.ParseStorageOptions(flags)
	if err != nil {
		return nil, err
	}
	tg, err := resolve(uri, o.WithEnv(noEnv))
	if err != nil {
		return nil, err
	}
	return tg.azureCredential() // builds the credential; no token is requested
}

func TestAzureIdentityKeys(t *testing.T) {
	clearAzureIdentityEnv(t)
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("a.b.c"), 0o600); err != nil {
		t.Fatal(err)
	}
	const uri = "abfss://c@acct.dfs.core.windows.net/t"
	type kind int
	const (
		refused kind = iota
		managed
		workload
		secret
	)
	for _, tc := range []struct {
		flags   []string
		want    kind
		wantErr string
	}{
		{[]string{"azure_object_id=00000000-0000-0000-0000-000000000001"}, managed, ""},
		{[]string{"object_id=00000000-0000-0000-0000-000000000001"}, managed, ""},
		{[]string{"msi_resource_id=/subscriptions/s/resourceGroups/g/providers/Microsoft.ManagedIdentity/userAssignedIdentities/i"}, managed, ""},
		{[]string{"azure_federated_token_file=" + token, "azure_client_id=id", "azure_tenant_id=tenant"}, workload, ""},
		{[]string{"federated_token_file=" + token, "client_id=id", "authority_id=tenant", "authority_host=https://login.microsoftonline.us"}, workload, ""},
		{[]string{"azure_client_id=id", "azure_client_secret=s", "azure_tenant_id=tenant", "azure_authority_host=https://login.chinacloudapi.cn"}, secret, ""},
		// Empty, contradictory, incomplete.
		{[]string{"azure_object_id="}, refused, "empty"},
		{[]string{"azure_msi_resource_id= "}, refused, "empty"},
		{[]string{"azure_federated_token_file="}, refused, "empty"},
		{[]string{"azure_object_id=o", "azure_msi_resource_id=r"}, refused, "two managed identities"},
		{[]string{"azure_object_id=o", "azure_client_id=id"}, refused, "twice"},
		{[]string{"azure_object_id=o", "azure_client_id=id", "azure_client_secret=s", "azure_tenant_id=t"}, refused, "twice"},
		{[]string{"azure_object_id=o", "azure_storage_account_key=a2V5"}, refused, "two credentials"},
		{[]string{"azure_object_id=o", "azure_use_azure_cli=true"}, refused, "two credentials"},
		{[]string{"azure_msi_resource_id=r", "azure_storage_token=tok"}, refused, "two credentials"},
		{[]string{"azure_object_id=o", "azure_federated_token_file=" + token}, refused, "two credentials"},
		{[]string{"azure_federated_token_file=" + token, "azure_client_id=id", "azure_client_secret=s", "azure_tenant_id=t"}, refused, "two credentials"},
		{[]string{"azure_federated_token_file=" + token, "azure_storage_sas_token=sv=1&sig=x"}, refused, "two credentials"},
		{[]string{"azure_federated_token_file=" + token + ".missing", "azure_client_id=id", "azure_tenant_id=t"}, refused, "not a readable file"},
		{[]string{"azure_federated_token_file=" + filepath.Dir(token), "azure_client_id=id", "azure_tenant_id=t"}, refused, "not a readable file"},
		{[]string{"azure_federated_token_file=" + token}, refused, "needs azure_client_id and azure_tenant_id"},
		{[]string{"azure_authority_host=https://login.microsoftonline.us"}, refused, "only with a service principal"},
		{[]string{"azure_authority_host=http://127.0.0.1:1", "azure_client_id=id", "azure_client_secret=s", "azure_tenant_id=t"}, refused, "https://"},
		{[]string{"azure_authority_host=https://user:pw@login.example", "azure_client_id=id", "azure_client_secret=s", "azure_tenant_id=t"}, refused, "https://"},
		{[]string{"azure_client_id=id"}, refused, "azure_object_id or azure_msi_resource_id"},
	} {
		name := strings.Join(tc.flags, " ")
		cred, err := credentialFor(t, uri, tc.flags...)
		if tc.want == refused {
			if err == nil {
				t.Errorf("%s: accepted (%T), want an error about %q", name, cred, tc.wantErr)
			} else if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %q, want it to say %q", name, err, tc.wantErr)
			}
			if err != nil && (strings.Contains(err.Error(), "a2V5") || strings.Contains(err.Error(), "sig=x")) {
				t.Errorf("%s: the error shows a secret: %v", name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var ok bool
		switch tc.want {
		case managed:
			_, ok = cred.(*azidentity.ManagedIdentityCredential)
		case workload:
			_, ok = cred.(*azidentity.WorkloadIdentityCredential)
		case secret:
			_, ok = cred.(*azidentity.ClientSecretCredential)
		}
		if !ok {
			t.Errorf("%s: credential %T", name, cred)
		}
	}
}

// Keys other tools take that deltavacuum cannot honour are refused, saying what to use
// instead, and never showing their values.
func TestRefusedAzureKeys(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"azure_msi_endpoint=http://127.0.0.1:1/token", "IDENTITY_ENDPOINT"},
		{"msi_endpoint=http://127.0.0.1:1/token", "IDENTITY_ENDPOINT"},
		{"identity_endpoint=http://127.0.0.1:1/token", "IDENTITY_ENDPOINT"},
		{"azure_identity_endpoint=http://127.0.0.1:1/token", "azure_storage_token"},
		{"azure_fabric_token_service_url=https://127.0.0.1:1", "notebookutils.credentials.getToken('storage')"},
		{"fabric_workload_host=127.0.0.1", "azure_storage_token"},
		{"azure_fabric_session_token=SECRET-SESSION", "azure_storage_token"},
		{"fabric_cluster_identifier=cluster-42", "azure_storage_token"},
		{"azure_credential_type=managed_identity", "give only the keys of the credential wanted"},
		{"credential_type=auto", "give only the keys"},
		{"azure_storage_encryption_key=SECRET-CPK", "customer-provided"},
	} {
		_, err := location.ParseStorageOptions([]string{tc.flag})
		if err == nil {
			t.Errorf("%s: accepted", tc.flag)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("%s: error %q, want it to say %q", tc.flag, err, tc.want)
		}
		if _, v, _ := strings.Cut(tc.flag, "="); strings.Contains(err.Error(), v) {
			t.Errorf("%s: the error shows the value: %v", tc.flag, err)
		}
		// Refused in the options a library caller builds, too.
		k, v, _ := strings.Cut(tc.flag, "=")
		name, _ := location.Canonical(k)
		if _, err := resolve("abfss://c@acct.dfs.core.windows.net/t", location.Options{name: v}); err == nil {
			t.Errorf("%s: resolve accepted it", tc.flag)
		}
	}
	for _, k := range []string{"azure_fabric_session_token", "azure_storage_encryption_key"} {
		if (location.Options{k: "SECRET"}).String() != k+"=****" {
			t.Errorf("%s is not a secret option: %s", k, location.Options{k: "SECRET"}.String())
		}
	}
}

func TestContainerNameAndTagging(t *testing.T) {
	const uri = "abfss://c@acct.dfs.core.windows.net/t"
	base := mustResolve(t, uri, nil).az
	for _, flags := range [][]string{{"azure_container_name=c"}, {"container_name=c"}, {"azure_disable_tagging=true"}, {"disable_tagging=false"}} {
		o, err := location.ParseStorageOptions(flags)
		if err != nil {
			t.Errorf("%v: %v", flags, err)
			continue
		}
		if got := mustResolve(t, uri, o).az; got.String() != base.String() {
			t.Errorf("%v changed the store: %v, want %v", flags, got, base)
		}
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"azure_container_name=other"}, "not the container"},
		{[]string{"azure_container_name=C"}, "not the container"},
		{[]string{"azure_container_name="}, "empty"},
		{[]string{"disable_tagging=maybe"}, "want true or false"},
	} {
		o, err := location.ParseStorageOptions(tc.flags)
		if err == nil {
			_, err = resolve(uri, o.WithEnv(noEnv))
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error about %q", tc.flags, err, tc.want)
		}
	}
}

func TestAzureAliases(t *testing.T) {
	for alias, want := range map[string]string{
		"azure_storage_master_key": "azure_storage_account_key", "master_key": "azure_storage_account_key",
		"azure_storage_authority_id": "azure_tenant_id", "authority_id": "azure_tenant_id",
		"object_store_use_emulator": "azure_storage_use_emulator", "azure_storage_authority_host": "azure_authority_host",
		"azure_storage_use_fabric_endpoint": "azure_use_fabric_endpoint", "identity_endpoint": "azure_msi_endpoint",
	} {
		if got, ok := location.Canonical(alias); !ok || got != want {
			t.Errorf("location.Canonical(%q) = %q, %v; want %q", alias, got, ok, want)
		}
	}
	if _, err := location.ParseStorageOptions([]string{"master_key=SECRET"}); err != nil {
		t.Fatal(err)
	}
	if s := (location.Options{"azure_storage_account_key": "SECRET"}).String(); strings.Contains(s, "SECRET") {
		t.Errorf("account key shown: %s", s)
	}
}

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
	var ce *CredentialError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not an CredentialError", err)
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

func statLog(t *testing.T, uri string, o location.Options) error {
	t.Helper()
	st, err := location.Open(context.Background(), uri, o)
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
	err := statLog(t, "az://c/t", location.Options{"azure_endpoint": blobEndpoint(t), "azure_allow_http": "true"})
	checkParagraph(t, err, "az://c/t", "default chain", "environment", "workload identity", "managed identity, which was refused with HTTP 400")
}

// AZURE_TOKEN_CREDENTIALS=dev: the developer tools, none of them on PATH.
func TestMissingCredentialDeveloperTools(t *testing.T) {
	noAzureCredentials(t)
	t.Setenv("AZURE_TOKEN_CREDENTIALS", "dev")
	err := statLog(t, "az://c/t", location.Options{"azure_endpoint": blobEndpoint(t), "azure_allow_http": "true"})
	checkParagraph(t, err, "az://c/t", "Azure CLI: az login", "Azure Developer CLI")
}

// azure_use_azure_cli=true without the Azure CLI on PATH.
func TestMissingCredentialAzureCLI(t *testing.T) {
	noAzureCredentials(t)
	err := statLog(t, "az://c/t", location.Options{"azure_endpoint": blobEndpoint(t), "azure_allow_http": "true", "azure_use_azure_cli": "true"})
	checkParagraph(t, err, "az://c/t", "the Azure CLI (azure_use_azure_cli)", "not found")
}

func TestResolveAzure(t *testing.T) {
	cases := []struct {
		uri                                 string
		opts                                location.Options
		service, container, prefix, account string
		location                            string
	}{
		{"abfss://data@myacct.dfs.core.windows.net/tables/t1", nil,
			"https://myacct.blob.core.windows.net", "data", "tables/t1", "myacct", "abfss://data@myacct.dfs.core.windows.net/tables/t1"},
		{"abfs://data@myacct.dfs.core.windows.net/t", nil,
			"https://myacct.blob.core.windows.net", "data", "t", "myacct", "abfss://data@myacct.dfs.core.windows.net/t"},
		{"wasbs://data@myacct.blob.core.windows.net/t/", nil,
			"https://myacct.blob.core.windows.net", "data", "t", "myacct", "abfss://data@myacct.dfs.core.windows.net/t"},
		{"az://data/t", location.Options{"azure_storage_account_name": "acct2"},
			"https://acct2.blob.core.windows.net", "data", "t", "acct2", "abfss://data@acct2.dfs.core.windows.net/t"},
		{"https://myacct.blob.core.windows.net/data/t/x", nil,
			"https://myacct.blob.core.windows.net", "data", "t/x", "myacct", "abfss://data@myacct.dfs.core.windows.net/t/x"},
		{"https://myacct.dfs.core.windows.net/data/t?sv=2022-11-02&sig=SECRETSIG", nil,
			"https://myacct.blob.core.windows.net", "data", "t", "myacct", "abfss://data@myacct.dfs.core.windows.net/t"},
		// OneLake, by names and by GUIDs.
		{"abfss://MyWorkspace@onelake.dfs.fabric.microsoft.com/MyLakehouse.Lakehouse/Tables/sales", nil,
			"https://onelake.blob.fabric.microsoft.com", "MyWorkspace", "MyLakehouse.Lakehouse/Tables/sales", "", "abfss://MyWorkspace@onelake.dfs.fabric.microsoft.com/MyLakehouse.Lakehouse/Tables/sales"},
		{"abfss://0d5b2c1e-8a8e-4a57-9d5c-1b2a3c4d5e6f@onelake.dfs.fabric.microsoft.com/6f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b/Tables/dbo/t", nil,
			"https://onelake.blob.fabric.microsoft.com", "0d5b2c1e-8a8e-4a57-9d5c-1b2a3c4d5e6f", "6f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b/Tables/dbo/t", "", ""},
		{"https://onelake.dfs.fabric.microsoft.com/ws/item.Lakehouse/Tables/t", nil,
			"https://onelake.blob.fabric.microsoft.com", "ws", "item.Lakehouse/Tables/t", "", "abfss://ws@onelake.dfs.fabric.microsoft.com/item.Lakehouse/Tables/t"},
		{"abfss://ws@westus-onelake.dfs.fabric.microsoft.com/item/Tables/t", nil,
			"https://westus-onelake.blob.fabric.microsoft.com", "ws", "item/Tables/t", "", ""},
		// Emulator.
		{"az://c/t", location.Options{"azure_storage_use_emulator": "true"},
			"http://127.0.0.1:10000/devstoreaccount1", "c", "t", "devstoreaccount1", "az://c/t"},
		{"az://c/t", location.Options{"azure_endpoint": "http://127.0.0.1:10001/acct9", "azure_allow_http": "true"},
			"http://127.0.0.1:10001/acct9", "c", "t", "acct9", ""},
	}
	// The location is the one spelling absolute log paths use: abfss://CONTAINER@ACCOUNT.dfs…
	// (an emulator's stays as typed).
	for _, tc := range cases {
		c := mustResolve(t, tc.uri, tc.opts).az
		if c.ServiceURL != tc.service || c.Container != tc.container || c.Prefix != tc.prefix || c.Account != tc.account {
			t.Errorf("%s: service %q container %q prefix %q account %q", tc.uri, c.ServiceURL, c.Container, c.Prefix, c.Account)
		}
		if tc.location != "" && c.Location != tc.location {
			t.Errorf("%s: Location %q, want %q", tc.uri, c.Location, tc.location)
		}
		if strings.Contains(c.Location, "SECRET") {
			t.Errorf("%s: Location %q shows the SAS", tc.uri, c.Location)
		}
	}
	c := mustResolve(t, "https://myacct.dfs.core.windows.net/data/t?sv=2022-11-02&sig=SECRETSIG", nil).az
	if !strings.Contains(c.SASToken, "sig=SECRETSIG") {
		t.Errorf("the SAS of the URL is not used: %q", c.SASToken)
	}
	if c := mustResolve(t, "az://c/t", location.Options{"azure_storage_use_emulator": "true"}).az; c.AccountKey == "" || !c.AllowHTTP {
		t.Errorf("emulator: %v", c)
	}
	if _, err := resolve("az://c/t", location.Options{}); err == nil || !strings.Contains(err.Error(), "azure_storage_account_name") {
		t.Errorf("az:// without an account: %v", err)
	}
}

// Every Azure URI form resolves to exactly these endpoints: the host given, or the twin
// Microsoft documents for its suffix (dfs <-> blob), never another account.
func TestResolveAzureEndpoints(t *testing.T) {
	cases := []struct {
		uri          string
		opts         location.Options
		service, dfs string
		account      string
	}{
		// Public cloud, China, US Gov.
		{"abfss://c@acct.dfs.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"abfs://c@acct.dfs.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"abfss://c@acct.blob.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"wasbs://c@acct.blob.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"wasb://c@acct.blob.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"az://c@acct.blob.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"az://c@acct.dfs.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"abfss://c@acct.dfs.core.chinacloudapi.cn/t", nil, "https://acct.blob.core.chinacloudapi.cn", "https://acct.dfs.core.chinacloudapi.cn", "acct"},
		{"abfss://c@acct.dfs.core.usgovcloudapi.net/t", nil, "https://acct.blob.core.usgovcloudapi.net", "https://acct.dfs.core.usgovcloudapi.net", "acct"},
		{"https://acct.blob.core.usgovcloudapi.net/c/t", nil, "https://acct.blob.core.usgovcloudapi.net", "https://acct.dfs.core.usgovcloudapi.net", "acct"},
		{"https://acct.dfs.core.chinacloudapi.cn/c/t", nil, "https://acct.blob.core.chinacloudapi.cn", "https://acct.dfs.core.chinacloudapi.cn", "acct"},
		// Read-access secondary: the host as given; Shared Key signs with the account's name.
		{"https://acct-secondary.blob.core.windows.net/c/t", nil, "https://acct-secondary.blob.core.windows.net", "https://acct-secondary.dfs.core.windows.net", "acct"},
		// Azure DNS zone endpoints.
		{"abfss://c@acct.z13.dfs.storage.azure.net/t", nil, "https://acct.z13.blob.storage.azure.net", "https://acct.z13.dfs.storage.azure.net", "acct"},
		{"wasbs://c@acct.z07.blob.storage.azure.net/t", nil, "https://acct.z07.blob.storage.azure.net", "https://acct.z07.dfs.storage.azure.net", "acct"},
		{"https://acct.z99.blob.storage.azure.net/c/t", nil, "https://acct.z99.blob.storage.azure.net", "https://acct.z99.dfs.storage.azure.net", "acct"},
		{"https://acct.z00.dfs.storage.azure.net/c/t", nil, "https://acct.z00.blob.storage.azure.net", "https://acct.z00.dfs.storage.azure.net", "acct"},
		// OneLake, global and regional.
		{"abfss://ws@onelake.dfs.fabric.microsoft.com/item/Tables/t", nil, "https://onelake.blob.fabric.microsoft.com", "https://onelake.dfs.fabric.microsoft.com", ""},
		{"abfss://ws@westus-onelake.dfs.fabric.microsoft.com/item/Tables/t", nil, "https://westus-onelake.blob.fabric.microsoft.com", "https://westus-onelake.dfs.fabric.microsoft.com", ""},
		{"https://onelake.blob.fabric.microsoft.com/ws/item/Tables/t", nil, "https://onelake.blob.fabric.microsoft.com", "https://onelake.dfs.fabric.microsoft.com", ""},
		// Case and ports: the same host.
		{"abfss://c@ACCT.DFS.Core.Windows.NET/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"abfss://c@acct.dfs.core.windows.net:443/t", nil, "https://acct.blob.core.windows.net:443", "https://acct.dfs.core.windows.net:443", "acct"},
		{"https://acct.blob.core.windows.net:8443/c/t", nil, "https://acct.blob.core.windows.net:8443", "https://acct.dfs.core.windows.net:8443", "acct"},
		// A wasbs:// host is a Blob host by its scheme: a custom domain is used as given, with
		// no DFS endpoint unless one is named.
		{"wasbs://c@data.example.com/t", nil, "https://data.example.com", "", "data"},
		{"wasbs://c@data.example.com/t", location.Options{"azure_dfs_endpoint": "https://acct.dfs.core.windows.net"}, "https://data.example.com", "https://acct.dfs.core.windows.net", "data"},
		// az:// names the account; the public cloud is the default.
		{"az://c/t", location.Options{"azure_storage_account_name": "acct2"}, "https://acct2.blob.core.windows.net", "https://acct2.dfs.core.windows.net", "acct2"},
		// An endpoint option wins over the URI's host, which then only names the account.
		{"abfss://c@acct.z13.dfs.storage.azure.net/t", location.Options{"azure_endpoint": "http://127.0.0.1:10000/acct", "azure_allow_http": "true"}, "http://127.0.0.1:10000/acct", "", "acct"},
		{"abfss://c@custom.example.com/t", location.Options{"azure_endpoint": "https://blob.example.com", "azure_dfs_endpoint": "https://dfs.example.com"}, "https://blob.example.com", "https://dfs.example.com", "custom"},
		{"az://c/t", location.Options{"azure_storage_use_emulator": "true"}, "http://127.0.0.1:10000/devstoreaccount1", "", "devstoreaccount1"},
	}
	for _, tc := range cases {
		t.Run(tc.uri, func(t *testing.T) {
			c := mustResolve(t, tc.uri, tc.opts).az
			if c.ServiceURL != tc.service || c.DFSURL != tc.dfs || c.Account != tc.account {
				t.Errorf("got service %q, DFS %q, account %q; want %q, %q, %q", c.ServiceURL, c.DFSURL, c.Account, tc.service, tc.dfs, tc.account)
			}
		})
	}
}

// Hosts the parser cannot map to a Blob endpoint are refused with a message naming the
// option to pass; they never become another account's host.
func TestResolveAzureUnknownHosts(t *testing.T) {
	for _, uri := range []string{
		"abfss://c@acct.dfs.core.windows.net.evil.example/t",
		"abfss://c@custom.example.com/t",
		"abfss://c@acct.privatelink.dfs.core.windows.net/t",
		"abfss://c@acct.queue.core.windows.net/t",
		"abfss://c@acct.z1.dfs.storage.azure.net/t",
		"abfss://c@acct.z13.dfs.storage.azure.net.evil.example/t",
		"abfss://c@acct.dfs.core.windows.net./t",
		"abfss://c@127.0.0.1:10000/t",
		"abfss://ws@evil-onelake.dfs.fabric.microsoft.com.evil.example/item/t",
		"az://c@custom.example.com/t",
		"https://acct.blob.core.windows.net.evil.example/c/t",
		"https://evil.example/acct.blob.core.windows.net/c/t",
		"https://acct.blob.core.windows.net@evil.example/c/t",
		"https://acct.file.core.windows.net/c/t",
		"https://acct.blob.core.windows.net./c/t",
	} {
		t.Run(uri, func(t *testing.T) {
			tg, err := resolve(uri, location.Options{}.WithEnv(noEnv))
			if err == nil {
				t.Fatalf("resolved to service %q, DFS %q; want an error", tg.az.ServiceURL, tg.az.DFSURL)
			}
			if msg := err.Error(); !strings.Contains(msg, "azure_endpoint") && !strings.Contains(msg, "trailing dot") && !strings.Contains(msg, "no user information") {
				t.Errorf("the error does not say what to pass: %v", err)
			}
		})
	}
}

// Whatever the URI, a resolved endpoint's host is the host given or its documented twin.
func TestResolveAzureHostileHosts(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		opts location.Options
	}{
		{"abfss://c@acct.dfs.core.windows.net@evil.example/t", nil},
		{"abfss://c:x@acct.dfs.core.windows.net/t", nil},
		{"abfss://c%40evil.example@acct.dfs.core.windows.net/t", nil},
		{"wasbs://c@acct.blob.core.windows.net.evil.example/t", nil},
		{"wasbs://c@evil.example%2Facct.blob.core.windows.net/t", nil},
		{"wasbs://c@evil.example%3A1/t", nil},
		{"wasbs://c@[::1]:10000/t", nil},
		{"wasbs://c@acct.blob.core.windows.net./t", nil},
		{"wasbs://c@ACCT.Blob.Core.Windows.Net:443/t", nil},
		{"az://c@acct.blob.core.windows.net.evil.example/t", nil},
		{"az://c/t", location.Options{"azure_storage_account_name": "evil.example/x"}},
		{"az://c/t", location.Options{"azure_storage_account_name": "evil.example#"}},
		{"az://c/t", location.Options{"azure_storage_account_name": "evil.example?"}},
		{"az://c/t", location.Options{"azure_storage_account_name": "x@evil.example"}},
		{"az://c/t", location.Options{"azure_storage_account_name": "evil.example:443"}},
		{"https://user:pw@acct.blob.core.windows.net/c/t", nil},
		{"https://acct.blob.core.windows.net%2Eevil.example/c/t", nil},
		{"https://ACCT.DFS.CORE.WINDOWS.NET/c/t", nil},
		{"https://acct.z13.dfs.storage.azure.net.evil.example/c/t", nil},
		{"https://onelake.dfs.fabric.microsoft.com.evil.example/ws/t", nil},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			tg, err := resolve(tc.uri, tc.opts.WithEnv(noEnv))
			if err != nil {
				return // refused: nothing is sent anywhere
			}
			given := map[string]bool{}
			if u, err := url.Parse(tc.uri); err == nil && u.Host != "" {
				h := strings.ToLower(u.Hostname())
				given[h] = true
				given[strings.Replace(h, ".dfs.", ".blob.", 1)] = true
				given[strings.Replace(h, ".blob.", ".dfs.", 1)] = true
			}
			if a := tc.opts["azure_storage_account_name"]; a != "" {
				given[a+".blob.core.windows.net"], given[a+".dfs.core.windows.net"] = true, true
			}
			for _, ep := range []string{tg.az.ServiceURL, tg.az.DFSURL} {
				if ep == "" {
					continue
				}
				u, err := url.Parse(ep)
				if err != nil {
					t.Errorf("endpoint %q: %v", ep, err)
					continue
				}
				if !given[u.Hostname()] || u.User != nil || ep != "https://"+u.Host {
					t.Errorf("endpoint %q: host %q is neither the host given nor its twin", ep, u.Hostname())
				}
			}
			if strings.ContainsAny(tg.az.Container, "@:/") {
				t.Errorf("container %q", tg.az.Container)
			}
		})
	}
}

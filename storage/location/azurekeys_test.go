package location

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

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
		o, err := ParseStorageOptions(tc.opts)
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
	// An Azure key on an S3 location changes nothing there.
	tg := mustResolve(t, "s3://b/t", Options{"azure_use_fabric_endpoint": "true", "aws_endpoint": "http://127.0.0.1:7070", "aws_allow_http": "true"})
	if tg.kind != "s3" || tg.s3.Endpoint != "http://127.0.0.1:7070" {
		t.Errorf("s3 with an Azure key: %+v", tg.s3)
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
	o, err := ParseStorageOptions(flags)
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
		_, err := ParseStorageOptions([]string{tc.flag})
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
		name, _ := Canonical(k)
		if _, err := resolve("abfss://c@acct.dfs.core.windows.net/t", Options{name: v}); err == nil {
			t.Errorf("%s: resolve accepted it", tc.flag)
		}
	}
	for _, k := range []string{"azure_fabric_session_token", "azure_storage_encryption_key"} {
		if (Options{k: "SECRET"}).String() != k+"=****" {
			t.Errorf("%s is not a secret option: %s", k, Options{k: "SECRET"}.String())
		}
	}
}

func TestContainerNameAndTagging(t *testing.T) {
	const uri = "abfss://c@acct.dfs.core.windows.net/t"
	base := mustResolve(t, uri, nil).az
	for _, flags := range [][]string{{"azure_container_name=c"}, {"container_name=c"}, {"azure_disable_tagging=true"}, {"disable_tagging=false"}} {
		o, err := ParseStorageOptions(flags)
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
		o, err := ParseStorageOptions(tc.flags)
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
		if got, ok := Canonical(alias); !ok || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", alias, got, ok, want)
		}
	}
	if _, err := ParseStorageOptions([]string{"master_key=SECRET"}); err != nil {
		t.Fatal(err)
	}
	if s := (Options{"azure_storage_account_key": "SECRET"}).String(); strings.Contains(s, "SECRET") {
		t.Errorf("account key shown: %s", s)
	}
}

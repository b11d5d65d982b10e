package azure

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/location"
)

// Importing this package registers the Azure locations (abfss://, abfs://, wasbs://, wasb://,
// az://, azure://, adl:// and https:// URLs of Blob, DFS and OneLake hosts) with package
// location.
func init() { location.Register("azure", resolveLocation) }

// Azurite's well-known development account and key (public; emulator only).
const (
	emulatorAccount = "devstoreaccount1"
	emulatorKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	emulatorBlob    = "http://127.0.0.1:10000"
)

// target is an Azure location with its configuration and the credential options.
type target struct {
	az    Config
	azCLI bool
	azSP  [3]string // client id, secret, tenant
	azTok string
	// azFed is a federated token file (workload identity); azObj and azRes a managed
	// identity's object or resource id; azAuth the Entra authority host.
	azFed, azObj, azRes, azAuth string
	u                           *url.URL
}

func resolveLocation(l location.Parsed, o location.Options) (location.Opener, error) {
	t, err := resolveTarget(l, o)
	if err != nil {
		return nil, err
	}
	return t.open, nil
}

func resolveTarget(l location.Parsed, o location.Options) (*target, error) {
	t := &target{u: l.URL}
	if err := resolveAzure(t, o); err != nil {
		return nil, err
	}
	t.az.Concurrency, t.az.BatchSize, t.az.MaxAttempts, t.az.ListPageSize = l.Common.Concurrency, l.Common.BatchSize, l.Common.MaxAttempts, l.Common.ListPageSize
	t.az.WrapTransport = l.Common.WrapTransport
	return t, nil
}

// isAzureHost reports whether h is a Blob or DFS host of an Azure storage account or of
// OneLake (ParseHost).
func isAzureHost(h string) bool {
	_, ok := ParseHost(h)
	return ok
}

func resolveAzure(t *target, o location.Options) error {
	u := t.u
	c := Config{
		Account:    o["azure_storage_account_name"],
		AccountKey: o["azure_storage_account_key"],
		SASToken:   o["azure_storage_sas_token"],
		AllowHTTP:  o.Bool("azure_allow_http"),
		Anonymous:  o.Bool("azure_skip_signature"),
		DFSURL:     o["azure_dfs_endpoint"],
		Location:   location.SafeURL(u),
	}
	endpoint, emulator := o["azure_endpoint"], o.Bool("azure_storage_use_emulator")
	scheme := strings.ToLower(u.Scheme)
	path := strings.Trim(u.Path, "/")
	hasHost := true // the URI names the account's host
	switch scheme {
	case "abfs", "abfss", "wasb", "wasbs", "adl":
		// container@host/path (OneLake: workspace@onelake.dfs.fabric.microsoft.com/item/path)
		if u.User == nil || u.User.Username() == "" || u.Host == "" {
			return fmt.Errorf("location %s: expected %s://CONTAINER@ACCOUNT.dfs.core.windows.net/path", location.SafeURL(u), u.Scheme)
		}
		c.Container, c.Prefix = u.User.Username(), path
	case "az", "azure":
		// az://container/path, with the account from the options, or
		// az://container@account.blob.core.windows.net/path.
		c.Container, c.Prefix, hasHost = u.Host, path, false
		if u.User != nil && u.User.Username() != "" {
			c.Container, hasHost = u.User.Username(), true
		}
	default: // https://account.blob.core.windows.net/container/path, with an optional SAS
		first, rest, _ := strings.Cut(path, "/")
		c.Container, c.Prefix = first, rest
	}
	// A shared access signature may come with any Azure location, as a query (checkObjectPath
	// refuses any other query).
	if u.RawQuery != "" && c.SASToken == "" {
		if q := u.Query(); q.Has("sig") {
			c.SASToken = u.RawQuery
		}
	}
	if c.Container == "" {
		return fmt.Errorf("location %s: no container", location.SafeURL(u))
	}
	if cn, ok := o["azure_container_name"]; ok && cn != c.Container {
		return fmt.Errorf("location %s: azure_container_name %q is not the container the location names (%q): leave the option out, the location decides", location.SafeURL(u), cn, c.Container)
	}
	if _, pw := u.User.Password(); pw || strings.ContainsAny(c.Container, "@:/?#") {
		return fmt.Errorf("location %s: the container (before the '@') must be a name only, without '@', ':' or '/'", location.SafeURL(u))
	}
	if o.Bool("azure_use_fabric_endpoint") {
		if err := fabricEndpoint(&c, u, hasHost, endpoint != "", emulator); err != nil {
			return err
		}
	}
	if hasHost {
		serviceURL, account, err := azureService(scheme, u)
		if err != nil && endpoint == "" && !emulator {
			return err
		}
		if endpoint == "" && !emulator {
			c.ServiceURL = serviceURL
		}
		if c.Account == "" {
			c.Account = account
		}
	}
	if endpoint != "" {
		c.ServiceURL = strings.TrimSuffix(endpoint, "/")
		if c.Account == "" {
			if eu, err := url.Parse(endpoint); err == nil {
				c.Account = AccountFromURL(eu)
			}
		}
	}
	if emulator {
		if c.Account == "" || (hasHost && isAzureHost(u.Hostname())) {
			c.Account = emulatorAccount
		}
		if endpoint == "" {
			c.ServiceURL = emulatorBlob + "/" + c.Account
		}
		if c.AccountKey == "" && c.SASToken == "" && c.Account == emulatorAccount {
			c.AccountKey = emulatorKey
		}
		c.AllowHTTP = true
	}
	if c.ServiceURL == "" {
		// az://container/path: the account names a host of the public cloud.
		if c.Account == "" {
			return fmt.Errorf("location %s: no storage account: set azure_storage_account_name (or AZURE_STORAGE_ACCOUNT_NAME), or use an abfss://CONTAINER@ACCOUNT.dfs.core.windows.net URI", location.SafeURL(u))
		}
		if !IsAccountName(strings.ToLower(c.Account)) {
			return fmt.Errorf("location %s: azure_storage_account_name is not a storage account name (lower-case letters and digits); for another endpoint set azure_endpoint=https://HOST", location.SafeURL(u))
		}
		c.ServiceURL = "https://" + strings.ToLower(c.Account) + ".blob.core.windows.net"
	}
	if c.DFSURL == "" {
		c.DFSURL = DFSEndpoint(c.ServiceURL)
	}
	if loc := canonicalAzure(c); loc != "" {
		c.Location = loc
	}
	t.az = c
	t.azCLI = o.Bool("azure_use_azure_cli")
	t.azSP = [3]string{o["azure_client_id"], o["azure_client_secret"], o["azure_tenant_id"]}
	t.azTok = o["azure_storage_token"]
	t.azFed, t.azObj, t.azRes, t.azAuth = o["azure_federated_token_file"], o["azure_object_id"], o["azure_msi_resource_id"], o["azure_authority_host"]
	return t.checkAzureCredential()
}

// fabricEndpoint applies azure_use_fabric_endpoint=true: the location is in OneLake. An
// az://WORKSPACE/PATH location gets the OneLake Blob endpoint of the account (onelake, or a
// regional REGION-onelake); a location that names its host must name a OneLake host; an
// endpoint option or the emulator contradicts it.
func fabricEndpoint(c *Config, u *url.URL, hasHost, endpoint, emulator bool) error {
	switch {
	case endpoint:
		return fmt.Errorf("location %s: azure_use_fabric_endpoint=true and azure_endpoint both name the endpoint: give one of them", location.SafeURL(u))
	case emulator:
		return fmt.Errorf("location %s: azure_use_fabric_endpoint=true and azure_storage_use_emulator=true contradict each other: give one of them", location.SafeURL(u))
	case hasHost:
		if h, ok := ParseHost(u.Hostname()); !ok || h.Account != "" {
			return fmt.Errorf("location %s: azure_use_fabric_endpoint=true, but %s is not a OneLake host (onelake.dfs.fabric.microsoft.com, REGION-onelake.dfs.fabric.microsoft.com): leave the option out for an Azure Storage account", location.SafeURL(u), u.Hostname())
		}
		return nil
	}
	account := strings.ToLower(c.Account)
	if account == "" {
		account = "onelake"
	}
	h, ok := ParseHost(account + ".blob.fabric.microsoft.com")
	if !ok || h.Account != "" {
		return fmt.Errorf("location %s: with azure_use_fabric_endpoint=true, azure_storage_account_name must be onelake or REGION-onelake (a OneLake endpoint), not %q", location.SafeURL(u), c.Account)
	}
	c.ServiceURL, c.Account = "https://"+h.Blob(), ""
	return nil
}

// checkAzureCredential refuses credential options that contradict each other where one would
// be used and the other silently dropped: a federated token file or a managed identity id
// with any other credential, two identities, an authority host with no credential to use it.
func (t *target) checkAzureCredential() error {
	c := t.az
	id, secret := t.azSP[0], t.azSP[1]
	var others []string
	for _, o := range []struct {
		set  bool
		name string
	}{
		{c.AccountKey != "", "azure_storage_account_key"},
		{c.SASToken != "", "azure_storage_sas_token"},
		{c.Anonymous, "azure_skip_signature"},
		{t.azTok != "", "azure_storage_token"},
		{secret != "", "azure_client_secret"},
		{t.azCLI, "azure_use_azure_cli"},
	} {
		if o.set {
			others = append(others, o.name)
		}
	}
	mi := t.azObj != "" || t.azRes != ""
	switch {
	case t.azObj != "" && t.azRes != "":
		return errors.New("azure: azure_object_id and azure_msi_resource_id name two managed identities: give one")
	case mi && t.azFed != "":
		return errors.New("azure: a managed identity (azure_object_id, azure_msi_resource_id) and a federated token (azure_federated_token_file) are two credentials: give one")
	case mi && id != "":
		return errors.New("azure: azure_client_id and azure_object_id or azure_msi_resource_id name the managed identity twice: give azure_object_id or azure_msi_resource_id alone")
	case (mi || t.azFed != "") && len(others) > 0:
		what := "azure_federated_token_file"
		if mi {
			what = "a managed identity id (azure_object_id, azure_msi_resource_id)"
		}
		return fmt.Errorf("azure: %s and %s are two credentials (options or their environment variables): give one", what, strings.Join(others, ", "))
	case t.azAuth != "" && t.azFed == "" && secret == "":
		return errors.New("azure: azure_authority_host is used only with a service principal (azure_client_secret) or a federated token (azure_federated_token_file); the default chain reads AZURE_AUTHORITY_HOST")
	}
	if t.azAuth != "" {
		au, err := url.Parse(t.azAuth)
		if err != nil || au.Scheme != "https" || au.Host == "" || au.User != nil || au.RawQuery != "" {
			return errors.New("azure: azure_authority_host must be an https:// URL without user information or query, e.g. https://login.microsoftonline.us")
		}
	}
	if t.azFed != "" {
		if st, err := os.Stat(t.azFed); err != nil || !st.Mode().IsRegular() {
			return fmt.Errorf("azure: azure_federated_token_file %s is not a readable file", t.azFed)
		}
	}
	return nil
}

// azureService returns the Blob endpoint and the account of the host an Azure URI names: the
// host itself, or for a DFS host the Blob twin Microsoft documents for its suffix
// (ParseHost). Another host is used as given only where the scheme says it is a Blob
// host (wasb://, wasbs://); otherwise it is refused, for its Blob endpoint cannot be known
// and a guess would send the credentials to a host the user did not name. The account of an
// unknown host is its first label (a Shared Key signing input, never a host).
func azureService(scheme string, u *url.URL) (serviceURL, account string, err error) {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port != "" {
		port = ":" + port
	}
	if strings.HasSuffix(host, ".") {
		return "", "", fmt.Errorf("location %s: the host ends with a dot; give it without the trailing dot", location.SafeURL(u))
	}
	if h, ok := ParseHost(host); ok {
		return "https://" + h.Blob() + port, h.Account, nil
	}
	account, _, _ = strings.Cut(host, ".")
	if (scheme == "wasb" || scheme == "wasbs") && isHostName(host) {
		return "https://" + host + port, account, nil
	}
	return "", account, fmt.Errorf("location %s: %s is not a host whose Blob endpoint deltavacuum knows (ACCOUNT.dfs.core.windows.net, ACCOUNT.zNN.dfs.storage.azure.net, "+
		"onelake.dfs.fabric.microsoft.com, their China and US Gov twins); name it: --storage-option azure_endpoint=https://BLOB-HOST "+
		"(and azure_dfs_endpoint=https://DFS-HOST for hierarchical-namespace directories)", location.SafeURL(u), host)
}

// isHostName reports whether h is a DNS name: dot-separated labels of letters, digits and
// hyphens (no IP literal, no percent-decoded '/', '@' or ':').
func isHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return false
			}
		}
	}
	return true
}

// canonicalAzure is the location of an Azure table in the one spelling absolute log paths use,
// abfss://CONTAINER@ACCOUNT.dfs…/PATH, whichever form was typed (az://, wasbs://, https://):
// the log's absolute paths are compared with it, so that another spelling of the same table
// does not make its live files look outside it. "" for a host Microsoft does not document
// (an emulator, a custom endpoint), whose location stays as typed.
func canonicalAzure(c Config) string {
	su, err := url.Parse(c.ServiceURL)
	if err != nil || su.Port() != "" {
		return ""
	}
	h, ok := ParseHost(su.Hostname())
	if !ok {
		return ""
	}
	u := url.URL{Scheme: "abfss", User: url.User(c.Container), Host: h.DFS(), Path: "/" + c.Prefix}
	return strings.TrimSuffix(u.String(), "/")
}

func (t *target) open(ctx context.Context) (storage.Store, error) {
	c := t.az
	if c.AccountKey == "" && c.SASToken == "" && !c.Anonymous {
		cred, err := t.azureCredential()
		if err != nil {
			return nil, err
		}
		c.Credential = cred
	}
	return New(ctx, c)
}

func (t *target) azureCredential() (azcore.TokenCredential, error) {
	id, secret, tenant := t.azSP[0], t.azSP[1], t.azSP[2]
	var copts azcore.ClientOptions
	if t.azAuth != "" {
		copts.Cloud = cloud.Configuration{ActiveDirectoryAuthorityHost: t.azAuth, Services: cloud.AzurePublic.Services}
	}
	switch {
	case t.azTok != "":
		return staticToken(t.azTok), nil
	case t.azFed != "":
		cred, err := azidentity.NewWorkloadIdentityCredential(&azidentity.WorkloadIdentityCredentialOptions{
			ClientOptions: copts, ClientID: id, TenantID: tenant, TokenFilePath: t.azFed,
		})
		if err != nil {
			return nil, errors.New("azure: a federated token (azure_federated_token_file) needs azure_client_id and azure_tenant_id (or AZURE_CLIENT_ID and AZURE_TENANT_ID)")
		}
		return cred, nil
	case t.azObj != "" || t.azRes != "":
		var mid azidentity.ManagedIDKind = azidentity.ObjectID(t.azObj)
		if t.azRes != "" {
			mid = azidentity.ResourceID(t.azRes)
		}
		cred, err := azidentity.NewManagedIdentityCredential(&azidentity.ManagedIdentityCredentialOptions{ID: mid})
		if err != nil {
			return nil, fmt.Errorf("azure: managed identity: %v", oneLineErr(err))
		}
		return cred, nil
	case id != "" || secret != "":
		if id == "" || secret == "" || tenant == "" {
			return nil, errors.New("azure: a service principal needs azure_client_id, azure_client_secret and azure_tenant_id " +
				"(a federated token: azure_client_id, azure_tenant_id and azure_federated_token_file; a user-assigned managed identity: azure_object_id or azure_msi_resource_id)")
		}
		cred, err := azidentity.NewClientSecretCredential(tenant, id, secret, &azidentity.ClientSecretCredentialOptions{ClientOptions: copts})
		if err != nil {
			return nil, errors.New("azure: invalid service principal settings (azure_tenant_id, azure_client_id)")
		}
		return cred, nil
	case t.azCLI:
		cred, err := azidentity.NewAzureCLICredential(nil)
		if err != nil {
			return nil, fmt.Errorf("azure: Azure CLI credential: %w", err)
		}
		return cred, nil
	}
	return nil, nil // the default chain, built by azure.New
}

// oneLineErr is the first line of an SDK error.
func oneLineErr(err error) string {
	first, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	return first
}

// staticToken is a bearer token given as is.
type staticToken string

func (s staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: string(s)}, nil
}

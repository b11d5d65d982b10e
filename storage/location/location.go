// Package location opens the storage backend for a table URI: a local path or file:// URI,
// s3:// or s3a:// (S3 and S3-compatible stores), gs:// (Google Cloud Storage), and the Azure
// forms: abfss:// and abfs:// (ADLS Gen2 and OneLake), wasbs:// and wasb://, az:// and
// azure://, and https:// URLs of Blob, DFS and OneLake endpoints. Settings come from
// Options (--storage-option KEY=VALUE) and the environment; see Keys and storage/README.md.
//
// Secrets never appear in a store's Location, in Options.String, or in the errors of this
// package. Requests, and so credentials, go only to the host a URI or an endpoint option
// names, or to its Blob or DFS twin where Microsoft documents one (azure.ParseHost); a host
// whose Blob endpoint cannot be known is refused, never guessed.
package location

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
	"github.com/deltavacuum/deltavacuum/storage/azure"
	"github.com/deltavacuum/deltavacuum/storage/gcs"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/s3"
)

// Azurite's well-known development account and key (public; emulator only).
const (
	emulatorAccount = "devstoreaccount1"
	emulatorKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	emulatorBlob    = "http://127.0.0.1:10000"
)

// Open returns the store at uri, with opts completed by the environment (Options.WithEnv).
// It makes no request, except to find an S3 bucket's region when none is configured.
func Open(ctx context.Context, uri string, opts Options) (storage.Store, error) {
	t, err := resolve(uri, opts.WithEnv(os.Getenv))
	if err != nil {
		return nil, err
	}
	return t.open(ctx)
}

// Kind is the backend a URI maps to: "local", "s3", "azure" or "gcs".
func Kind(uri string) (string, error) {
	t, err := parse(uri)
	if err != nil {
		return "", err
	}
	return t.kind, nil
}

// target is a parsed URI with its backend configuration.
type target struct {
	kind  string
	path  string // local
	s3    s3.Config
	az    azure.Config
	gcs   gcs.Config
	azCLI bool
	azSP  [3]string // client id, secret, tenant
	azTok string
	// azFed is a federated token file (workload identity); azObj and azRes a managed
	// identity's object or resource id; azAuth the Entra authority host.
	azFed, azObj, azRes, azAuth string
	u                           *url.URL
}

// SafeURI returns uri without what may be secret in it: a password, a query (a SAS token).
func SafeURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme == "" || len(u.Scheme) == 1 {
		if i := strings.IndexAny(uri, "?#"); i >= 0 {
			return uri[:i]
		}
		return uri
	}
	return safe(u)
}

func safe(u *url.URL) string {
	c := *u
	c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = "", false, "", ""
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	return strings.TrimSuffix(c.String(), "/")
}

func parse(uri string) (*target, error) {
	if uri == "" {
		return nil, errors.New("no location given")
	}
	i := strings.Index(uri, "://")
	if !strings.HasPrefix(uri, "file:") && (i <= 1 || strings.ContainsAny(uri[:i], "/\\.")) {
		return &target{kind: "local", path: uri}, nil // a path (C:\... has a one-letter "scheme")
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("location %q is not a valid URI", SafeURI(uri))
	}
	t := &target{u: u}
	switch strings.ToLower(u.Scheme) {
	case "file":
		p, err := LocalPath(uri)
		if err != nil {
			return nil, err
		}
		t.kind, t.path = "local", p
	case "s3", "s3a":
		t.kind = "s3"
	case "gs":
		t.kind = "gcs"
	case "abfs", "abfss", "wasb", "wasbs", "az", "azure", "adl":
		t.kind = "azure"
	case "http", "https":
		if u.User != nil {
			return nil, fmt.Errorf("location %s: an http(s) URL must carry no user information (its host is %s, after the '@'); "+
				"give credentials with --storage-option, and another Blob endpoint with azure_endpoint", safe(u), u.Hostname())
		}
		if !isAzureHost(u.Hostname()) {
			return nil, fmt.Errorf("location %s: an http(s) URL must be an Azure Blob, DFS or OneLake endpoint (ACCOUNT.blob.core.windows.net, ACCOUNT.zNN.blob.storage.azure.net, onelake.dfs.fabric.microsoft.com, ...); "+
				"for another Blob endpoint use az://CONTAINER/PATH with --storage-option azure_endpoint=https://HOST; for S3-compatible or GCS emulators use s3:// or gs:// with an endpoint option", safe(u))
		}
		t.kind = "azure"
	default:
		return nil, fmt.Errorf("location %s: unsupported scheme %q (local path, file://, s3://, s3a://, gs://, abfss://, abfs://, wasbs://, wasb://, az://, https://)", safe(u), u.Scheme)
	}
	if t.kind != "local" {
		if err := checkObjectPath(uri, u, t.kind == "azure"); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// checkObjectPath refuses an object-store location that another reader could take for
// another prefix: a '#' (the rest would be dropped as a fragment), a query where none is read
// (only Azure locations take one: a shared access signature, with its sig parameter), and
// empty, "." or ".." path components, which object stores keep as they are while the log's
// absolute paths are compared cleaned.
func checkObjectPath(uri string, u *url.URL, azure bool) error {
	if u.Fragment != "" || strings.Contains(uri, "#") {
		return fmt.Errorf("location %s: '#' starts a fragment, which a table location does not take; write it as %%23 if it is part of the path", SafeURI(uri))
	}
	if u.RawQuery != "" || u.ForceQuery {
		q, err := url.ParseQuery(u.RawQuery)
		if !azure || err != nil || !q.Has("sig") {
			return fmt.Errorf("location %s: '?' starts a query, which a %s:// location takes only for an Azure shared access signature (sv=…&sig=…); give settings with --storage-option, and write '?' as %%3F if it is part of the path", SafeURI(uri), strings.ToLower(u.Scheme))
		}
	}
	p := strings.TrimSuffix(strings.TrimPrefix(u.Path, "/"), "/")
	if p == "" {
		return nil
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return fmt.Errorf("location %s: the path %q has an empty, '.' or '..' component; object stores keep such keys as they are, so it would name another prefix than the table's: write the path without them", SafeURI(uri), u.Path)
		}
	}
	return nil
}

// isAzureHost reports whether h is a Blob or DFS host of an Azure storage account or of
// OneLake (azure.ParseHost), the only hosts an https:// location may name.
func isAzureHost(h string) bool {
	_, ok := azure.ParseHost(h)
	return ok
}

func resolve(uri string, o Options) (*target, error) {
	t, err := parse(uri)
	if err != nil {
		return nil, err
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	concurrency, batch, pages := o.int("concurrency"), o.int("delete_batch_size"), o.int("list_page_size")
	attempts := 0
	if v, ok := o["max_retries"]; ok && v != "" {
		attempts = o.int("max_retries") + 1
	}
	switch t.kind {
	case "local":
		return t, nil
	case "s3":
		if t.u.Host == "" {
			return nil, fmt.Errorf("location %s: no bucket", safe(t.u))
		}
		c := s3.Config{
			Bucket:          t.u.Host,
			Prefix:          strings.Trim(t.u.Path, "/"),
			Region:          o["aws_region"],
			Endpoint:        o["aws_endpoint"],
			AllowHTTP:       o.bool("aws_allow_http"),
			AccessKeyID:     o["aws_access_key_id"],
			SecretAccessKey: o["aws_secret_access_key"],
			SessionToken:    o["aws_session_token"],
			Profile:         o["aws_profile"],
			SkipSignature:   o.bool("aws_skip_signature"),
			Concurrency:     concurrency, BatchSize: batch, MaxAttempts: attempts, ListPageSize: pages,
			Location: safe(t.u),
		}
		c.PathStyle = c.Endpoint != ""
		if _, ok := o["aws_virtual_hosted_style_request"]; ok {
			c.PathStyle = !o.bool("aws_virtual_hosted_style_request")
		}
		if _, ok := o["aws_s3_path_style"]; ok {
			c.PathStyle = o.bool("aws_s3_path_style")
		}
		t.s3 = c
	case "gcs":
		if t.u.Host == "" {
			return nil, fmt.Errorf("location %s: no bucket", safe(t.u))
		}
		c := gcs.Config{
			Bucket:             t.u.Host,
			Prefix:             strings.Trim(t.u.Path, "/"),
			Endpoint:           o["google_endpoint"],
			AllowHTTP:          o.bool("google_allow_http"),
			ServiceAccountFile: o["google_service_account"],
			ServiceAccountKey:  o["google_service_account_key"],
			Anonymous:          o.bool("google_skip_signature"),
			Concurrency:        concurrency, MaxAttempts: attempts, ListPageSize: pages,
			Location: safe(t.u),
		}
		if c.Endpoint == "" {
			if h := os.Getenv("STORAGE_EMULATOR_HOST"); h != "" {
				c.Endpoint, c.AllowHTTP = h, true
				if !strings.Contains(h, "://") {
					c.Endpoint = "http://" + h
				}
			}
		}
		t.gcs = c
	case "azure":
		if err := resolveAzure(t, o); err != nil {
			return nil, err
		}
		t.az.Concurrency, t.az.BatchSize, t.az.MaxAttempts, t.az.ListPageSize = concurrency, batch, attempts, pages
	}
	return t, nil
}

func resolveAzure(t *target, o Options) error {
	u := t.u
	c := azure.Config{
		Account:    o["azure_storage_account_name"],
		AccountKey: o["azure_storage_account_key"],
		SASToken:   o["azure_storage_sas_token"],
		AllowHTTP:  o.bool("azure_allow_http"),
		Anonymous:  o.bool("azure_skip_signature"),
		DFSURL:     o["azure_dfs_endpoint"],
		Location:   safe(u),
	}
	endpoint, emulator := o["azure_endpoint"], o.bool("azure_storage_use_emulator")
	scheme := strings.ToLower(u.Scheme)
	path := strings.Trim(u.Path, "/")
	hasHost := true // the URI names the account's host
	switch scheme {
	case "abfs", "abfss", "wasb", "wasbs", "adl":
		// container@host/path (OneLake: workspace@onelake.dfs.fabric.microsoft.com/item/path)
		if u.User == nil || u.User.Username() == "" || u.Host == "" {
			return fmt.Errorf("location %s: expected %s://CONTAINER@ACCOUNT.dfs.core.windows.net/path", safe(u), u.Scheme)
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
		return fmt.Errorf("location %s: no container", safe(u))
	}
	if cn, ok := o["azure_container_name"]; ok && cn != c.Container {
		return fmt.Errorf("location %s: azure_container_name %q is not the container the location names (%q): leave the option out, the location decides", safe(u), cn, c.Container)
	}
	if _, pw := u.User.Password(); pw || strings.ContainsAny(c.Container, "@:/?#") {
		return fmt.Errorf("location %s: the container (before the '@') must be a name only, without '@', ':' or '/'", safe(u))
	}
	if o.bool("azure_use_fabric_endpoint") {
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
				c.Account = azure.AccountFromURL(eu)
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
			return fmt.Errorf("location %s: no storage account: set azure_storage_account_name (or AZURE_STORAGE_ACCOUNT_NAME), or use an abfss://CONTAINER@ACCOUNT.dfs.core.windows.net URI", safe(u))
		}
		if !azure.IsAccountName(strings.ToLower(c.Account)) {
			return fmt.Errorf("location %s: azure_storage_account_name is not a storage account name (lower-case letters and digits); for another endpoint set azure_endpoint=https://HOST", safe(u))
		}
		c.ServiceURL = "https://" + strings.ToLower(c.Account) + ".blob.core.windows.net"
	}
	if c.DFSURL == "" {
		c.DFSURL = azure.DFSEndpoint(c.ServiceURL)
	}
	if loc := canonicalAzure(c); loc != "" {
		c.Location = loc
	}
	t.az = c
	t.azCLI = o.bool("azure_use_azure_cli")
	t.azSP = [3]string{o["azure_client_id"], o["azure_client_secret"], o["azure_tenant_id"]}
	t.azTok = o["azure_storage_token"]
	t.azFed, t.azObj, t.azRes, t.azAuth = o["azure_federated_token_file"], o["azure_object_id"], o["azure_msi_resource_id"], o["azure_authority_host"]
	return t.checkAzureCredential()
}

// fabricEndpoint applies azure_use_fabric_endpoint=true: the location is in OneLake. An
// az://WORKSPACE/PATH location gets the OneLake Blob endpoint of the account (onelake, or a
// regional REGION-onelake); a location that names its host must name a OneLake host; an
// endpoint option or the emulator contradicts it.
func fabricEndpoint(c *azure.Config, u *url.URL, hasHost, endpoint, emulator bool) error {
	switch {
	case endpoint:
		return fmt.Errorf("location %s: azure_use_fabric_endpoint=true and azure_endpoint both name the endpoint: give one of them", safe(u))
	case emulator:
		return fmt.Errorf("location %s: azure_use_fabric_endpoint=true and azure_storage_use_emulator=true contradict each other: give one of them", safe(u))
	case hasHost:
		if h, ok := azure.ParseHost(u.Hostname()); !ok || h.Account != "" {
			return fmt.Errorf("location %s: azure_use_fabric_endpoint=true, but %s is not a OneLake host (onelake.dfs.fabric.microsoft.com, REGION-onelake.dfs.fabric.microsoft.com): leave the option out for an Azure Storage account", safe(u), u.Hostname())
		}
		return nil
	}
	account := strings.ToLower(c.Account)
	if account == "" {
		account = "onelake"
	}
	h, ok := azure.ParseHost(account + ".blob.fabric.microsoft.com")
	if !ok || h.Account != "" {
		return fmt.Errorf("location %s: with azure_use_fabric_endpoint=true, azure_storage_account_name must be onelake or REGION-onelake (a OneLake endpoint), not %q", safe(u), c.Account)
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
// (azure.ParseHost). Another host is used as given only where the scheme says it is a Blob
// host (wasb://, wasbs://); otherwise it is refused, for its Blob endpoint cannot be known
// and a guess would send the credentials to a host the user did not name. The account of an
// unknown host is its first label (a Shared Key signing input, never a host).
func azureService(scheme string, u *url.URL) (serviceURL, account string, err error) {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port != "" {
		port = ":" + port
	}
	if strings.HasSuffix(host, ".") {
		return "", "", fmt.Errorf("location %s: the host ends with a dot; give it without the trailing dot", safe(u))
	}
	if h, ok := azure.ParseHost(host); ok {
		return "https://" + h.Blob() + port, h.Account, nil
	}
	account, _, _ = strings.Cut(host, ".")
	if (scheme == "wasb" || scheme == "wasbs") && isHostName(host) {
		return "https://" + host + port, account, nil
	}
	return "", account, fmt.Errorf("location %s: %s is not a host whose Blob endpoint deltavacuum knows (ACCOUNT.dfs.core.windows.net, ACCOUNT.zNN.dfs.storage.azure.net, "+
		"onelake.dfs.fabric.microsoft.com, their China and US Gov twins); name it: --storage-option azure_endpoint=https://BLOB-HOST "+
		"(and azure_dfs_endpoint=https://DFS-HOST for hierarchical-namespace directories)", safe(u), host)
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
func canonicalAzure(c azure.Config) string {
	su, err := url.Parse(c.ServiceURL)
	if err != nil || su.Port() != "" {
		return ""
	}
	h, ok := azure.ParseHost(su.Hostname())
	if !ok {
		return ""
	}
	u := url.URL{Scheme: "abfss", User: url.User(c.Container), Host: h.DFS(), Path: "/" + c.Prefix}
	return strings.TrimSuffix(u.String(), "/")
}

func (t *target) open(ctx context.Context) (storage.Store, error) {
	switch t.kind {
	case "local":
		return local.New(t.path)
	case "s3":
		return s3.New(ctx, t.s3)
	case "gcs":
		return gcs.New(ctx, t.gcs)
	case "azure":
		c := t.az
		if c.AccountKey == "" && c.SASToken == "" && !c.Anonymous {
			cred, err := t.azureCredential()
			if err != nil {
				return nil, err
			}
			c.Credential = cred
		}
		return azure.New(ctx, c)
	}
	return nil, fmt.Errorf("no backend for %q", t.kind)
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

// Package location opens the storage backend for a table URI: a local path or file:// URI,
// s3:// or s3a:// (S3 and S3-compatible stores), gs:// (Google Cloud Storage), and the Azure
// forms: abfss:// and abfs:// (ADLS Gen2 and OneLake), wasbs:// and wasb://, az:// and
// azure://, and https:// URLs of Blob, DFS and OneLake endpoints. Settings come from
// Options (--storage-option KEY=VALUE) and the environment; see Keys and storage/README.md.
//
// Secrets never appear in a store's Location, in Options.String, or in the errors of this
// package.
package location

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
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
	u     *url.URL
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
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("location %s: file URIs must name a local path (file:///path)", safe(u))
		}
		t.kind, t.path = "local", u.Path
	case "s3", "s3a":
		t.kind = "s3"
	case "gs":
		t.kind = "gcs"
	case "abfs", "abfss", "wasb", "wasbs", "az", "azure", "adl":
		t.kind = "azure"
	case "http", "https":
		if !isAzureHost(u.Hostname()) {
			return nil, fmt.Errorf("location %s: an http(s) URL must be an Azure Blob, DFS or OneLake endpoint; for S3-compatible or GCS emulators use s3:// or gs:// with an endpoint option", safe(u))
		}
		t.kind = "azure"
	default:
		return nil, fmt.Errorf("location %s: unsupported scheme %q (local path, file://, s3://, s3a://, gs://, abfss://, abfs://, wasbs://, wasb://, az://, https://)", safe(u), u.Scheme)
	}
	return t, nil
}

var azureSuffixes = []string{".core.windows.net", ".fabric.microsoft.com", ".core.chinacloudapi.cn", ".core.usgovcloudapi.net"}

func isAzureHost(h string) bool {
	h = strings.ToLower(h)
	for _, s := range azureSuffixes {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	return false
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
	path := strings.Trim(u.Path, "/")
	host := strings.ToLower(u.Hostname())
	switch strings.ToLower(u.Scheme) {
	case "abfs", "abfss", "wasb", "wasbs", "adl":
		// container@host/path (OneLake: workspace@onelake.dfs.fabric.microsoft.com/item/path)
		if u.User == nil || u.User.Username() == "" {
			return fmt.Errorf("location %s: expected %s://CONTAINER@ACCOUNT.dfs.core.windows.net/path", safe(u), u.Scheme)
		}
		c.Container = u.User.Username()
		c.Prefix = path
		if isAzureHost(host) {
			c.ServiceURL = "https://" + blobHost(host)
			if c.Account == "" {
				c.Account = accountOf(host)
			}
		} else if host != "" && c.Account == "" {
			c.Account = strings.SplitN(host, ".", 2)[0]
		}
	case "az", "azure":
		// az://container/path, with the account from the options.
		c.Container = u.Host
		c.Prefix = path
		if u.User != nil && u.User.Username() != "" { // az://container@account.blob.core.windows.net/path
			c.Container = u.User.Username()
			if isAzureHost(host) {
				c.ServiceURL = "https://" + blobHost(host)
				if c.Account == "" {
					c.Account = accountOf(host)
				}
			}
		}
	default: // https://account.blob.core.windows.net/container/path, with an optional SAS
		first, rest, _ := strings.Cut(path, "/")
		c.Container, c.Prefix = first, rest
		c.ServiceURL = "https://" + blobHost(host)
		if c.Account == "" {
			c.Account = accountOf(host)
		}
		if u.RawQuery != "" && c.SASToken == "" {
			if q := u.Query(); q.Has("sig") {
				c.SASToken = u.RawQuery
			}
		}
	}
	if c.Container == "" {
		return fmt.Errorf("location %s: no container", safe(u))
	}
	if ep := o["azure_endpoint"]; ep != "" {
		c.ServiceURL = strings.TrimSuffix(ep, "/")
		if c.Account == "" {
			if eu, err := url.Parse(ep); err == nil {
				c.Account = azure.AccountFromURL(eu)
			}
		}
	}
	if o.bool("azure_storage_use_emulator") {
		if c.Account == "" || isAzureHost(host) {
			c.Account = emulatorAccount
		}
		if o["azure_endpoint"] == "" {
			c.ServiceURL = emulatorBlob + "/" + c.Account
		}
		if c.AccountKey == "" && c.SASToken == "" && c.Account == emulatorAccount {
			c.AccountKey = emulatorKey
		}
		c.AllowHTTP = true
	}
	if c.ServiceURL == "" {
		if c.Account == "" {
			return fmt.Errorf("location %s: no storage account: set azure_storage_account_name (or AZURE_STORAGE_ACCOUNT_NAME), or use an abfss://CONTAINER@ACCOUNT.dfs.core.windows.net URI", safe(u))
		}
		c.ServiceURL = "https://" + c.Account + ".blob.core.windows.net"
	}
	t.az = c
	t.azCLI = o.bool("azure_use_azure_cli")
	t.azSP = [3]string{o["azure_client_id"], o["azure_client_secret"], o["azure_tenant_id"]}
	t.azTok = o["azure_storage_token"]
	return nil
}

// blobHost maps a DFS host to its Blob host (ACCOUNT.dfs.core.windows.net,
// onelake.dfs.fabric.microsoft.com and regional OneLake hosts).
func blobHost(h string) string {
	return strings.Replace(h, ".dfs.", ".blob.", 1)
}

// accountOf returns the account of an Azure storage host ("" for OneLake).
func accountOf(h string) string {
	if strings.HasSuffix(h, ".fabric.microsoft.com") {
		return ""
	}
	return strings.SplitN(h, ".", 2)[0]
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
	switch {
	case t.azTok != "":
		return staticToken(t.azTok), nil
	case id != "" || secret != "":
		if id == "" || secret == "" || tenant == "" {
			return nil, errors.New("azure: a service principal needs azure_client_id, azure_client_secret and azure_tenant_id")
		}
		cred, err := azidentity.NewClientSecretCredential(tenant, id, secret, nil)
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

// staticToken is a bearer token given as is.
type staticToken string

func (s staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: string(s)}, nil
}

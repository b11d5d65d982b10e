// Package azure is the storage backend for Azure Blob Storage, ADLS Gen2 (hierarchical
// namespace) and Microsoft OneLake, on the Azure SDK for Go (azblob, azidentity).
//
// Everything goes through the Blob API, which all three serve: delimited, paginated listings
// (with metadata, so that hierarchical-namespace directories, reported as blobs with
// hdi_isfolder=true, are directories), Blob Batch deletes of up to 256 keys, and Put with
// If-None-Match: * (409 BlobAlreadyExists means taken). OneLake's batches are scoped to the
// item (/WORKSPACE/ITEM?restype=container&comp=batch), since it refuses the workspace-scoped
// form. Endpoints that refuse batches (some hierarchical-namespace accounts) are detected on
// the first refusal, and every store of that endpoint in the process deletes singly,
// concurrently, from then on. An empty hierarchical-namespace directory is
// deleted with the Blob API, or with the ADLS Gen2 (DFS) API when the Blob API refuses.
package azure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/counting"
	"github.com/deltavacuum/deltavacuum/storage/internal/blobstore"
)

// MaxBatch is the most sub-requests Azure takes in one Blob Batch request.
const MaxBatch = 256

// Config configures a Store.
type Config struct {
	// ServiceURL is the Blob endpoint: https://ACCOUNT.blob.core.windows.net,
	// https://onelake.blob.fabric.microsoft.com, or an emulator's
	// http://127.0.0.1:10000/devstoreaccount1. It carries no query and no user information.
	ServiceURL string
	// DFSURL is the ADLS Gen2 endpoint, used only to delete hierarchical-namespace
	// directories the Blob API refuses to. When empty it is derived from ServiceURL for the
	// hosts whose twin Microsoft documents (DFSEndpoint), and left empty for any other.
	// It carries no query and no user information.
	DFSURL string
	// Container is the container (for OneLake, the workspace, by name or GUID).
	Container string
	// Prefix is the root of the store within the container ("" for the container root).
	Prefix string

	// Account is the storage account name (needed with AccountKey).
	Account string
	// AccountKey authenticates with Shared Key.
	AccountKey string
	// SASToken authenticates with a shared access signature (the query string, with or
	// without its leading '?').
	SASToken string
	// Credential authenticates with Microsoft Entra ID. When AccountKey, SASToken and
	// Credential are all unset, the SDK's default chain is used (environment, workload
	// identity, managed identity, Azure CLI, Azure Developer CLI).
	Credential azcore.TokenCredential
	// Anonymous sends no credentials (public containers).
	Anonymous bool
	// AllowHTTP permits an http:// ServiceURL (emulators).
	AllowHTTP bool

	// Concurrency bounds the requests in flight (default 16); BatchSize is the number of
	// keys per Blob Batch (default and most 256; 1 deletes singly); MaxAttempts bounds the
	// attempts of each request (default 8).
	Concurrency, BatchSize, MaxAttempts int
	// ListPageSize is the number of blobs per listing page (default and most 5000).
	ListPageSize int

	// WrapTransport, when set, wraps the HTTP transport (tests inject faults with it).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// BatchScope names the service whose refusal of Blob Batch this store shares with the
	// other stores of the process (blobstore.Config.BatchScope). Empty: the Blob endpoint
	// (scheme, host, port and path, which name the account, or OneLake), except with
	// WrapTransport, whose injected faults say nothing of the host: that store keeps its
	// refusals to itself.
	BatchScope string
	// Location overrides the URI reported by Location (and named in errors); it holds no secret.
	Location string
}

// Store is an Azure container prefix.
type Store struct {
	*blobstore.Store
	b *backend
}

var _ storage.Store = (*Store)(nil)

// New returns a store for cfg. It makes no request.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Container == "" {
		return nil, errors.New("azure: no container")
	}
	su, err := url.Parse(cfg.ServiceURL)
	if err != nil || su.Host == "" || (su.Scheme != "http" && su.Scheme != "https") {
		return nil, fmt.Errorf("azure: service URL %q is not an http(s) URL", redact(cfg.ServiceURL))
	}
	if err := checkEndpoint("service URL", su, cfg.AllowHTTP); err != nil {
		return nil, err
	}
	if cfg.DFSURL != "" {
		du, err := url.Parse(cfg.DFSURL)
		if err != nil || du.Host == "" || (du.Scheme != "http" && du.Scheme != "https") {
			return nil, fmt.Errorf("azure: DFS endpoint %q is not an http(s) URL", redact(cfg.DFSURL))
		}
		if err := checkEndpoint("DFS endpoint", du, cfg.AllowHTTP); err != nil {
			return nil, err
		}
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = blobstore.DefaultMaxAttempts
	}
	if cfg.BatchSize <= 0 || cfg.BatchSize > MaxBatch {
		cfg.BatchSize = MaxBatch
	}
	if cfg.DFSURL == "" {
		cfg.DFSURL = DFSEndpoint(cfg.ServiceURL)
	}
	counter := &counting.Counter{}
	rt := blobstore.TuneTransport(http.DefaultTransport.(*http.Transport).Clone(), cfg.Concurrency)
	if cfg.WrapTransport != nil {
		rt = cfg.WrapTransport(rt)
	}
	hc := &http.Client{Transport: &counting.Transport{Base: rt, Counter: counter}}
	copts := azcore.ClientOptions{
		Transport: hc,
		Retry: policy.RetryOptions{
			MaxRetries:    int32(cfg.MaxAttempts - 1),
			RetryDelay:    200 * time.Millisecond,
			MaxRetryDelay: 20 * time.Second,
		},
		InsecureAllowCredentialWithHTTP: cfg.AllowHTTP,
	}
	if cfg.MaxAttempts == 1 {
		copts.Retry.MaxRetries = -1
	}
	containerURL := strings.TrimSuffix(cfg.ServiceURL, "/") + "/" + url.PathEscape(cfg.Container)
	prefix := strings.Trim(cfg.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	// OneLake takes Blob Batch only scoped to an item: the batch URL is
	// /WORKSPACE/ITEM?restype=container&comp=batch, and the workspace-scoped request every
	// other store takes is answered 400 "Either WorkspaceId or ArtifactId are missing".
	batchItem := ""
	if isOneLake(su) {
		batchItem, _, _ = strings.Cut(prefix, "/")
		if batchItem == "" {
			cfg.BatchSize = 1 // the workspace root: keys of many items, no batch scope
		}
	}
	loc := cfg.Location
	if loc == "" {
		loc = strings.TrimSuffix(cfg.ServiceURL, "/") + "/" + cfg.Container
		if prefix != "" {
			loc += "/" + strings.TrimSuffix(prefix, "/")
		}
	}
	sas := strings.TrimPrefix(cfg.SASToken, "?")
	var cc, bc *container.Client
	var auth policy.Policy
	var newClient func(u string) (*container.Client, error)
	switch {
	case cfg.Anonymous:
		newClient = func(u string) (*container.Client, error) {
			return container.NewClientWithNoCredential(u, &container.ClientOptions{ClientOptions: copts})
		}
	case cfg.AccountKey != "":
		account := cfg.Account
		if account == "" {
			account = AccountFromURL(su)
		}
		if account == "" {
			return nil, errors.New("azure: an account key needs the account name (azure_storage_account_name)")
		}
		var cred *blob.SharedKeyCredential
		cred, err = blob.NewSharedKeyCredential(account, cfg.AccountKey)
		if err != nil {
			return nil, errors.New("azure: the account key is not valid base64")
		}
		newClient = func(u string) (*container.Client, error) {
			return container.NewClientWithSharedKeyCredential(u, cred, &container.ClientOptions{ClientOptions: copts})
		}
		auth, err = newSharedKeyPolicy(account, cfg.AccountKey)
	case sas != "":
		if _, perr := url.ParseQuery(sas); perr != nil {
			return nil, errors.New("azure: the SAS token is not a query string")
		}
		newClient = func(u string) (*container.Client, error) {
			return container.NewClientWithNoCredential(u+"?"+sas, &container.ClientOptions{ClientOptions: copts})
		}
		auth = sasPolicy(sas)
	default:
		cred := cfg.Credential
		if cred == nil {
			cred, err = azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{})
			if err != nil {
				// Only a bad AZURE_TOKEN_CREDENTIALS gets here; the SDK's message says which values it takes.
				return nil, fmt.Errorf("azure: the SDK's default credential chain: %w", err)
			}
		}
		// A credential that gives no token fails the first request: in one paragraph, not the
		// SDK's dump of every credential it tried.
		cred = explain(cred, loc, isOneLake(su)) // loc holds no secret (Config.Location)
		newClient = func(u string) (*container.Client, error) {
			return container.NewClient(u, cred, &container.ClientOptions{ClientOptions: copts})
		}
		auth = bearerPolicy(cred, cfg.AllowHTTP)
	}
	if err == nil {
		cc, err = newClient(containerURL)
	}
	if err == nil {
		bc = cc
		if batchItem != "" {
			bc, err = newClient(containerURL + "/" + url.PathEscape(batchItem))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("azure: %w", blobstore.SafeError(err))
	}
	b := &backend{cc: cc, bc: bc, container: cfg.Container, pageSize: 5000, dfsOptions: copts}
	if batchItem != "" {
		b.batchTrim = batchItem + "/"
	}
	if cfg.ListPageSize > 0 && cfg.ListPageSize < 5000 {
		b.pageSize = cfg.ListPageSize
	}
	if cfg.DFSURL != "" {
		b.dfs = newDFS(cfg.DFSURL, cfg.Container, auth, copts)
	}
	b.setupRecovery(cfg.ServiceURL, prefix, auth, copts)
	st := blobstore.New(b, blobstore.Config{
		Location:    loc,
		Root:        prefix,
		Concurrency: cfg.Concurrency,
		BatchSize:   cfg.BatchSize,
		MaxAttempts: cfg.MaxAttempts,
		DirEntities: true,
		BatchScope:  batchScope(cfg, su),
		Counter:     counter,
	})
	return &Store{Store: st, b: b}, nil
}

// isOneLake reports whether u is a OneLake endpoint (onelake.blob.fabric.microsoft.com, or a
// regional one).
func isOneLake(u *url.URL) bool {
	h, ok := ParseHost(u.Hostname())
	return ok && h.Account == ""
}

// batchScope is the key under which the store's service remembers a refused Blob Batch: the
// Blob endpoint (an account, or OneLake, whose refusal holds for all its workspaces).
func batchScope(cfg Config, su *url.URL) string {
	switch {
	case cfg.BatchScope != "":
		return cfg.BatchScope
	case cfg.WrapTransport != nil:
		return ""
	}
	return "azure:" + strings.ToLower(su.Scheme) + "://" + strings.ToLower(su.Host) + strings.TrimSuffix(su.EscapedPath(), "/")
}

// Client returns the SDK container client (for tests and tools).
func (s *Store) Client() *container.Client { return s.b.cc }

// checkEndpoint refuses an endpoint that carries a secret or sends one in clear text.
func checkEndpoint(what string, u *url.URL, allowHTTP bool) error {
	switch {
	case u.RawQuery != "":
		return fmt.Errorf("azure: the %s must carry no query; give a SAS token as SASToken (azure_storage_sas_token)", what)
	case u.User != nil:
		return fmt.Errorf("azure: the %s must carry no user information; give credentials with their options (azure_storage_account_key, azure_storage_sas_token, ...)", what)
	case u.Scheme == "http" && !allowHTTP:
		return fmt.Errorf("azure: %s %s is plain http: set azure_allow_http=true (or azure_storage_use_emulator=true) to allow it", what, redactURL(u))
	}
	return nil
}

func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return redactURL(u)
}

// redactURL returns u without user information, query or fragment.
func redactURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}

// Error is an Azure error, printed on one line: operation, key, HTTP status and error code
// (the SDK's own message spans many lines, with the whole response). It unwraps to the SDK
// error, and to storage.ErrNotExist, ErrExist or ErrNotEmpty where they apply.
type Error struct {
	Op, Name string
	Status   int
	Code     string
	Err      error
	kind     error
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("azure %s %s: %v", e.Op, e.Name, e.Err)
	}
	msg := fmt.Sprintf("azure %s %s: HTTP %d", e.Op, e.Name, e.Status)
	if e.Code != "" {
		msg += " " + e.Code
	}
	return msg
}

func (e *Error) Unwrap() []error {
	if e.kind != nil {
		return []error{e.kind, e.Err}
	}
	return []error{e.Err}
}

func wrap(op, name string, err error) error {
	if err == nil {
		return nil
	}
	e := &Error{Op: op, Name: name, Err: blobstore.SafeError(err)}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		e.Status, e.Code = re.StatusCode, re.ErrorCode
		switch {
		case re.ErrorCode == "BlobNotFound" || re.ErrorCode == "PathNotFound" ||
			(re.StatusCode == http.StatusNotFound && re.ErrorCode != "ContainerNotFound" && re.ErrorCode != "FilesystemNotFound"):
			e.kind = storage.ErrNotExist
		case re.ErrorCode == "DirectoryIsNotEmpty" || re.ErrorCode == "DirectoryNotEmpty":
			e.kind = storage.ErrNotEmpty
		}
	}
	return e
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

type backend struct {
	cc *container.Client
	// bc sends Blob Batch requests: cc, or for OneLake a client scoped to the item (the
	// first path segment below the workspace), with batchTrim the item and its '/'.
	bc        *container.Client
	batchTrim string
	container string
	dfs       *dfsClient
	pageSize  int
	// dfsOptions are the pipeline options of the DFS client (tests build their own).
	dfsOptions azcore.ClientOptions
	rec        *recoveryClient // recovery.go

	hnsMu    sync.Mutex
	hnsAsked bool
	hns      int // hnsUnknown, hnsNo or hnsYes (FlatListing)
}

// isDir reports whether a blob is a directory: an ADLS Gen2 directory (its resource type), or
// a folder blob, zero bytes with hdi_isfolder=true (WASB and HNS accounts seen through the
// Blob API). A blob with content is a file whatever its metadata says: anyone who can write
// metadata can set hdi_isfolder, and taking such a blob for a directory would hide a live file
// (or a commit) from the plan and delete its data as an "empty directory".
func isDir(meta map[string]*string, resourceType string, size int64) bool {
	if resourceType == "directory" {
		return true
	}
	if size != 0 {
		return false
	}
	for k, v := range meta {
		if strings.EqualFold(k, "hdi_isfolder") && v != nil && strings.EqualFold(*v, "true") {
			return true
		}
	}
	return false
}

func entry(item *container.BlobItem) blobstore.Entry {
	e := blobstore.Entry{Name: valueOr(item.Name, "")}
	rt := ""
	if p := item.Properties; p != nil {
		e.Size = valueOr(p.ContentLength, 0)
		e.ModTime = valueOr(p.LastModified, time.Time{})
		if p.ETag != nil {
			e.Version = string(*p.ETag)
		}
		rt = valueOr(p.ResourceType, "")
	}
	if isDir(item.Metadata, rt, e.Size) {
		e.Dir, e.Size = true, 0
	}
	return e
}

func (b *backend) List(ctx context.Context, prefix string, o blobstore.ListOptions, fn func(blobstore.Page) error) error {
	var maxResults *int32
	size := b.pageSize
	if o.Limit > 0 && o.Limit < size {
		size = o.Limit
	}
	if size < 5000 {
		maxResults = to.Ptr(int32(size))
	}
	var from *string
	if o.From != "" {
		from = to.Ptr(o.From)
	}
	include := container.ListBlobsInclude{Metadata: true}
	if o.Delim {
		pager := b.cc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{Prefix: &prefix, Include: include, MaxResults: maxResults, StartFrom: from})
		for pager.More() {
			resp, err := pager.NextPage(ctx)
			if err != nil {
				return wrap("list", prefix, err)
			}
			page := blobstore.Page{Truncated: valueOr(resp.NextMarker, "") != ""}
			if seg := resp.Segment; seg != nil {
				for _, item := range seg.BlobItems {
					page.Entries = append(page.Entries, entry(item))
				}
				for _, p := range seg.BlobPrefixes {
					page.Prefixes = append(page.Prefixes, valueOr(p.Name, ""))
				}
			}
			if err := fn(page); err != nil {
				return err
			}
		}
		return nil
	}
	pager := b.cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix, Include: include, MaxResults: maxResults, StartFrom: from})
	for pager.More() {
		resp, err := pager.NextPage(ctx)
		if err != nil {
			return wrap("list", prefix, err)
		}
		page := blobstore.Page{Truncated: valueOr(resp.NextMarker, "") != ""}
		if seg := resp.Segment; seg != nil {
			for _, item := range seg.BlobItems {
				page.Entries = append(page.Entries, entry(item))
			}
		}
		if err := fn(page); err != nil {
			return err
		}
	}
	return nil
}

// FlatListing implements blobstore.FlatLister. The order of a flat listing depends on the
// account: a flat namespace lists in lexicographic order of the names (by UTF-8 bytes or, as
// Azurite does, by UTF-16 code units), a hierarchical namespace (ADLS Gen2, OneLake) depth
// first, a directory's contents right after it. Get Account Information says which (one
// request, asked once per store); where it does not answer (Azurite, a credential that may
// not ask) any of these orders is taken as possible, and the listing is never started at a
// name, since how a hierarchical namespace reads startFrom is not documented for names that
// do not exist.
func (b *backend) FlatListing(ctx context.Context, ask bool) blobstore.FlatListing {
	fl := blobstore.FlatListing{PageSize: b.pageSize}
	switch b.hierarchical(ctx, ask) {
	case hnsNo:
		fl.Orders, fl.From = blobstore.OrderBytes|blobstore.OrderUTF16, true
	case hnsYes:
		fl.Orders = blobstore.OrderTree | blobstore.OrderTreeUTF16
	default:
		fl.Orders = blobstore.OrderBytes | blobstore.OrderUTF16 | blobstore.OrderTree | blobstore.OrderTreeUTF16
	}
	return fl
}

// What Get Account Information said of the hierarchical namespace.
const (
	hnsUnknown = iota
	hnsNo
	hnsYes
)

// hierarchical says whether the account has a hierarchical namespace. With ask, the first
// call asks the account (Get Account Information); the answer is kept for the store's life,
// hnsUnknown too (no answer, an error), so that it costs one request at most.
func (b *backend) hierarchical(ctx context.Context, ask bool) int {
	b.hnsMu.Lock()
	defer b.hnsMu.Unlock()
	if b.hnsAsked || !ask {
		return b.hns
	}
	b.hnsAsked = true
	info, err := b.cc.GetAccountInfo(ctx, nil)
	switch {
	case err != nil || info.IsHierarchicalNamespaceEnabled == nil:
		b.hns = hnsUnknown
	case *info.IsHierarchicalNamespaceEnabled:
		b.hns = hnsYes
	default:
		b.hns = hnsNo
	}
	return b.hns
}

func (b *backend) Head(ctx context.Context, name string) (blobstore.Entry, error) {
	var raw *http.Response
	resp, err := b.cc.NewBlobClient(name).GetProperties(policy.WithCaptureResponse(ctx, &raw), nil)
	if err != nil {
		return blobstore.Entry{}, wrap("head", name, err)
	}
	e := blobstore.Entry{
		Name:    name,
		Size:    valueOr(resp.ContentLength, 0),
		ModTime: valueOr(resp.LastModified, time.Time{}),
	}
	if resp.ETag != nil {
		e.Version = string(*resp.ETag)
	}
	rt := ""
	if raw != nil {
		rt = raw.Header.Get("x-ms-resource-type")
	}
	if isDir(resp.Metadata, rt, e.Size) {
		e.Dir, e.Size = true, 0
	}
	return e, nil
}

func (b *backend) ReadRange(ctx context.Context, name, version string, off, n int64) (io.ReadCloser, error) {
	opts := &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: n}}
	if version != "" {
		opts.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(version))}}
	}
	resp, err := b.cc.NewBlobClient(name).DownloadStream(ctx, opts)
	if err != nil {
		var re *azcore.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusPreconditionFailed {
			return nil, fmt.Errorf("azure read %s: %w (written again or deleted while it was read)", name, storage.ErrChanged)
		}
		return nil, wrap("read", name, err)
	}
	return resp.Body, nil
}

func (b *backend) Put(ctx context.Context, name string, data []byte, ifAbsent bool) error {
	opts := &blockblob.UploadOptions{}
	if ifAbsent {
		opts.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}
		ctx = policy.WithRetryOptions(ctx, policy.RetryOptions{MaxRetries: -1})
	}
	_, err := b.cc.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), opts)
	if err != nil {
		var re *azcore.ResponseError
		if ifAbsent && errors.As(err, &re) && (re.ErrorCode == "BlobAlreadyExists" || re.StatusCode == http.StatusPreconditionFailed ||
			(re.StatusCode == http.StatusConflict && re.ErrorCode == "")) {
			return fmt.Errorf("%w: %s", storage.ErrExist, name)
		}
		werr := wrap("put", name, err)
		if pathConflict(werr) {
			return b.notDir(ctx, name, werr) // a file on the way (hierarchical namespace)
		}
		return werr
	}
	return nil
}

func (b *backend) DeleteBatch(ctx context.Context, names []string) (errs []error, err error) {
	bb, err := b.bc.NewBatchBuilder()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", blobstore.ErrBatchUnsupported, blobstore.SafeError(err))
	}
	for _, n := range names {
		rel, ok := strings.CutPrefix(n, b.batchTrim)
		if !ok || rel == "" {
			// Never expected: every key of the store is below its root, inside the item.
			return nil, fmt.Errorf("azure batch delete: %s is not inside the item %s of the batch", n, strings.TrimSuffix(b.batchTrim, "/"))
		}
		if err := bb.Delete(rel, nil); err != nil {
			return nil, fmt.Errorf("%w: %v", blobstore.ErrBatchUnsupported, blobstore.SafeError(err))
		}
	}
	defer func() {
		// The SDK's batch response parser indexes sub-requests by Content-ID unchecked.
		if r := recover(); r != nil {
			errs, err = nil, fmt.Errorf("%w: unparsable batch response (%v)", blobstore.ErrBatchUnsupported, r)
		}
	}()
	resp, err := b.bc.SubmitBatch(ctx, bb, nil)
	if err != nil {
		var re *azcore.ResponseError
		if errors.As(err, &re) {
			if re.StatusCode >= 400 && re.StatusCode < 500 && !retryableStatus(re.StatusCode) {
				// OneLake answers 400, other stores 400/403/404/405/409/501: no batches here.
				// 401, 403 and 404 may be this store's credentials or container, not the
				// service: they are not remembered for the other stores of the host.
				if re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusForbidden || re.StatusCode == http.StatusNotFound {
					return nil, fmt.Errorf("%w: %w: %v", blobstore.ErrBatchUnsupported, blobstore.ErrBatchRefusedHere, wrap("batch delete", fmt.Sprintf("(%d keys)", len(names)), err))
				}
				return nil, fmt.Errorf("%w: %v", blobstore.ErrBatchUnsupported, wrap("batch delete", fmt.Sprintf("(%d keys)", len(names)), err))
			}
			if re.StatusCode == http.StatusNotImplemented {
				return nil, fmt.Errorf("%w: %v", blobstore.ErrBatchUnsupported, wrap("batch delete", fmt.Sprintf("(%d keys)", len(names)), err))
			}
			return nil, wrap("batch delete", fmt.Sprintf("(%d keys)", len(names)), err)
		}
		if ctx.Err() != nil || isConnErr(err) {
			return nil, wrap("batch delete", fmt.Sprintf("(%d keys)", len(names)), err)
		}
		// A response the SDK could not read (sub-responses missing or malformed): the batch
		// may have run in part; single deletes find out, key by key.
		return nil, fmt.Errorf("%w: %v", blobstore.ErrBatchUnsupported, wrap("batch delete", fmt.Sprintf("(%d keys)", len(names)), err))
	}
	errs = make([]error, len(names))
	seen := make([]bool, len(names))
	refused := 0
	for pos, item := range resp.Responses {
		i := pos
		if item.ContentID != nil {
			i = *item.ContentID
		}
		if i < 0 || i >= len(names) {
			continue
		}
		seen[i] = true
		if item.Error != nil {
			errs[i] = wrap("delete", names[i], item.Error)
			var re *azcore.ResponseError
			if errors.As(item.Error, &re) && re.StatusCode >= 400 && re.StatusCode < 500 &&
				re.StatusCode != http.StatusNotFound && !retryableStatus(re.StatusCode) {
				refused++
			}
		}
	}
	for i := range names {
		if !seen[i] {
			errs[i] = &Error{Op: "delete", Name: names[i], Status: http.StatusInternalServerError, Code: "MissingBatchSubResponse", Err: errors.New("no sub-response")}
		}
	}
	if refused == len(names) && len(names) > 1 {
		// Every sub-request refused alike: a store that accepts the batch envelope but not
		// its contents. Deleting singly tells the keys apart.
		return nil, fmt.Errorf("%w: %w: every sub-request refused (%v)", blobstore.ErrBatchUnsupported, blobstore.ErrBatchRefusedHere, errs[0])
	}
	return errs, nil
}

func (b *backend) DeleteOne(ctx context.Context, name string) error {
	_, err := b.cc.NewBlobClient(name).Delete(ctx, nil)
	return wrap("delete", name, err)
}

// DeleteDirEntity deletes an empty hierarchical-namespace directory (or a WASB folder blob):
// with the Blob API, and with the DFS API when the Blob API refuses to (it answers 409
// DirectoryIsNotEmpty when the directory has entries, which is final).
func (b *backend) DeleteDirEntity(ctx context.Context, name string) error {
	err := b.DeleteOne(ctx, name)
	if err == nil || errors.Is(err, storage.ErrNotExist) || errors.Is(err, storage.ErrNotEmpty) {
		return err
	}
	var e *Error
	if !errors.As(err, &e) || e.Status < 400 || e.Status >= 500 || retryableStatus(e.Status) {
		return err
	}
	if b.dfs == nil {
		return fmt.Errorf("%w (and no DFS endpoint to delete the directory with: set azure_dfs_endpoint)", err)
	}
	return b.dfs.deleteDir(ctx, name)
}

func isConnErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF)
}

// Throttling implements blobstore.Throttler: 429, 503 (ServerBusy) or 500 OperationTimedOut,
// which Azure Storage answers when an account or a partition is over its limits.
func (b *backend) Throttling(err error) bool {
	var e *Error
	if errors.As(err, &e) && e.Status != 0 {
		return e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable || e.Code == "ServerBusy" || e.Code == "OperationTimedOut"
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode == http.StatusTooManyRequests || re.StatusCode == http.StatusServiceUnavailable || re.ErrorCode == "ServerBusy" || re.ErrorCode == "OperationTimedOut"
	}
	return false
}

func (b *backend) Retryable(err error) bool {
	var e *Error
	if errors.As(err, &e) && e.Status != 0 {
		return retryableStatus(e.Status) || e.Code == "ServerBusy" || e.Code == "InternalError" || e.Code == "OperationTimedOut"
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return retryableStatus(re.StatusCode)
	}
	return isConnErr(err)
}

func valueOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// String describes c without its secrets (so that %v never prints them).
func (c Config) String() string {
	return fmt.Sprintf("azure.Config{ServiceURL:%q DFSURL:%q Container:%q Prefix:%q Account:%q AccountKey:%s SASToken:%s Credential:%v Anonymous:%v AllowHTTP:%v Concurrency:%d BatchSize:%d MaxAttempts:%d ListPageSize:%d}",
		redact(c.ServiceURL), redact(c.DFSURL), c.Container, c.Prefix, c.Account, hidden(c.AccountKey), hidden(c.SASToken), c.Credential != nil, c.Anonymous, c.AllowHTTP, c.Concurrency, c.BatchSize, c.MaxAttempts, c.ListPageSize)
}

// GoString is String.
func (c Config) GoString() string { return c.String() }

func hidden(s string) string {
	if s == "" {
		return `""`
	}
	return "****"
}

// MakesDirectories implements storage.DirectoryMaker: on an account with a hierarchical
// namespace (ADLS Gen2, OneLake) a blob written makes the directories on its way. An account
// that cannot tell is taken for one that does (a caller then removes folders only when empty).
func (s *Store) MakesDirectories(ctx context.Context) bool {
	return s.b.hierarchical(ctx, true) != hnsNo
}

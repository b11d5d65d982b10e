// Package gcs is the storage backend for Google Cloud Storage, on the Cloud Storage client
// library for Go (JSON API). GCS has no batch delete in that API: deletes are single requests,
// concurrent (Config.Concurrency in flight), and a listed file is deleted with the generation
// listed (ifGenerationMatch), so that one written again since is kept. PutIfAbsent is an
// upload with the DoesNotExist precondition (ifGenerationMatch=0; 412 means taken). Empty
// folders of hierarchical-namespace buckets are deleted as directories; versioning and soft
// delete are read, and deleted objects restored, through blobstore's optional interfaces.
package gcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	gcs "cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	storagev1 "google.golang.org/api/storage/v1"
	htransport "google.golang.org/api/transport/http"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/counting"
	"github.com/deltavacuum/deltavacuum/storage/internal/blobstore"
)

// Config configures a Store.
type Config struct {
	Bucket string
	// Prefix is the root of the store within the bucket ("" for the bucket root).
	Prefix string

	// Endpoint overrides the service endpoint, e.g. http://127.0.0.1:4443 for an emulator
	// (the JSON API is under /storage/v1/ there).
	Endpoint string
	// AllowHTTP permits an http:// endpoint. Requests to an http endpoint carry no
	// credentials.
	AllowHTTP bool

	// ServiceAccountFile is the path of a service-account key file; ServiceAccountKey is the
	// key itself (JSON). Without either, application default credentials are used
	// (GOOGLE_APPLICATION_CREDENTIALS, gcloud's credentials, the metadata server).
	ServiceAccountFile string
	ServiceAccountKey  string
	// Anonymous sends no credentials (public buckets).
	Anonymous bool

	// Concurrency bounds the deletes in flight (default 16); MaxAttempts bounds the attempts
	// of each request (default 8).
	Concurrency, MaxAttempts int
	// ListPageSize is the number of objects per listing page (default and most 1000).
	ListPageSize int

	// WrapTransport, when set, wraps the HTTP transport (tests inject faults with it).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Location overrides the URI reported by Location (default gs://bucket/prefix).
	Location string
}

// Store is a GCS bucket prefix.
type Store struct {
	*blobstore.Store
	client *gcs.Client
	bucket string
}

var _ storage.Store = (*Store)(nil)

// New returns a store for cfg. It makes no request to the bucket.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("gcs: no bucket")
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = blobstore.DefaultMaxAttempts
	}
	plainHTTP := false
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.RawQuery != "" {
			return nil, fmt.Errorf("gcs: endpoint %q is not an http(s) URL", redact(cfg.Endpoint))
		}
		if u.Scheme == "http" {
			if !cfg.AllowHTTP {
				return nil, fmt.Errorf("gcs: endpoint %s is plain http: set google_allow_http=true to allow it", redact(cfg.Endpoint))
			}
			plainHTTP = true
		}
	}
	prefix := strings.Trim(cfg.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	loc := cfg.Location
	if loc == "" {
		loc = "gs://" + cfg.Bucket
		if prefix != "" {
			loc += "/" + strings.TrimSuffix(prefix, "/")
		}
	}
	counter := &counting.Counter{}
	rt := blobstore.TuneTransport(http.DefaultTransport.(*http.Transport).Clone(), cfg.Concurrency)
	if cfg.WrapTransport != nil {
		rt = cfg.WrapTransport(rt)
	}
	if !cfg.Anonymous && !plainHTTP {
		authOpts := []option.ClientOption{option.WithScopes(gcs.ScopeFullControl)}
		switch {
		case cfg.ServiceAccountKey != "":
			authOpts = append(authOpts, option.WithAuthCredentialsJSON(option.ServiceAccount, []byte(cfg.ServiceAccountKey)))
		case cfg.ServiceAccountFile != "":
			authOpts = append(authOpts, option.WithAuthCredentialsFile(option.ServiceAccount, cfg.ServiceAccountFile))
		default:
			if ce := noDefaultCredentials(loc); ce != nil {
				return nil, ce
			}
		}
		var err error
		rt, err = htransport.NewTransport(ctx, rt, authOpts...)
		if err != nil {
			if ce := explainNoCredentials(err, loc); ce != err {
				return nil, ce
			}
			return nil, fmt.Errorf("gcs: credentials: %w", blobstore.SafeError(sanitize(err)))
		}
	}
	hc := &http.Client{Transport: &counting.Transport{Base: rt, Counter: counter}}
	opts := []option.ClientOption{option.WithHTTPClient(hc), gcs.WithJSONReads()}
	if cfg.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(strings.TrimSuffix(cfg.Endpoint, "/")+"/storage/v1/"))
	}
	client, err := gcs.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gcs: %w", blobstore.SafeError(err))
	}
	client.SetRetry(
		gcs.WithBackoff(gax.Backoff{Initial: 200 * time.Millisecond, Max: 20 * time.Second, Multiplier: 2}),
		gcs.WithMaxAttempts(cfg.MaxAttempts),
	)
	// The JSON API's folders, which the storage client has no methods for, on the same
	// HTTP client (credentials, counting, faults) and endpoint.
	rawOpts := []option.ClientOption{option.WithHTTPClient(hc)}
	if cfg.Endpoint != "" {
		rawOpts = append(rawOpts, option.WithEndpoint(strings.TrimSuffix(cfg.Endpoint, "/")+"/storage/v1/"))
	}
	raw, err := storagev1.NewService(ctx, rawOpts...)
	if err != nil {
		return nil, fmt.Errorf("gcs: %w", blobstore.SafeError(err))
	}
	b := &backend{bucket: client.Bucket(cfg.Bucket), name: cfg.Bucket, pageSize: 1000, raw: raw, maxAttempts: cfg.MaxAttempts}
	if cfg.ListPageSize > 0 && cfg.ListPageSize < 1000 {
		b.pageSize = cfg.ListPageSize
	}
	st := blobstore.New(b, blobstore.Config{
		Location:    loc,
		Root:        prefix,
		Concurrency: cfg.Concurrency,
		BatchSize:   1,
		MaxAttempts: cfg.MaxAttempts,
		Counter:     counter,
		// Deletes carry the generation listed (ifGenerationMatch).
		ConditionalDeletes: true,
	})
	return &Store{Store: st, client: client, bucket: cfg.Bucket}, nil
}

// Client returns the SDK client (for tests and tools).
func (s *Store) Client() *gcs.Client { return s.client }

// Close releases the client.
func (s *Store) Close() error { return s.client.Close() }

func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// sanitize drops the text of credential errors that may quote a key file.
func sanitize(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "PRIVATE KEY") || strings.Contains(msg, "private_key") {
		return errors.New("invalid service-account credentials")
	}
	return err
}

type backend struct {
	bucket   *gcs.BucketHandle
	name     string
	pageSize int

	raw         *storagev1.Service // for folders
	maxAttempts int
	hnsOnce     sync.Once
	hns         bool
}

func wrap(op, name string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, gcs.ErrObjectNotExist) {
		return fmt.Errorf("%w: %s", storage.ErrNotExist, name)
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) && ge.Code == http.StatusNotFound && !strings.Contains(strings.ToLower(ge.Message), "bucket") {
		return fmt.Errorf("%w: %s", storage.ErrNotExist, name)
	}
	return fmt.Errorf("gcs %s %s: %w", op, name, blobstore.SafeError(err))
}

func (b *backend) List(ctx context.Context, prefix string, o blobstore.ListOptions, fn func(blobstore.Page) error) error {
	q := &gcs.Query{Prefix: prefix, StartOffset: o.From, EndOffset: o.To}
	if o.Delim {
		q.Delimiter = "/"
	}
	if err := q.SetAttrSelection([]string{"Name", "Size", "Updated", "Generation"}); err != nil {
		return err
	}
	size := b.pageSize
	if o.Limit > 0 && o.Limit < size {
		size = o.Limit
	}
	pager := iterator.NewPager(b.bucket.Objects(ctx, q), size, "")
	for {
		var attrs []*gcs.ObjectAttrs
		token, err := pager.NextPage(&attrs)
		if err != nil {
			return wrap("list", prefix, err)
		}
		page := blobstore.Page{Truncated: token != ""}
		for _, a := range attrs {
			if a.Prefix != "" {
				page.Prefixes = append(page.Prefixes, a.Prefix)
				continue
			}
			page.Entries = append(page.Entries, blobstore.Entry{
				Name: a.Name, Size: a.Size, ModTime: a.Updated, Version: strconv.FormatInt(a.Generation, 10),
			})
		}
		if err := fn(page); err != nil {
			return err
		}
		if token == "" {
			return nil
		}
	}
}

// FlatListing implements blobstore.FlatLister: GCS lists in lexicographic order of the
// names' bytes and starts a listing at a name (startOffset) and ends it before one
// (endOffset).
func (b *backend) FlatListing(context.Context, bool) blobstore.FlatListing {
	return blobstore.FlatListing{Orders: blobstore.OrderBytes, From: true, To: true, PageSize: b.pageSize}
}

func (b *backend) Head(ctx context.Context, name string) (blobstore.Entry, error) {
	a, err := b.bucket.Object(name).Attrs(ctx)
	if errors.Is(err, gcs.ErrObjectNotExist) && !strings.HasSuffix(name, "/") && b.HasDirEntities(ctx) {
		return b.headFolder(ctx, name)
	}
	if err != nil {
		return blobstore.Entry{}, wrap("head", name, err)
	}
	return blobstore.Entry{Name: name, Size: a.Size, ModTime: a.Updated, Version: strconv.FormatInt(a.Generation, 10)}, nil
}

func (b *backend) ReadRange(ctx context.Context, name, version string, off, n int64) (io.ReadCloser, error) {
	o := b.bucket.Object(name)
	if gen, err := strconv.ParseInt(version, 10, 64); err == nil && gen > 0 {
		o = o.Generation(gen)
	}
	r, err := o.NewRangeReader(ctx, off, n)
	if err != nil {
		if errors.Is(err, gcs.ErrObjectNotExist) && version != "" {
			return nil, fmt.Errorf("gcs read %s: %w (written again or deleted while it was read)", name, storage.ErrChanged)
		}
		return nil, wrap("read", name, err)
	}
	return r, nil
}

func (b *backend) Put(ctx context.Context, name string, data []byte, ifAbsent bool) error {
	o := b.bucket.Object(name)
	if ifAbsent {
		// One attempt: the store retries, and reads back after an ambiguous failure.
		o = o.If(gcs.Conditions{DoesNotExist: true}).Retryer(gcs.WithPolicy(gcs.RetryNever))
	} else {
		o = o.Retryer(gcs.WithPolicy(gcs.RetryAlways))
	}
	w := o.NewWriter(ctx)
	// One request (the object fits in one chunk), retried by the library: a chunk size of 0
	// would disable its retries.
	const quantum = 256 << 10
	w.ChunkSize = (len(data)/quantum + 1) * quantum
	w.ContentType = "application/octet-stream"
	if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
		w.Close()
		return wrap("put", name, err)
	}
	if err := w.Close(); err != nil {
		var ge *googleapi.Error
		if ifAbsent && errors.As(err, &ge) && ge.Code == http.StatusPreconditionFailed {
			return fmt.Errorf("%w: %s", storage.ErrExist, name)
		}
		return wrap("put", name, err)
	}
	return nil
}

func (b *backend) DeleteBatch(ctx context.Context, names []string) ([]error, error) {
	return nil, blobstore.ErrBatchUnsupported
}

func (b *backend) DeleteOne(ctx context.Context, name string) error {
	// Retried even though a delete without a generation is not idempotent for GCS: a retry
	// after a delete that landed finds the object gone, which counts as gone.
	err := b.bucket.Object(name).Retryer(gcs.WithPolicy(gcs.RetryAlways)).Delete(ctx)
	return wrap("delete", name, err)
}

// DeleteOneIf implements blobstore.VersionDeleter: a delete with ifGenerationMatch, so that
// an object written again since the listing (a new generation) is kept. version must be a
// generation as the listing gives it (a positive decimal, no sign, no leading zero): 0 would
// mean "only if absent" to GCS, and anything else would not be the generation listed.
func (b *backend) DeleteOneIf(ctx context.Context, name, version string) error {
	gen, err := strconv.ParseInt(version, 10, 64)
	if err != nil || gen <= 0 || strconv.FormatInt(gen, 10) != version {
		return fmt.Errorf("gcs delete %s: %q is not a generation a listing gives; not deleted", name, version)
	}
	// Idempotent: a retry after a delete that landed finds no object (gone).
	err = b.bucket.Object(name).If(gcs.Conditions{GenerationMatch: gen}).Retryer(gcs.WithPolicy(gcs.RetryAlways)).Delete(ctx)
	if isPreconditionFailed(err) {
		return fmt.Errorf("%w: %s is no longer generation %d", storage.ErrChanged, name, gen)
	}
	return wrap("delete", name, err)
}

// Throttling implements blobstore.Throttler: 429 (rateLimitExceeded) or 503.
func (b *backend) Throttling(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && (ge.Code == http.StatusTooManyRequests || ge.Code == http.StatusServiceUnavailable)
}

func (b *backend) Retryable(err error) bool {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code == 408 || ge.Code == 429 || ge.Code >= 500
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if gcs.ShouldRetry(e) {
			return true
		}
	}
	return false
}

// String describes c without its secrets (so that %v never prints them).
func (c Config) String() string {
	key := `""`
	if c.ServiceAccountKey != "" {
		key = "****"
	}
	return fmt.Sprintf("gcs.Config{Bucket:%q Prefix:%q Endpoint:%q AllowHTTP:%v ServiceAccountFile:%q ServiceAccountKey:%s Anonymous:%v Concurrency:%d MaxAttempts:%d ListPageSize:%d}",
		c.Bucket, c.Prefix, redact(c.Endpoint), c.AllowHTTP, c.ServiceAccountFile, key, c.Anonymous, c.Concurrency, c.MaxAttempts, c.ListPageSize)
}

// GoString is String.
func (c Config) GoString() string { return c.String() }

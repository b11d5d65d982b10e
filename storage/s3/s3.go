// Package s3 is the storage backend for Amazon S3 and S3-compatible stores, on the AWS SDK for
// Go v2. Listing is delimited and paginated (ListObjectsV2), deletes go in DeleteObjects
// batches of up to 1000 keys, and PutIfAbsent is a PutObject with If-None-Match: * (412 means
// taken).
//
// S3 does not tell whether a deleted key existed: a key already gone is reported as deleted
// (DeleteResult.Gone is false, Err nil).
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/counting"
	"github.com/deltavacuum/deltavacuum/storage/internal/blobstore"
)

// MaxBatch is the most keys S3 takes in one DeleteObjects request.
const MaxBatch = 1000

// Config configures a Store. Empty fields take the AWS SDK's default chain (environment,
// shared config and credentials files, web identity, container and instance roles).
type Config struct {
	Bucket string
	// Prefix is the root of the store within the bucket ("" for the bucket root).
	Prefix string

	Region   string
	Endpoint string // e.g. http://127.0.0.1:7070 for an S3-compatible server
	// PathStyle addresses the bucket in the path (endpoint/bucket/key), as most
	// S3-compatible servers need, instead of the host (bucket.endpoint/key).
	PathStyle bool
	// AllowHTTP permits an http:// endpoint.
	AllowHTTP bool

	AccessKeyID, SecretAccessKey, SessionToken string
	Profile                                    string
	// SkipSignature sends unsigned (anonymous) requests.
	SkipSignature bool

	// Concurrency bounds the requests in flight (default 16); BatchSize is the number of
	// keys per DeleteObjects (default and most 1000; 1 deletes singly); MaxAttempts bounds
	// the attempts of each request (default 8).
	Concurrency, BatchSize, MaxAttempts int
	// ListPageSize is the number of keys per listing page (default and most 1000).
	ListPageSize int

	// WrapTransport, when set, wraps the HTTP transport (tests inject faults with it).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Location overrides the URI reported by Location (default s3://bucket/prefix).
	Location string
}

// Store is an S3 bucket prefix.
type Store struct {
	*blobstore.Store
	client  *s3.Client
	bucket  string
	counter *counting.Counter
}

var _ storage.Store = (*Store)(nil)

// New returns a store for cfg. It makes no request unless the region must be found.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3: no bucket")
	}
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("s3: endpoint %q is not an http(s) URL", redactURL(cfg.Endpoint))
		}
		if u.Scheme == "http" && !cfg.AllowHTTP {
			return nil, fmt.Errorf("s3: endpoint %s is plain http: set aws_allow_http=true to allow it", redactURL(cfg.Endpoint))
		}
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = blobstore.DefaultMaxAttempts
	}
	if cfg.BatchSize <= 0 || cfg.BatchSize > MaxBatch {
		cfg.BatchSize = MaxBatch
	}
	counter := &counting.Counter{}
	var loadOpts []func(*config.LoadOptions) error
	loadOpts = append(loadOpts,
		config.WithLogger(sdkLogger{}),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = cfg.MaxAttempts
				o.MaxBackoff = 20 * time.Second
				o.RateLimiter = ratelimit.None
			})
		}),
	)
	if cfg.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(cfg.Region))
	}
	if cfg.Profile != "" {
		loadOpts = append(loadOpts, config.WithSharedConfigProfile(cfg.Profile))
	}
	switch {
	case cfg.SkipSignature:
		loadOpts = append(loadOpts, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	case cfg.AccessKeyID != "" || cfg.SecretAccessKey != "":
		if cfg.AccessKeyID == "" || cfg.SecretAccessKey == "" {
			return nil, errors.New("s3: an access key id needs its secret access key, and the other way round")
		}
		loadOpts = append(loadOpts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("s3: loading AWS configuration: %w", blobstore.SafeError(err))
	}
	prefix := strings.Trim(cfg.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	loc := cfg.Location
	if loc == "" {
		loc = "s3://" + cfg.Bucket
		if prefix != "" {
			loc += "/" + strings.TrimSuffix(prefix, "/")
		}
	}
	if !cfg.SkipSignature && cfg.AccessKeyID == "" && awsCfg.Credentials != nil {
		// The default chain (or a profile): a failure says what to set, not what the SDK tried last.
		awsCfg.Credentials = aws.NewCredentialsCache(explainedCredentials{base: awsCfg.Credentials, location: loc, profile: cfg.Profile})
	}
	// The SDK's own client (it applies AWS_CA_BUNDLE), with its transport counted.
	var rt http.RoundTripper
	if bc, ok := awsCfg.HTTPClient.(*awshttp.BuildableClient); ok {
		rt = bc.GetTransport()
	} else {
		rt = http.DefaultTransport.(*http.Transport).Clone()
	}
	rt = blobstore.TuneTransport(rt, cfg.Concurrency)
	if cfg.WrapTransport != nil {
		rt = cfg.WrapTransport(rt)
	}
	awsCfg.HTTPClient = &http.Client{Transport: &counting.Transport{Base: rt, Counter: counter}}
	clientOpts := func(o *s3.Options) {
		o.UsePathStyle = cfg.PathStyle
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		o.DisableLogOutputChecksumValidationSkipped = true
	}
	if awsCfg.Region == "" {
		if cfg.Endpoint != "" {
			awsCfg.Region = "us-east-1"
		} else {
			awsCfg.Region = bucketRegion(ctx, awsCfg, clientOpts, cfg.Bucket)
		}
	}
	client := s3.NewFromConfig(awsCfg, clientOpts)

	// S3 Express One Zone (directory buckets, named …--x-s3) lists in no order and
	// without StartAfter: its walks list folder by folder, as before.
	express := strings.HasSuffix(cfg.Bucket, "--x-s3")
	b := &backend{client: client, bucket: cfg.Bucket, pageSize: 1000, express: express}
	if cfg.ListPageSize > 0 && cfg.ListPageSize < 1000 {
		b.pageSize = cfg.ListPageSize
	}
	st := blobstore.New(b, blobstore.Config{
		Location:    loc,
		Root:        prefix,
		Concurrency: cfg.Concurrency,
		BatchSize:   cfg.BatchSize,
		MaxAttempts: cfg.MaxAttempts,
		Counter:     counter,
	})
	return &Store{Store: st, client: client, bucket: cfg.Bucket, counter: counter}, nil
}

// ReportsGone returns false: S3 answers a delete of a missing key as a success, so such a
// key is reported as deleted, not Gone (see storagetest.GoneReporter).
func (s *Store) ReportsGone() bool { return false }

// Client returns the SDK client (for tests and tools).
func (s *Store) Client() *s3.Client { return s.client }

// bucketRegion asks S3 where the bucket is (the x-amz-bucket-region header, sent even with a
// 301 or 403), falling back to us-east-1.
func bucketRegion(ctx context.Context, awsCfg aws.Config, opts func(*s3.Options), bucket string) string {
	c := awsCfg.Copy()
	c.Region = "us-east-1"
	client := s3.NewFromConfig(c, opts)
	var region string
	_, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}, func(o *s3.Options) {
		o.RetryMaxAttempts = 1
	})
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		region = re.Response.Header.Get("X-Amz-Bucket-Region")
	}
	if err == nil {
		region = "us-east-1"
	}
	if region == "" {
		region = "us-east-1"
	}
	return region
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

type backend struct {
	client   *s3.Client
	bucket   string
	pageSize int
	express  bool
}

// FlatListing implements blobstore.FlatLister: S3 lists in UTF-8 binary order and starts a
// listing after a name (StartAfter); directory buckets do neither.
func (b *backend) FlatListing(context.Context, bool) blobstore.FlatListing {
	if b.express {
		return blobstore.FlatListing{}
	}
	return blobstore.FlatListing{Orders: blobstore.OrderBytes, From: true, PageSize: b.pageSize}
}

func status(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func notFound(err error) bool {
	switch code(err) {
	case "NoSuchKey", "NotFound":
		return true
	}
	return status(err) == http.StatusNotFound && code(err) != "NoSuchBucket"
}

func wrap(op, name string, err error) error {
	if err == nil {
		return nil
	}
	if notFound(err) {
		return fmt.Errorf("%w: %s", storage.ErrNotExist, name)
	}
	return fmt.Errorf("s3 %s %s: %w", op, name, safeError(err))
}

func (b *backend) List(ctx context.Context, prefix string, o blobstore.ListOptions, fn func(blobstore.Page) error) error {
	// Keys come back URL-encoded: an XML response cannot carry every character a key may hold
	// (without it a control character or U+FFFE arrives as U+FFFD, another key's name).
	in := &s3.ListObjectsV2Input{Bucket: aws.String(b.bucket), Prefix: aws.String(prefix), EncodingType: types.EncodingTypeUrl}
	if o.Delim {
		in.Delimiter = aws.String("/")
	}
	if o.From != "" && !b.express {
		// StartAfter is exclusive: a name just before From (the names between them, if any,
		// come back and the caller drops them).
		in.StartAfter = aws.String(blobstore.Before(o.From))
	}
	size := b.pageSize
	if o.Limit > 0 && o.Limit < size {
		size = o.Limit
	}
	if size < 1000 {
		in.MaxKeys = aws.Int32(int32(size))
	}
	p := s3.NewListObjectsV2Paginator(b.client, in)
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("s3 list %s: %w", prefix, safeError(err))
		}
		page := blobstore.Page{Truncated: aws.ToBool(out.IsTruncated)}
		for _, o := range out.Contents {
			name, err := listedKey(out.EncodingType, aws.ToString(o.Key))
			if err != nil {
				return fmt.Errorf("s3 list %s: %w", prefix, err)
			}
			page.Entries = append(page.Entries, blobstore.Entry{
				Name:    name,
				Size:    aws.ToInt64(o.Size),
				ModTime: aws.ToTime(o.LastModified),
				Version: aws.ToString(o.ETag),
			})
		}
		for _, cp := range out.CommonPrefixes {
			name, err := listedKey(out.EncodingType, aws.ToString(cp.Prefix))
			if err != nil {
				return fmt.Errorf("s3 list %s: %w", prefix, err)
			}
			page.Prefixes = append(page.Prefixes, name)
		}
		if err := fn(page); err != nil {
			return err
		}
	}
	return nil
}

func listedKey(enc types.EncodingType, key string) (string, error) {
	if enc == types.EncodingTypeUrl {
		k, err := url.QueryUnescape(key)
		if err != nil {
			return "", fmt.Errorf("the store answered a URL-encoded key that does not decode (%q): %v", key, err)
		}
		return k, nil
	}
	if strings.ContainsRune(key, utf8.RuneError) {
		return "", fmt.Errorf("the store listed %q without URL encoding; its U+FFFD may stand for a character the XML answer could not carry, so the listing cannot be trusted (use a store that honours encoding-type=url)", key)
	}
	return key, nil
}

func (b *backend) Head(ctx context.Context, name string) (blobstore.Entry, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(name)})
	if err != nil {
		return blobstore.Entry{}, wrap("head", name, err)
	}
	return blobstore.Entry{
		Name:    name,
		Size:    aws.ToInt64(out.ContentLength),
		ModTime: aws.ToTime(out.LastModified),
		Version: aws.ToString(out.ETag),
	}, nil
}

func (b *backend) ReadRange(ctx context.Context, name, version string, off, n int64) (io.ReadCloser, error) {
	in := &s3.GetObjectInput{
		Bucket: aws.String(b.bucket),
		Key:    aws.String(name),
		Range:  aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1)),
	}
	if version != "" {
		in.IfMatch = aws.String(version)
	}
	out, err := b.client.GetObject(ctx, in)
	if err != nil {
		if status(err) == http.StatusPreconditionFailed {
			return nil, fmt.Errorf("s3 read %s: %w (written again or deleted while it was read)", name, storage.ErrChanged)
		}
		return nil, wrap("read", name, err)
	}
	return out.Body, nil
}

func (b *backend) Put(ctx context.Context, name string, data []byte, ifAbsent bool) error {
	in := &s3.PutObjectInput{
		Bucket:        aws.String(b.bucket),
		Key:           aws.String(name),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
	var opts []func(*s3.Options)
	if ifAbsent {
		in.IfNoneMatch = aws.String("*")
		opts = append(opts, func(o *s3.Options) { o.RetryMaxAttempts = 1 })
	}
	_, err := b.client.PutObject(ctx, in, opts...)
	if err != nil {
		if ifAbsent && status(err) == http.StatusPreconditionFailed {
			return fmt.Errorf("%w: %s", storage.ErrExist, name)
		}
		return fmt.Errorf("s3 put %s: %w", name, safeError(err))
	}
	return nil
}

// keyError is the failure of one key of a DeleteObjects request.
type keyError struct {
	Code, Message string
}

func (e *keyError) Error() string {
	if e.Message == "" {
		return "s3 delete: " + e.Code
	}
	return "s3 delete: " + e.Code + ": " + e.Message
}

var retryableKeyCodes = map[string]bool{
	"InternalError": true, "SlowDown": true, "ServiceUnavailable": true, "RequestTimeout": true,
	"Throttling": true, "ThrottlingException": true, "TooManyRequests": true, "OperationAborted": true,
	"RequestLimitExceeded": true,
}

// throttlingCodes are the error codes S3 and S3-compatible stores throttle with.
var throttlingCodes = map[string]bool{
	"SlowDown": true, "Throttling": true, "ThrottlingException": true, "TooManyRequests": true,
	"RequestLimitExceeded": true, "RequestThrottled": true, "ServiceUnavailable": true,
}

// Throttling implements blobstore.Throttler: a 429 or 503, or a throttling error code (also
// one key's of a DeleteObjects answer).
func (b *backend) Throttling(err error) bool {
	var ke *keyError
	if errors.As(err, &ke) {
		return throttlingCodes[ke.Code]
	}
	st := status(err)
	return st == http.StatusTooManyRequests || st == http.StatusServiceUnavailable || throttlingCodes[code(err)]
}

// DeleteBatch deletes names in one DeleteObjects request. A key XML 1.0 cannot hold (see
// xmlSafe) is deleted on its own with DeleteObject, whose key travels in the URL: the SDK's
// XML encoder writes U+FFFD in place of such a character, so the request would name, and S3
// delete, another key.
func (b *backend) DeleteBatch(ctx context.Context, names []string) ([]error, error) {
	errs := make([]error, len(names))
	var batch []string
	var at []int
	for i, n := range names {
		if xmlSafe(n) {
			batch = append(batch, n)
			at = append(at, i)
			continue
		}
		if err := b.DeleteOne(ctx, n); err != nil {
			errs[i] = err
		}
	}
	if len(batch) == 0 {
		return errs, nil
	}
	batchErrs, err := b.deleteObjects(ctx, batch)
	if err != nil {
		return nil, err
	}
	for j, e := range batchErrs {
		errs[at[j]] = e
	}
	return errs, nil
}

// xmlSafe reports whether name survives an XML 1.0 document unchanged: valid UTF-8, each
// character an XML Char (tab, LF and U+0020 up; no U+FFFE, U+FFFF or surrogates), and no CR,
// which XML parsers fold into LF unless it is escaped.
func xmlSafe(name string) bool {
	for _, r := range name {
		switch {
		case r == utf8.RuneError:
			// Invalid UTF-8 decodes as RuneError; a real U+FFFD is valid XML, but it must
			// not be told apart from the invalid byte here, so both go singly.
			return false
		case r == '\t' || r == '\n':
		case r < 0x20, r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			return false
		}
	}
	return true
}

// deleteObjects is one DeleteObjects request for names, every one xmlSafe. The answer must
// name only keys of the request: a key the request did not hold means the store deleted, or
// claims to have deleted, something else, and the whole batch fails as a store error.
func (b *backend) deleteObjects(ctx context.Context, names []string) ([]error, error) {
	objs := make([]types.ObjectIdentifier, len(names))
	for i, n := range names {
		objs[i] = types.ObjectIdentifier{Key: aws.String(n)}
	}
	out, err := b.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: aws.String(b.bucket),
		Delete: &types.Delete{Objects: objs, Quiet: aws.Bool(false)},
	}, func(o *s3.Options) { o.APIOptions = append(o.APIOptions, withContentMD5) })
	if err != nil {
		if batchRefused(err) {
			return nil, fmt.Errorf("%w: %v", blobstore.ErrBatchUnsupported, safeError(err))
		}
		return nil, fmt.Errorf("s3 delete batch of %d keys: %w", len(names), safeError(err))
	}
	idx := make(map[string][]int, len(names))
	for i, n := range names {
		idx[n] = append(idx[n], i)
	}
	errs := make([]error, len(names))
	seen := make([]bool, len(names))
	for _, d := range out.Deleted {
		is, ok := idx[aws.ToString(d.Key)]
		if !ok {
			return nil, fmt.Errorf("s3 delete batch of %d keys: the store answered for %q, a key the request did not name; stopping, since it may have deleted another object than asked", len(names), aws.ToString(d.Key))
		}
		for _, i := range is {
			seen[i] = true
		}
	}
	for _, e := range out.Errors {
		var ke error
		if c := aws.ToString(e.Code); c == "NoSuchKey" {
			ke = fmt.Errorf("%w: %s", storage.ErrNotExist, aws.ToString(e.Key))
		} else {
			ke = &keyError{Code: c, Message: aws.ToString(e.Message)}
		}
		for _, i := range idx[aws.ToString(e.Key)] {
			seen[i] = true
			errs[i] = ke
		}
	}
	for i := range names {
		if !seen[i] {
			errs[i] = &keyError{Code: "InternalError", Message: "key missing from the DeleteObjects response"}
		}
	}
	return errs, nil
}

// batchRefused reports whether a DeleteObjects failure says the store does not take batches
// as sent: 501 / NotImplemented, or a 400 asking for an integrity header (Content-MD5, or a
// checksum) that it still misses. The store then deletes singly.
func batchRefused(err error) bool {
	if status(err) == http.StatusNotImplemented || code(err) == "NotImplemented" {
		return true
	}
	if status(err) != http.StatusBadRequest {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "Content-MD5") || strings.Contains(msg, "x-amz-checksum") || strings.Contains(msg, "Content-Md5")
}

func (b *backend) DeleteOne(ctx context.Context, name string) error {
	_, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(name)})
	return wrap("delete", name, err)
}

func (b *backend) DeleteDirEntity(ctx context.Context, name string) error {
	return fmt.Errorf("s3: no directory entities (%s)", name)
}

var retryables = retry.IsErrorRetryables(append([]retry.IsErrorRetryable{
	retry.RetryableErrorCode{Codes: map[string]struct{}{"ConditionalRequestConflict": {}}},
}, retry.DefaultRetryables...))

func (b *backend) Retryable(err error) bool {
	var ke *keyError
	if errors.As(err, &ke) {
		return retryableKeyCodes[ke.Code]
	}
	return retryables.IsErrorRetryable(err) == aws.TrueTernary
}

// String describes c without its secrets (so that %v never prints them).
func (c Config) String() string {
	return fmt.Sprintf("s3.Config{Bucket:%q Prefix:%q Region:%q Endpoint:%q PathStyle:%v AllowHTTP:%v AccessKeyID:%q SecretAccessKey:%s SessionToken:%s Profile:%q SkipSignature:%v Concurrency:%d BatchSize:%d MaxAttempts:%d ListPageSize:%d}",
		c.Bucket, c.Prefix, c.Region, redactURL(c.Endpoint), c.PathStyle, c.AllowHTTP, c.AccessKeyID, hidden(c.SecretAccessKey), hidden(c.SessionToken), c.Profile, c.SkipSignature, c.Concurrency, c.BatchSize, c.MaxAttempts, c.ListPageSize)
}

// GoString is String.
func (c Config) GoString() string { return c.String() }

func hidden(s string) string {
	if s == "" {
		return `""`
	}
	return "****"
}

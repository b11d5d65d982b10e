// Package blobstore implements storage.Store on top of the few primitives every object store
// has (a delimited, paginated listing; head; ranged read; put, conditional put; single and
// batch delete). The S3, Azure and GCS backends provide the primitives with their SDKs; this
// package gives all three the same walk order, directory semantics, batching, fallback,
// concurrency limits and retries.
package blobstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/counting"
)

// Entry is one listed object, or one directory entity, by its full name in the bucket.
type Entry struct {
	Name    string
	Size    int64
	ModTime time.Time
	// Dir is set for a directory entity whose name has no trailing '/': an ADLS Gen2
	// hierarchical-namespace directory, or a WASB-style folder blob (hdi_isfolder).
	Dir bool
	// Version pins reads to this object version (an ETag or a generation); may be empty.
	Version string
}

// Page is one page of a listing.
type Page struct {
	Entries []Entry
	// Prefixes are the common prefixes of a delimited listing: full names ending in '/'.
	Prefixes []string
	// Truncated is set when the service has more pages after this one.
	Truncated bool
}

// ListOptions shape one listing.
type ListOptions struct {
	// Delim rolls the names with a '/' after the prefix up into Page.Prefixes.
	Delim bool
	// From, when not empty (it begins with the prefix), asks the service to start the listing
	// at this name (S3 StartAfter, GCS startOffset, Azure startFrom). Names before it may
	// still come back (a service that ignores the parameter): the caller drops them.
	From string
	// To, when not empty, says that names from To on are not wanted (GCS endOffset): a
	// backend may stop before them, and the caller stops at the first it sees.
	To string
	// Limit > 0 is a hint that no more than Limit names are wanted.
	Limit int
}

// ErrStop, returned by a List callback, ends the listing without error.
var ErrStop = errors.New("stop listing")

// ErrBatchRefusedHere, wrapped beside ErrBatchUnsupported, marks a refusal that may come from
// this store's credentials or container (401, 403, 404, every sub-request refused alike), not
// from the service: this store deletes singly from then on, the other stores of its
// BatchScope are not told.
var ErrBatchRefusedHere = errors.New("batch refused for this store")

// ErrBatchUnsupported is returned (wrapped) by Backend.DeleteBatch when the service refuses
// batch requests altogether; the store then deletes singly from then on.
var ErrBatchUnsupported = errors.New("batch delete not supported by this store")

// Backend is what an object store provides. Names are full object names (the store root
// included). Every method returns errors wrapping storage.ErrNotExist, storage.ErrExist and
// storage.ErrNotEmpty where they apply.
type Backend interface {
	// List calls fn with each page of the names beginning with prefix, in the order the
	// service returns them, shaped by o.
	List(ctx context.Context, prefix string, o ListOptions, fn func(Page) error) error
	// Head describes one object or directory entity.
	Head(ctx context.Context, name string) (Entry, error)
	// ReadRange reads n > 0 bytes at off of the object, of version when not empty: when the
	// object is no longer that version (written again, or deleted), an error wrapping
	// storage.ErrChanged.
	ReadRange(ctx context.Context, name, version string, off, n int64) (io.ReadCloser, error)
	// Put writes an object. With ifAbsent it fails with storage.ErrExist when the name is
	// taken, and makes a single attempt (the store retries and resolves ambiguity).
	Put(ctx context.Context, name string, data []byte, ifAbsent bool) error
	// DeleteBatch deletes up to BatchMax names in one request and returns one error per name:
	// nil when deleted, storage.ErrNotExist when it was not there, another error otherwise.
	// The error return is for a failure of the whole request (ErrBatchUnsupported when the
	// service refuses batches). Backends without batches return ErrBatchUnsupported.
	DeleteBatch(ctx context.Context, names []string) ([]error, error)
	// DeleteOne deletes one object.
	DeleteOne(ctx context.Context, name string) error
	// DeleteDirEntity deletes an empty directory entity (Entry.Dir).
	DeleteDirEntity(ctx context.Context, name string) error
	// Retryable tells whether a per-key error of DeleteBatch, or an error of an ifAbsent Put,
	// is worth another attempt (throttling, 5xx, a connection reset).
	Retryable(err error) bool
}

// VersionDeleter is implemented by backends that delete on a version precondition.
type VersionDeleter interface {
	// DeleteOneIf deletes the object name only when it is still at version (an
	// Entry.Version from a listing): an error wrapping storage.ErrChanged when another
	// version is there, storage.ErrNotExist when none is. A version it cannot send as a
	// precondition is an error, and nothing is deleted.
	DeleteOneIf(ctx context.Context, name, version string) error
}

// DirEntityProber is implemented by backends whose directory entities depend on a setting of
// the bucket (GCS: folders exist only with a hierarchical namespace).
type DirEntityProber interface {
	// HasDirEntities reports whether the bucket can have directory entities. It is asked
	// before each use and may cache its answer; what it cannot read counts as false.
	HasDirEntities(ctx context.Context) bool
}

// dirEntities reports whether directories may be entities of their own (Entry.Dir).
func (s *Store) dirEntities(ctx context.Context) bool {
	if s.cfg.DirEntities {
		return true
	}
	p, ok := s.b.(DirEntityProber)
	return ok && p.HasDirEntities(ctx)
}

// Config configures a Store.
type Config struct {
	// Location is the URI of the root, for Location(); it never holds a secret.
	Location string
	// Root is the name prefix of the store's root: "" or ending in '/'.
	Root string
	// Concurrency bounds the requests in flight for deletes (per store) and listings (per walk).
	Concurrency int
	// BatchSize is the number of keys per batch delete request; 0 or 1 deletes singly.
	BatchSize int
	// MaxAttempts bounds the attempts for per-key batch failures and conditional puts.
	MaxAttempts int
	// DirEntities is set when the store can have directory entities (Entry.Dir): Azure.
	// A backend that can tell only at run time implements DirEntityProber instead.
	DirEntities bool
	// ConditionalDeletes is set when the backend deletes on the condition that the object is
	// still the version listed (VersionDeleter; GCS, whose Entry.Version is the generation):
	// Walk then reports Entry.Version as Object.Version. Elsewhere Entry.Version (an ETag)
	// only pins reads and is never reported.
	ConditionalDeletes bool
	// BatchScope names the service whose answer to batch deletes this store shares with the
	// other stores of the process that name it too (a host: one table's refused batch sends
	// the next tables on that host straight to single deletes). "" keeps it to this store.
	BatchScope string
	// Delimited makes walks list directory by directory even where the backend can list a
	// tree flat (tests, and the listings compared with a flat walk's).
	Delimited bool
	// Counter, when set, is reported by Requests.
	Counter *counting.Counter
	// BackoffBase and BackoffMax shape the exponential backoff between attempts.
	BackoffBase, BackoffMax time.Duration
}

// Defaults for Config.
const (
	DefaultConcurrency = 16
	DefaultMaxAttempts = 8
)

// Store implements storage.Store over a Backend.
type Store struct {
	b     Backend
	cfg   Config
	sem   chan struct{} // delete requests in flight, store-wide
	batch *batchSupport // whether the service takes batch deletes (shared per BatchScope)
	own   *batchSupport // a refusal that holds for this store only (ErrBatchRefusedHere)

	dirFromIgnored atomic.Bool // the service listed names before ListOptions.From (ListDir)
}

var _ storage.Store = (*Store)(nil)

// New returns a store over b.
func New(b Backend, cfg Config) *Store {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.BackoffBase <= 0 {
		cfg.BackoffBase = 100 * time.Millisecond
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = 5 * time.Second
	}
	return &Store{b: b, cfg: cfg, sem: make(chan struct{}, cfg.Concurrency), batch: batchSupportFor(cfg.BatchScope), own: &batchSupport{}}
}

// Location implements storage.Store.
func (s *Store) Location() string { return s.cfg.Location }

// Requests implements counting.RequestCounter.
func (s *Store) Requests() counting.RequestCounts {
	if s.cfg.Counter == nil {
		return counting.RequestCounts{}
	}
	return s.cfg.Counter.Requests()
}

// RequestConcurrency is the bound on the store's delete requests in flight (and on a walk's
// listings): the executor keeps as many Delete calls going.
func (s *Store) RequestConcurrency() int { return s.cfg.Concurrency }

// DeleteBatchSize implements storage.DeleteBatcher.
func (s *Store) DeleteBatchSize() int {
	if s.BatchDisabled() {
		return 1
	}
	return s.cfg.BatchSize
}

// BatchDisabled reports whether the store deletes singly: it has no batches, or it fell back
// to single deletes when the service (this store's, or another's of the same BatchScope)
// refused one.
func (s *Store) BatchDisabled() bool { return s.cfg.BatchSize <= 1 || s.refusal() != nil }

// refusal is why this store deletes singly: its own refusal, or its service's.
func (s *Store) refusal() error {
	if err := s.own.refusal(); err != nil {
		return err
	}
	return s.batch.refusal()
}

func (s *Store) backoff(ctx context.Context, attempt int) error {
	d := s.cfg.BackoffBase << min(attempt-1, 20)
	if d > s.cfg.BackoffMax || d <= 0 {
		d = s.cfg.BackoffMax
	}
	d = d/2 + rand.N(d/2+1) // jitter
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *Store) acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) release() { <-s.sem }

func invalidKey(key string) error { return fmt.Errorf("invalid key %q", key) }

// Stat implements storage.Store.
func (s *Store) Stat(ctx context.Context, key string) (storage.Object, error) {
	if !storage.ValidKey(key) {
		return storage.Object{}, invalidKey(key)
	}
	if key == "" {
		return storage.Object{Key: "", IsDir: true}, nil
	}
	if !strings.HasSuffix(key, "/") {
		e, err := s.b.Head(ctx, s.cfg.Root+key)
		if err != nil {
			return storage.Object{}, err
		}
		if e.Dir {
			return storage.Object{Key: key + "/", IsDir: true, ModTime: e.ModTime}, nil
		}
		return storage.Object{Key: key, Size: e.Size, ModTime: e.ModTime}, nil
	}
	full := s.cfg.Root + key
	var found *storage.Object
	err := s.b.List(ctx, full, ListOptions{Limit: 1}, func(p Page) error {
		for _, e := range p.Entries {
			o := storage.Object{Key: key, IsDir: true}
			if e.Name == full {
				o.ModTime = e.ModTime
			}
			found = &o
			return ErrStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrStop) {
		return storage.Object{}, err
	}
	if found != nil {
		return *found, nil
	}
	if s.dirEntities(ctx) {
		e, err := s.b.Head(ctx, strings.TrimSuffix(full, "/"))
		if err == nil && e.Dir {
			return storage.Object{Key: key, IsDir: true, ModTime: e.ModTime}, nil
		}
		if err != nil && !errors.Is(err, storage.ErrNotExist) {
			return storage.Object{}, err
		}
	}
	return storage.Object{}, fmt.Errorf("%w: %s", storage.ErrNotExist, key)
}

// Open implements storage.Store.
func (s *Store) Open(ctx context.Context, key string) (storage.Reader, error) {
	if !storage.ValidKey(key) || key == "" {
		return nil, invalidKey(key)
	}
	if strings.HasSuffix(key, "/") {
		return nil, fmt.Errorf("%w: %s is a directory", storage.ErrNotExist, key)
	}
	e, err := s.b.Head(ctx, s.cfg.Root+key)
	if err != nil {
		return nil, err
	}
	if e.Dir {
		return nil, fmt.Errorf("%w: %s is a directory", storage.ErrNotExist, key)
	}
	return &reader{ctx: ctx, b: s.b, name: e.Name, key: key, version: e.Version, size: e.Size}, nil
}

// reader keeps the context of the Open that made it, the one exception to passing contexts
// down calls: io.ReaderAt, which parquet-go and the log readers call, has no context parameter.
type reader struct {
	ctx     context.Context
	b       Backend
	name    string
	key     string
	version string
	size    int64
}

func (r *reader) Size() int64  { return r.size }
func (r *reader) Close() error { return nil }

func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset", r.key)
	}
	if off >= r.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := min(int64(len(p)), r.size-off)
	if n == 0 {
		return 0, nil
	}
	rc, err := r.b.ReadRange(r.ctx, r.name, r.version, off, n)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	got, err := io.ReadFull(rc, p[:n])
	if err != nil {
		return got, fmt.Errorf("read %s: %w", r.key, err)
	}
	if int(n) < len(p) {
		return got, io.EOF
	}
	return got, nil
}

func (s *Store) checkPutKey(key string) error {
	if key == "" || !storage.ValidKey(key) {
		return invalidKey(key)
	}
	return nil
}

// Put implements storage.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if err := s.checkPutKey(key); err != nil {
		return err
	}
	return s.b.Put(ctx, s.cfg.Root+key, data, false)
}

// PutIfAbsent implements storage.Store. The backend makes one conditional attempt; this
// retries throttling and server errors itself, and when a retry finds the key taken after an
// attempt whose outcome is unknown (a 500, a reset connection), it reads the object back:
// the same bytes mean that attempt won, so a commit is never reported lost when it landed.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := s.checkPutKey(key); err != nil {
		return err
	}
	name := s.cfg.Root + key
	ambiguous := false
	for attempt := 1; ; attempt++ {
		err := s.b.Put(ctx, name, data, true)
		if err == nil {
			return nil
		}
		if errors.Is(err, storage.ErrExist) {
			if ambiguous && s.sameContent(ctx, key, data) {
				return nil
			}
			return err
		}
		if ctx.Err() != nil || !s.b.Retryable(err) || attempt >= s.cfg.MaxAttempts {
			return err
		}
		ambiguous = true
		if err := s.backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

func (s *Store) sameContent(ctx context.Context, key string, data []byte) bool {
	got, err := storage.ReadAll(ctx, s, key)
	return err == nil && bytes.Equal(got, data)
}

// TuneTransport sets up an HTTP transport for concurrency requests in flight to one host:
// enough idle connections to reuse (the default keeps 2), and a bound on the wait for
// response headers, so that a stalled connection fails (and is retried) instead of hanging.
func TuneTransport(rt http.RoundTripper, concurrency int) http.RoundTripper {
	t, ok := rt.(*http.Transport)
	if !ok {
		return rt
	}
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	t = t.Clone()
	t.MaxIdleConns = max(t.MaxIdleConns, 4*concurrency)
	t.MaxIdleConnsPerHost = max(t.MaxIdleConnsPerHost, 2*concurrency)
	if t.ResponseHeaderTimeout == 0 {
		t.ResponseHeaderTimeout = 2 * time.Minute
	}
	return t
}

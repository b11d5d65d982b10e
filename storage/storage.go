// Package storage is the object-store contract every backend implements: list with sizes and
// modification times, stat, read, delete many, and put-if-absent. It knows nothing of Delta.
//
// Keys are relative to the store's root, '/'-separated and raw: the name as stored, never
// percent-encoded. A key that ends in '/' names a directory (on object stores, a zero-byte
// directory marker or a hierarchical-namespace directory). The empty key is the root itself.
package storage

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"
)

// ErrNotExist is returned (wrapped) when a key does not exist.
var ErrNotExist = errors.New("object does not exist")

// ErrExist is returned (wrapped) by PutIfAbsent when the key is already taken.
var ErrExist = errors.New("object already exists")

// ErrNotEmpty is returned (wrapped) when deleting a directory that still has entries.
var ErrNotEmpty = errors.New("directory not empty")

// ErrNotDir is returned (wrapped), on stores that have directories (local disk, a
// hierarchical-namespace account), when a directory on the way to a key is a file (or another
// entry that is neither a directory nor a symbolic link, which is ErrSymlink): Delete, Move,
// Restore and Put of such a key fail with it, and Stat, Open and Walk do not (for a listing,
// nothing is there: ErrNotExist).
// It is never also ErrNotExist: the key cannot be there, but nothing says the file the caller
// meant is gone (its folder was replaced by a file since it was listed, or a trash folder is a
// file and the file to move is still at its place). On stores without directories (S3, GCS,
// a flat Azure account, mem) a file f and a key f/x are unrelated, and it does not occur.
var ErrNotDir = errors.New("not a directory")

// ErrSymlink is returned (wrapped) when a key names a symbolic link where a file is needed
// (Open), or when a directory on the way to a key is a symbolic link: no backend follows links.
var ErrSymlink = errors.New("symbolic link")

// ErrNotRegular is returned (wrapped) by Open for an entry that is neither a regular file nor
// a directory nor a link (a FIFO, a device, a socket, where a backend has them): nothing is
// read from it.
var ErrNotRegular = errors.New("not a regular file")

// SkipDir, returned by a Walk callback for a directory, skips the directory's contents.
var SkipDir = errors.New("skip this directory")

// Object describes one entry of a listing.
type Object struct {
	// Key is relative to the store root; directories end in '/'.
	Key     string
	Size    int64
	ModTime time.Time
	// IsDir is true for directories (and directory markers); Key then ends in '/'.
	IsDir bool
	// IsLink is true for a symbolic link (where a backend has them): it is reported as a file
	// (Key without a trailing '/', IsDir false) whatever it points to, and never followed.
	IsLink bool
	// LinkIntoStore is true for a symbolic link that resolves, following every link, to a
	// place inside the store's root (or that the backend cannot resolve for certain): what
	// lies below it is listed a second time there, under other names.
	LinkIntoStore bool
	// Version identifies the content listed, on stores that can delete on the condition
	// that it is unchanged (ConditionalDeleter; GCS: the generation). Empty elsewhere.
	Version string
	// NoStat is true for a regular file reported by a LazyWalker without its Size and
	// ModTime (both zero): its caller said it did not need them. Never set by Walk.
	NoStat bool
}

// Name returns the last path component of the key, without a trailing '/'.
func (o Object) Name() string { return Base(o.Key) }

// Reader reads one object at random offsets (Parquet footers and column chunks).
type Reader interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// DeleteResult reports what happened to one key passed to Delete.
type DeleteResult struct {
	Key string
	// Gone is true when the key did not exist any more: not an error. It is never set for a
	// key whose directory is a file (Err then wraps ErrNotDir).
	Gone bool
	// Err is non-nil when this key could not be deleted. It is then still present.
	Err error
}

// Store is the contract every backend implements.
type Store interface {
	// Location is the URI of the store's root, for messages and absolute paths.
	Location() string

	// Walk calls fn for every entry below the directory key prefix ("" for the root, otherwise a
	// key ending in '/'), recursively. A directory is reported before its contents; the entries of
	// one directory are reported in byte order of their names. When fn returns SkipDir for a
	// directory, its contents are not reported; any other error stops the walk and is returned.
	// Symbolic links (where a backend has them) are reported as files with IsLink set and
	// never followed, whatever they point to; a directory that becomes a link while the walk
	// goes on fails the walk with ErrSymlink.
	// A missing prefix directory is ErrNotExist (a prefix that is a file, or below one, too).
	Walk(ctx context.Context, prefix string, fn func(Object) error) error

	// Stat describes one key (a symbolic link itself, with IsLink set). A missing key is
	// ErrNotExist, and so is a key below a file (f/x where f is a file): for a listing,
	// nothing is there.
	Stat(ctx context.Context, key string) (Object, error)

	// Open opens a file for reading. A missing key is ErrNotExist (a key below a file too,
	// as for Stat); a key that is a symbolic link is ErrSymlink.
	Open(ctx context.Context, key string) (Reader, error)

	// Delete deletes keys and returns one result per key, in the order given. A missing key is
	// reported with Gone set, not as an error. A key below a file (f/x where f is a file, on
	// a store with directories) is not Gone: a folder replaced by a file since the listing is
	// not the file's absence; its result's Err wraps ErrNotDir (never ErrNotExist), and
	// nothing is deleted for it. Every key is
	// resolved beneath the store root without following symbolic links, so that no link
	// (even one swapped in for a directory while the run goes on) can redirect a delete: a
	// link on the way to a key fails that key with ErrSymlink; a key that is itself a link
	// deletes the link, never its target. A directory key (ending in '/') is deleted only
	// when empty (ErrNotEmpty otherwise). The error return is for failures of the whole call
	// (cancellation); per-key failures are in the results.
	Delete(ctx context.Context, keys []string) ([]DeleteResult, error)

	// PutIfAbsent atomically creates key with data, or fails with ErrExist when it already
	// exists (a symbolic link there included), even against a concurrent writer in another
	// process. A link on the way to key is ErrSymlink: nothing is written through a link. A
	// file on the way to key is ErrNotDir.
	PutIfAbsent(ctx context.Context, key string, data []byte) error

	// Put creates or replaces key with data. A key that is a symbolic link, or a link on the
	// way to it, is ErrSymlink: nothing is written through a link. A file on the way to key
	// is ErrNotDir.
	Put(ctx context.Context, key string, data []byte) error
}

// PathResolver is implemented by stores whose root can also be reached by other absolute
// paths (a local directory, through symbolic links above it or to it): ResolvePath says
// whether absPath ('/'-separated and decoded, as a file: URI's path), which does not lie under
// the root as spelled, lies inside it once links are resolved, and the key it has there. It
// only looks: nothing is read or written through a link.
type PathResolver interface {
	ResolvePath(absPath string) (key string, inside bool)
}

// LazyWalker is implemented by stores whose listing pays one call per entry to learn its size
// and modification time (local disk: an fstatat each, where the names and kinds come many at
// a time): a caller that needs them for few entries skips that call for the others.
type LazyWalker interface {
	// WalkLazy is Walk, except that a regular file whose key need reports false for may be
	// reported with NoStat set and zero Size and ModTime. Directories, links and entries of
	// a kind the listing does not tell are always described in full. need is called from
	// the listing's own goroutines, concurrently, before fn sees the entry: it must be safe
	// for concurrent use and quick.
	WalkLazy(ctx context.Context, prefix string, need func(key string) bool, fn func(Object) error) error
}

// PrunedWalker is implemented by stores whose walks list many directories a request (the
// object stores' flat listings): a caller that knows, before the listing, which directories
// it skips says so, and their contents are left out without being listed.
type PrunedWalker interface {
	// WalkPruned is Walk, except that the contents of a directory for which skip reports
	// true are not reported, whatever fn returns for it; fn still sees the directory itself,
	// as Walk reports it. skip is
	// called from the listing's goroutines, concurrently, before fn sees the directory: it
	// must be safe for concurrent use, quick, and a function of its argument alone.
	WalkPruned(ctx context.Context, prefix string, skip func(dir string) bool, fn func(Object) error) error
}

// DirLister is implemented by stores that list one directory from a name on, a page of
// entries a request (the object stores): what sorts at or after a name costs one request, where
// Stat costs one a name.
type DirLister interface {
	// ListDir calls fn, in byte order of their names, for the entries of the directory dir (""
	// or a key ending in '/') whose names sort at or after from: files with their Size and
	// ModTime, subdirectories once each as directory keys. It reports at most limit entries
	// (one request's worth when limit <= 0) and returns more when the directory holds
	// entries after the last one reported. A missing directory holds none. An error wrapping
	// errors.ErrUnsupported says that the store cannot start a listing at a name (a service
	// that ignores the parameter): the caller looks otherwise.
	ListDir(ctx context.Context, dir, from string, limit int, fn func(Object) error) (more bool, err error)
}

// DeleteBatcher is implemented by stores that delete many keys in one request: callers make
// their Delete calls a multiple of DeleteBatchSize keys, so that no request goes out short.
type DeleteBatcher interface {
	// DeleteBatchSize is the number of keys per delete request (1 when deleting singly).
	DeleteBatchSize() int
}

// ConditionalDeleter is implemented by stores that can delete an object only when it is still
// the one the listing saw (Object.Version).
type ConditionalDeleter interface {
	// DeleteIfUnchanged is Delete, with versions[i] the Object.Version listed for keys[i]: a
	// key whose object is now another version (written again since the listing) is kept and
	// its result's Err wraps ErrChanged. An empty version deletes unconditionally, as Delete
	// does; a version the store cannot send as its precondition fails that key, and nothing
	// is deleted for it. len(versions) must equal len(keys).
	DeleteIfUnchanged(ctx context.Context, keys, versions []string) ([]DeleteResult, error)
}

// DirectoryMaker is implemented by stores where writing a key makes the directories on its way,
// which stay when the key is deleted (local disk, an Azure account with a hierarchical
// namespace): a caller that must leave a folder as it found it removes those it made.
type DirectoryMaker interface {
	// MakesDirectories reports whether it does (it may ask the service once).
	MakesDirectories(ctx context.Context) bool
}

// MakesDirectories reports whether writing a key in s makes the directories on its way.
func MakesDirectories(ctx context.Context, s Store) bool {
	d, ok := s.(DirectoryMaker)
	return ok && d.MakesDirectories(ctx)
}

// readAllAttempts is how often ReadAll opens an object that another process writes again (or
// deletes) while it is read: a heartbeat, a run record, _last_checkpoint.
const readAllAttempts = 3

// ReadAll reads a whole object: one version of it. An object written again or deleted while
// it is read (an error wrapping ErrChanged) is opened again, up to readAllAttempts times; a
// deleted one then reads as ErrNotExist, as it would have a moment later.
func ReadAll(ctx context.Context, s Store, key string) ([]byte, error) {
	for attempt := 1; ; attempt++ {
		b, err := readAllOnce(ctx, s, key)
		if err == nil || !errors.Is(err, ErrChanged) || attempt == readAllAttempts || ctx.Err() != nil {
			return b, err
		}
	}
}

func readAllOnce(ctx context.Context, s Store, key string) ([]byte, error) {
	r, err := s.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	buf := make([]byte, r.Size())
	n, err := r.ReadAt(buf, 0)
	if err != nil && !(errors.Is(err, io.EOF) && int64(n) == r.Size()) {
		return nil, err
	}
	return buf[:n], nil
}

// Base returns the last component of key, ignoring a trailing '/'.
func Base(key string) string {
	key = strings.TrimSuffix(key, "/")
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[i+1:]
	}
	return key
}

// Dir returns the directory key containing key ("" for the root, otherwise ending in '/').
func Dir(key string) string {
	key = strings.TrimSuffix(key, "/")
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i+1]
	}
	return ""
}

// ValidKey reports whether key is a clean relative key: no leading '/', no empty, '.' or '..'
// components.
func ValidKey(key string) bool {
	if key == "" {
		return true
	}
	k := strings.TrimSuffix(key, "/")
	if k == "" || strings.HasPrefix(k, "/") {
		return false
	}
	for _, c := range strings.Split(k, "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return true
}

// RequestCounts are the requests a store sent, by kind, so users see what a run cost.
type RequestCounts struct {
	List   int64 `json:"list"`
	Get    int64 `json:"get"`
	Put    int64 `json:"put"`
	Delete int64 `json:"delete"`
}

// Package local is the storage backend for a directory on the local file system. It never
// follows symbolic links and never touches anything outside its root.
//
// The root is resolved once, when the store opens it (in New when the directory exists, else
// at its first use): links in the root's ancestors are followed then, a root that is itself
// a link is refused, and every operation after that is relative to the open root directory.
// Below the root, keys are resolved relative to the open root directory, never by path, and
// a link on the way fails the operation with storage.ErrSymlink: on Linux with openat2(2) and
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, elsewhere (and on kernels without openat2) with
// openat(2) and O_NOFOLLOW, one component at a time. A directory swapped for a link while a
// run goes on therefore cannot redirect a listing, a read, a write or a delete. Windows and
// the systems without openat(2) have a weaker form of this, described in fs_root.go.
package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/internal/walkahead"
)

// Store is a directory on local disk.
type Store struct {
	root string // absolute, cleaned, no trailing separator: for messages and Root()

	mu  sync.Mutex
	dir *rootDir // the root directory, open; nil until it exists

	realOnce sync.Once
	real     []string // roots()

	resolvedMu sync.Mutex
	resolved   map[string]string // ResolvePath: directory -> resolved ("" when it cannot be)
}

var (
	_ storage.Store      = (*Store)(nil)
	_ storage.LazyWalker = (*Store)(nil)
)

// New returns a store rooted at dir, which is made absolute. A dir that does not exist yet is
// opened at its first use (Put creates it). A dir that is a symbolic link is refused, with a
// message that names its target: the store never follows links.
func New(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("local storage: %w", err)
	}
	s := &Store{root: filepath.Clean(abs)}
	// Resolve the root now when it exists; other failures are reported at its first use.
	if _, err := s.rootDir(); errors.Is(err, storage.ErrSymlink) {
		return nil, err
	}
	return s, nil
}

// Root returns the absolute directory of the store, as given to New.
func (s *Store) Root() string { return s.root }

// Location returns the root as a file URI.
func (s *Store) Location() string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(s.root)}).String()
}

// rootDir returns the open root directory, opening it the first time it exists.
func (s *Store) rootDir() (*rootDir, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir != nil {
		return s.dir, nil
	}
	d, err := openRootDir(s.root)
	if err != nil {
		fi, lerr := os.Lstat(s.root)
		switch {
		case lerr == nil && isLink(fi):
			return nil, rootLinkError(s.root)
		case lerr == nil && !fi.IsDir():
			return nil, &rootNotDirError{root: s.root}
		case errors.Is(lerr, fs.ErrNotExist) || errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%w: %v", storage.ErrNotExist, err)
		}
		return nil, err
	}
	s.dir = d
	return d, nil
}

// createRoot creates the root directory (and its ancestors) when it does not exist yet.
func (s *Store) createRoot() (*rootDir, error) {
	d, err := s.rootDir()
	if !errors.Is(err, storage.ErrNotExist) {
		return d, err
	}
	if err := os.MkdirAll(s.root, 0o755); err != nil {
		return nil, err
	}
	return s.rootDir()
}

// rel turns a key into a relative path ('/'-separated, no trailing '/', "" for the root).
func rel(key string) (string, error) {
	if !storage.ValidKey(key) {
		return "", fmt.Errorf("invalid key %q", key)
	}
	return strings.TrimSuffix(key, "/"), nil
}

// rootNotDirError is a root that is there, and is not a directory. Read, nothing is below
// it (storage.ErrNotExist); deleted or moved, a key below it is storage.ErrNotDir
// (rootWriteError).
type rootNotDirError struct{ root string }

func (e *rootNotDirError) Error() string { return e.root + " is not a directory" }
func (e *rootNotDirError) Unwrap() error { return storage.ErrNotExist }

// rootWriteError is the error of a delete or a move below a root that could not be opened.
func rootWriteError(err error) error {
	var nd *rootNotDirError
	if errors.As(err, &nd) {
		return &notDirError{nd.root + ", the root of the store, is not a directory"}
	}
	return err
}

// notDirError is a file (or another entry that is not a directory) met where a directory
// must be, on the way to a key written, deleted or moved.
type notDirError struct{ msg string }

func (e *notDirError) Error() string { return e.msg }
func (e *notDirError) Unwrap() error { return storage.ErrNotDir }

// notDirError says that the way to the relative path p goes through file (a relative path,
// "" when it could not be found again, after a race), which is not a directory.
func (s *Store) notDirError(p, file string) error {
	if file == "" {
		return &notDirError{fmt.Sprintf("%s: an entry on the way to it is not a directory (it changed while being looked at)", s.path(p))}
	}
	return &notDirError{fmt.Sprintf("%s: %s, on the way to it, is not a directory", s.path(p), s.path(file))}
}

// deleteTarget checks key before a delete: it returns the key's path relative to the root,
// or (done) the result to give without touching the disk: an invalid key, the root itself,
// or a root that could not be opened (missing: nothing below it exists; a file: ErrNotDir).
func deleteTarget(key string, rootErr error) (p string, r storage.DeleteResult, done bool) {
	r.Key = key
	p, err := rel(key)
	var nd *rootNotDirError
	switch {
	case err != nil:
		r.Err = err
	case p == "":
		r.Err = errors.New("refusing to delete the store root")
	case errors.As(rootErr, &nd):
		r.Err = rootWriteError(rootErr)
	case rootErr != nil && errors.Is(rootErr, storage.ErrNotExist):
		r.Gone = true
	case rootErr != nil:
		r.Err = rootErr
	default:
		return p, r, false
	}
	return "", r, true
}

// split returns the parent directory of a relative path ("" for the root) and its last
// component.
func split(p string) (dir, base string) {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return "", p
}

// path is the file-system path of a relative path, for messages.
func (s *Store) path(p string) string {
	if p == "" {
		return s.root
	}
	return filepath.Join(s.root, filepath.FromSlash(p))
}

// linkError is a symbolic link found where the store needs a directory or a file.
type linkError struct{ msg string }

func (e *linkError) Error() string { return e.msg }
func (e *linkError) Unwrap() error { return storage.ErrSymlink }

// rootLinkError says that the store's root is a link, and what to vacuum instead.
func rootLinkError(root string) error {
	target := linkTarget(root)
	return &linkError{fmt.Sprintf("%s is a symbolic link to %s: deltavacuum does not follow symbolic links; vacuum %s itself", root, target, target)}
}

// linkIntoStore reports whether the link at key resolves, following every link, to a place
// inside the root: what lies below it is then listed a second time under its real name. A
// link that points nowhere (yet) shows nothing twice; one that cannot be resolved for another
// reason (a permission) counts as pointing inside. The link is only looked at, never used.
func (s *Store) linkIntoStore(key string) bool {
	target, err := filepath.EvalSymlinks(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		return true
	}
	for _, root := range s.roots() {
		if target == root || strings.HasPrefix(target, root+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// ResolvePath implements storage.PathResolver: the directory of absPath is resolved
// (filepath.EvalSymlinks, once per directory) and compared with the root as given and as
// resolved. A path that cannot be resolved (its directory is missing) is not inside.
func (s *Store) ResolvePath(absPath string) (string, bool) {
	dir, base := path.Split(absPath)
	if base == "" || base == "." || base == ".." {
		return "", false
	}
	s.resolvedMu.Lock()
	real, ok := s.resolved[dir]
	if !ok {
		if r, err := filepath.EvalSymlinks(filepath.FromSlash(dir)); err == nil {
			real = r
		}
		if s.resolved == nil {
			s.resolved = map[string]string{}
		}
		s.resolved[dir] = real
	}
	s.resolvedMu.Unlock()
	if real == "" {
		return "", false
	}
	for _, root := range s.roots() {
		if real == root {
			return base, true
		}
		if rel, ok := strings.CutPrefix(real, root+string(filepath.Separator)); ok {
			return filepath.ToSlash(rel) + "/" + base, true
		}
	}
	return "", false
}

// roots are the root as given and as resolved (links above it followed).
func (s *Store) roots() []string {
	s.realOnce.Do(func() {
		s.real = []string{s.root}
		if r, err := filepath.EvalSymlinks(s.root); err == nil && r != s.root {
			s.real = append(s.real, r)
		}
	})
	return s.real
}

// linkTarget is where the link at path points, resolved as far as it can be.
func linkTarget(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	t, err := os.Readlink(path)
	if err != nil {
		return "an unreadable target"
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(path), t)
	}
	return filepath.Clean(t)
}

// linkErrorAt describes a link met on the way to (or at) the relative path p: link is the
// relative path of the link itself ("" when it could not be found again, after a race).
func (s *Store) linkErrorAt(p, link string) error {
	if link == "" {
		return &linkError{fmt.Sprintf("%s: a symbolic link is on the way (it changed while being looked at): deltavacuum does not follow symbolic links", s.path(p))}
	}
	lp := s.path(link)
	target := linkTarget(lp)
	switch {
	case link == "_delta_log":
		return &linkError{fmt.Sprintf("%s is a symbolic link to %s: deltavacuum does not follow symbolic links, and the log of a table must be inside it; replace the link with the directory it points to", lp, target)}
	case link == p:
		return &linkError{fmt.Sprintf("%s is a symbolic link to %s: deltavacuum does not follow symbolic links", lp, target)}
	}
	return &linkError{fmt.Sprintf("%s: %s, on the way to it, is a symbolic link to %s: deltavacuum does not follow symbolic links", s.path(p), lp, target)}
}

func notExist(err error) error {
	return fmt.Errorf("%w: %v", storage.ErrNotExist, err)
}

// Walk implements storage.Store.
func (s *Store) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	return s.walk(ctx, prefix, nil, fn)
}

// WalkLazy implements storage.LazyWalker: a regular file whose key need is false for costs no
// fstatat (on Linux, where getdents64 tells the kind of each name; elsewhere every entry is
// described).
func (s *Store) WalkLazy(ctx context.Context, prefix string, need func(key string) bool, fn func(storage.Object) error) error {
	return s.walk(ctx, prefix, need, fn)
}

func (s *Store) walk(ctx context.Context, prefix string, need func(string) bool, fn func(storage.Object) error) error {
	p, err := rel(prefix)
	if err != nil {
		return err
	}
	if p != "" {
		o, err := s.Stat(ctx, prefix)
		switch {
		case err != nil:
			return err
		case o.IsLink:
			return s.linkErrorAt(p, s.findLink(p))
		case !o.IsDir:
			return fmt.Errorf("%w: %s is not a directory", storage.ErrNotExist, s.path(p))
		}
		prefix = p + "/"
	} else if _, err := s.rootDir(); err != nil {
		return err
	}
	list := func(ctx context.Context, dir string, _ func(time.Time)) (walkahead.Listing, error) {
		return s.list(ctx, dir, need)
	}
	return walkahead.Walk(ctx, prefix, walkAhead, list, nil, fn)
}

// walkAhead is the number of directory listings the walk runs ahead of its caller: the
// system calls of listing (getdents, one fstatat per entry) then overlap with the caller's
// work on another core.
const walkAhead = 4

type reader struct {
	*os.File
	size int64
}

func (r reader) Size() int64 { return r.size }

// Delete implements storage.Store. Files are unlinked (a symbolic link itself, never its
// target); directories are removed only when empty. Consecutive keys in one directory share
// one open parent directory (see deleter).
func (s *Store) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	res := make([]storage.DeleteResult, len(keys))
	d := s.newDeleter()
	defer d.close()
	for i, key := range keys {
		if err := ctx.Err(); err != nil {
			for j := i; j < len(keys); j++ {
				res[j] = storage.DeleteResult{Key: keys[j], Err: err}
			}
			return res, err
		}
		res[i] = d.delete(key)
	}
	return res, nil
}

// putPath is the relative path of a key to write: not the root; a directory key takes no
// data.
func putPath(key string, data []byte) (string, error) {
	if key == "" {
		return "", errors.New("invalid key \"\": the store root cannot be written")
	}
	if strings.HasSuffix(key, "/") && len(data) > 0 {
		return "", fmt.Errorf("invalid key %q: a directory key takes no data", key)
	}
	return rel(key)
}

// tempName is the name of a temporary file beside base: hidden, so that no listing reports
// it, and unique enough for writers racing in one directory.
func tempName(base string, n uint64) string {
	return fmt.Sprintf(".%s.%016x.tmp", base, n)
}

// MakesDirectories implements storage.DirectoryMaker: a write makes the directories on its way.
func (s *Store) MakesDirectories(context.Context) bool { return true }

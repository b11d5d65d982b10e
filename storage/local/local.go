// Package local is the storage backend for a directory on the local file system. It never
// follows symbolic links and never touches anything outside its root.
package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/internal/walkahead"
)

// Store is a directory on local disk.
type Store struct {
	root string // absolute, cleaned, no trailing separator
}

var _ storage.Store = (*Store)(nil)

// New returns a store rooted at dir, which is made absolute. It does not check that dir exists.
func New(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("local storage: %w", err)
	}
	return &Store{root: filepath.Clean(abs)}, nil
}

// Root returns the absolute directory of the store.
func (s *Store) Root() string { return s.root }

// Location returns the root as a file URI.
func (s *Store) Location() string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(s.root)}).String()
}

func (s *Store) path(key string) (string, error) {
	if !storage.ValidKey(key) {
		return "", fmt.Errorf("invalid key %q", key)
	}
	return filepath.Join(s.root, filepath.FromSlash(strings.TrimSuffix(key, "/"))), nil
}

func wrapNotExist(err error) error {
	// A path through a file ("table/_delta_log" where table is a file) does not exist either.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%w: %v", storage.ErrNotExist, err)
	}
	return err
}

func object(key string, fi fs.FileInfo) storage.Object {
	o := storage.Object{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}
	if fi.IsDir() {
		o.IsDir = true
		o.Size = 0
		if key != "" && !strings.HasSuffix(key, "/") {
			o.Key = key + "/"
		}
	}
	return o
}

// Walk implements storage.Store.
func (s *Store) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	p, err := s.path(prefix)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return wrapNotExist(err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", storage.ErrNotExist, p)
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return walkahead.Walk(ctx, prefix, walkAhead, s.list, nil, fn)
}

// walkAhead is the number of directory listings the walk runs ahead of its caller: the
// system calls of listing (getdents, one fstatat per entry) then overlap with the caller's
// work on another core.
const walkAhead = 4

// list lists one directory: names sorted, each described by fstatat relative to the open
// directory (no symbolic link is followed). An entry that vanished since the names were
// read is left out.
func (s *Store) list(ctx context.Context, dirKey string, _ func(time.Time)) (walkahead.Listing, error) {
	dir := filepath.Join(s.root, filepath.FromSlash(strings.TrimSuffix(dirKey, "/")))
	f, err := os.Open(dir)
	if err != nil {
		return walkahead.Listing{}, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return walkahead.Listing{}, err
	}
	sort.Strings(names)
	l := walkahead.Listing{Children: make([]storage.Object, 0, len(names)), Entries: len(names)}
	st := newStatter(f, dir)
	for i, name := range names {
		if i%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return walkahead.Listing{}, err
			}
		}
		o, err := st.stat(name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // vanished while listing
			}
			return walkahead.Listing{}, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		o.Key = dirKey + name
		if o.IsDir {
			o.Key += "/"
			o.Size = 0
		}
		l.Children = append(l.Children, o)
	}
	return l, nil
}

// Stat implements storage.Store.
func (s *Store) Stat(ctx context.Context, key string) (storage.Object, error) {
	p, err := s.path(key)
	if err != nil {
		return storage.Object{}, err
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return storage.Object{}, wrapNotExist(err)
	}
	return object(key, fi), nil
}

type reader struct {
	*os.File
	size int64
}

func (r reader) Size() int64 { return r.size }

// Open implements storage.Store.
func (s *Store) Open(ctx context.Context, key string) (storage.Reader, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, wrapNotExist(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory", p)
	}
	return reader{File: f, size: fi.Size()}, nil
}

// Delete implements storage.Store. Files are unlinked (a symbolic link itself, never its
// target); directories are removed only when empty.
func (s *Store) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	res := make([]storage.DeleteResult, len(keys))
	for i, key := range keys {
		if err := ctx.Err(); err != nil {
			for j := i; j < len(keys); j++ {
				res[j] = storage.DeleteResult{Key: keys[j], Err: err}
			}
			return res, err
		}
		res[i] = s.delete(key)
	}
	return res, nil
}

func (s *Store) delete(key string) storage.DeleteResult {
	r := storage.DeleteResult{Key: key}
	p, err := s.path(key)
	if err != nil {
		r.Err = err
		return r
	}
	if key == "" {
		r.Err = errors.New("refusing to delete the store root")
		return r
	}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		r.Gone = true
		return r
	}
	if err != nil {
		r.Err = err
		return r
	}
	if fi.IsDir() != strings.HasSuffix(key, "/") {
		r.Err = fmt.Errorf("%s: key and entry kind differ (directory: %v)", p, fi.IsDir())
		return r
	}
	err = os.Remove(p)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		r.Gone = true
	case errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST):
		r.Err = fmt.Errorf("%w: %s", storage.ErrNotEmpty, p)
	default:
		r.Err = err
	}
	return r
}

// PutIfAbsent writes a temporary file beside the target and hard-links it into place: link(2)
// fails atomically when the name exists, across processes, which an exclusive create followed
// by a write is not (a reader could see a partial file).
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	p, err := s.putPath(key, data)
	if err != nil {
		return err
	}
	if strings.HasSuffix(key, "/") {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%w: %s", storage.ErrExist, p)
			}
			return err
		}
		return nil
	}
	tmp, err := s.writeTemp(p, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s", storage.ErrExist, p)
		}
		return err
	}
	return nil
}

// Put implements storage.Store (write to a temporary file, then rename).
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	p, err := s.putPath(key, data)
	if err != nil {
		return err
	}
	if strings.HasSuffix(key, "/") {
		return os.MkdirAll(p, 0o755) // a directory key creates the directory
	}
	tmp, err := s.writeTemp(p, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// putPath is the path of a key to write: not the root; a directory key takes no data.
func (s *Store) putPath(key string, data []byte) (string, error) {
	if key == "" {
		return "", errors.New("invalid key \"\": the store root cannot be written")
	}
	if strings.HasSuffix(key, "/") && len(data) > 0 {
		return "", fmt.Errorf("invalid key %q: a directory key takes no data", key)
	}
	return s.path(key)
}

func (s *Store) writeTemp(p string, data []byte) (string, error) {
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(p)+".*.tmp")
	if err != nil {
		return "", err
	}
	// CreateTemp makes the file private (0600); commits are read by other users and engines.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

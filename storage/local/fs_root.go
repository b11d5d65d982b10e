//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package local

// On these systems (Windows among them) golang.org/x/sys/unix offers no openat(2) with
// O_NOFOLLOW, and the store resolves keys with os.Root instead: every name is resolved
// beneath the root directory, which os.Root opens once and holds, one component at a time,
// each checked with Lstat before it is used, so that no link (nor, on Windows, any other
// reparse point: a junction, a mount point) is followed knowingly.
//
// This is weaker than on Linux and the BSDs, and known to be: a directory swapped for a link
// between that Lstat and its use is followed, because os.Root follows links that stay inside
// the root. It never leads out of the root (os.Root refuses that), so a delete can at worst be
// redirected to a file of the same name elsewhere inside the table, never outside it.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"sort"
	"strings"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/internal/walkahead"
)

type rootDir struct{ r *os.Root }

var (
	errLink   = errors.New("symbolic link on the way")
	errNotDir = errors.New("not a directory")
)

// isLink reports whether fi is a link, or a directory that is a reparse point (a junction, a
// mount point), which the store must not follow either.
func isLink(fi fs.FileInfo) bool {
	return fi.Mode()&fs.ModeSymlink != 0 || isDirReparsePoint(fi)
}

func openRootDir(path string) (*rootDir, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if isLink(fi) || !fi.IsDir() {
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotDir}
	}
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &rootDir{r: r}, nil
}

func info(fi fs.FileInfo) storage.Object {
	o := storage.Object{Size: fi.Size(), ModTime: fi.ModTime()}
	switch {
	case isLink(fi):
		o.IsLink = true
	case fi.IsDir():
		o.IsDir, o.Size = true, 0
	}
	return o
}

// openDir opens the directory p (relative, "" for the root) beneath the root, one component
// at a time, refusing a link (errLink) and a component that is not a directory (errNotDir).
// create makes the missing ones. The caller closes the result.
func openDir(rd *rootDir, p string, create bool) (*os.Root, error) {
	if p == "" {
		return rd.r.OpenRoot(".")
	}
	cur := rd.r
	for {
		comp, rest, more := strings.Cut(p, "/")
		fi, err := cur.Lstat(comp)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err = cur.Mkdir(comp, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = cur.Lstat(comp)
			}
		}
		var next *os.Root
		switch {
		case err != nil:
		case isLink(fi):
			err = errLink
		case !fi.IsDir():
			err = errNotDir
		default:
			next, err = cur.OpenRoot(comp)
		}
		if cur != rd.r {
			cur.Close()
		}
		if err != nil {
			return nil, err
		}
		if !more {
			return next, nil
		}
		cur, p = next, rest
	}
}

// findLink returns the first component of p (relative) that is a link, as a relative path,
// or "".
func (s *Store) findLink(p string) string {
	if q, fi := s.onTheWay(p); fi != nil && isLink(fi) {
		return q
	}
	return ""
}

// findFile returns the first component of p (relative) that is there and is not a directory
// (a file, or a link), as a relative path, or "".
func (s *Store) findFile(p string) string {
	q, _ := s.onTheWay(p)
	return q
}

// onTheWay returns the first component of p (relative) that is there and is not a directory
// (a link to one included), with its description, or "" and nil.
func (s *Store) onTheWay(p string) (string, fs.FileInfo) {
	rd, err := s.rootDir()
	if err != nil || p == "" {
		return "", nil
	}
	for i := 0; ; {
		end := len(p)
		if j := strings.IndexByte(p[i:], '/'); j >= 0 {
			end = i + j
		}
		fi, err := rd.r.Lstat(p[:end])
		if err != nil {
			return "", nil
		}
		if isLink(fi) || !fi.IsDir() {
			return p[:end], fi
		}
		if end == len(p) {
			return "", nil
		}
		i = end + 1
	}
}

// errorAt turns the error of a read (Stat, Open) of the relative path p into the store's
// errors: a path through a missing directory or through a file does not exist.
func (s *Store) errorAt(op, p string, err error) error {
	switch {
	case errors.Is(err, errLink):
		return s.linkErrorAt(p, s.findLink(p))
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errNotDir):
		return notExist(&os.PathError{Op: op, Path: s.path(p), Err: err})
	}
	return err
}

// writeErrorAt turns the error of opening (or creating) dir, the relative directory of the
// relative path p, for a write, a delete or a move, into the store's errors: a file on the
// way is ErrNotDir. Nothing is ErrNotExist here: the caller says what is missing.
func (s *Store) writeErrorAt(op, p, dir string, err error) error {
	switch {
	case errors.Is(err, errLink):
		return s.linkErrorAt(p, s.findLink(dir))
	case errors.Is(err, errNotDir):
		return s.notDirError(p, s.findFile(dir))
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %s: %v", op, s.path(dir), err) // no longer wraps fs.ErrNotExist
	}
	return err
}

func (s *Store) list(ctx context.Context, dirKey string, _ func(string) bool) (walkahead.Listing, error) {
	rd, err := s.rootDir()
	if err != nil {
		return walkahead.Listing{}, err
	}
	p := strings.TrimSuffix(dirKey, "/")
	r, err := openDir(rd, p, false)
	if errors.Is(err, errLink) {
		return walkahead.Listing{}, s.errorAt("open", p, err)
	}
	if err != nil {
		return walkahead.Listing{}, &os.PathError{Op: "open", Path: s.path(p), Err: err} // a failed listing, not a missing prefix
	}
	defer r.Close()
	f, err := r.Open(".")
	if err != nil {
		return walkahead.Listing{}, err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return walkahead.Listing{}, err
	}
	sort.Strings(names)
	l := walkahead.Listing{Children: make([]storage.Object, 0, len(names)), Entries: len(names)}
	for i, name := range names {
		if i%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return walkahead.Listing{}, err
			}
		}
		fi, err := r.Lstat(name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // vanished while listing
			}
			return walkahead.Listing{}, err
		}
		o := info(fi)
		o.Key = dirKey + name
		if o.IsDir {
			o.Key += "/"
		}
		if o.IsLink {
			o.LinkIntoStore = s.linkIntoStore(o.Key)
		}
		l.Children = append(l.Children, o)
	}
	return l, nil
}

// Stat implements storage.Store.
func (s *Store) Stat(ctx context.Context, key string) (storage.Object, error) {
	p, err := rel(key)
	if err != nil {
		return storage.Object{}, err
	}
	rd, err := s.rootDir()
	if err != nil {
		return storage.Object{}, err
	}
	dir, base := split(p)
	if p == "" {
		base = "."
	}
	r, err := openDir(rd, dir, false)
	if err != nil {
		return storage.Object{}, s.errorAt("stat", p, err)
	}
	defer r.Close()
	fi, err := r.Lstat(base)
	if err != nil {
		return storage.Object{}, s.errorAt("stat", p, err)
	}
	o := info(fi)
	o.Key = key
	switch {
	case o.IsDir && key != "":
		o.Key = p + "/"
	case o.IsLink:
		o.Key = p
	}
	return o, nil
}

// Open implements storage.Store.
func (s *Store) Open(ctx context.Context, key string) (storage.Reader, error) {
	p, err := rel(key)
	if err != nil {
		return nil, err
	}
	rd, err := s.rootDir()
	if err != nil {
		return nil, err
	}
	dir, base := split(p)
	r, err := openDir(rd, dir, false)
	if err != nil {
		return nil, s.errorAt("open", p, err)
	}
	defer r.Close()
	fi, err := r.Lstat(base)
	switch {
	case err != nil:
		return nil, s.errorAt("open", p, err)
	case isLink(fi):
		return nil, s.linkErrorAt(p, p)
	case fi.IsDir():
		return nil, fmt.Errorf("%s is a directory", s.path(p))
	}
	f, err := r.Open(base)
	if err != nil {
		return nil, s.errorAt("open", p, err)
	}
	fi, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return reader{File: f, size: fi.Size()}, nil
}

// deleter deletes the keys of one Delete call, consecutive keys in one directory sharing one
// open parent (the window that leaves is described in fs_unix.go).
type deleter struct {
	s       *Store
	rd      *rootDir
	rootErr error
	dir     string
	held    bool
	r       *os.Root
	err     error
}

func (s *Store) newDeleter() *deleter {
	d := &deleter{s: s}
	d.rd, d.rootErr = s.rootDir()
	return d
}

func (d *deleter) close() {
	if d.r != nil {
		d.r.Close()
		d.r = nil
	}
}

func (d *deleter) parent(dir string) (*os.Root, error) {
	if d.held && d.dir == dir {
		return d.r, d.err
	}
	d.close()
	d.r, d.err = openDir(d.rd, dir, false)
	d.dir, d.held = dir, true
	return d.r, d.err
}

func (d *deleter) delete(key string) storage.DeleteResult {
	p, r, done := deleteTarget(key, d.rootErr)
	if done {
		return r
	}
	s := d.s
	dir, base := split(p)
	pr, err := d.parent(dir)
	if err == nil {
		var fi fs.FileInfo
		if fi, err = pr.Lstat(base); err == nil {
			isDir := strings.HasSuffix(key, "/")
			if entryIsDir := fi.IsDir() && !isLink(fi); entryIsDir != isDir {
				r.Err = fmt.Errorf("%s: key and entry kind differ (directory: %v)", s.path(p), entryIsDir)
				return r
			}
			err = pr.Remove(base)
			if isDir && err != nil && errors.Is(err, fs.ErrExist) {
				r.Err = fmt.Errorf("%w: %s", storage.ErrNotEmpty, s.path(p))
				return r
			}
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, errNotDir):
		// A file where a directory was is not taken for the key's absence.
		r.Err = s.writeErrorAt("remove", p, dir, err)
	case errors.Is(err, fs.ErrNotExist):
		r.Gone = true
	default:
		r.Err = s.errorAt("remove", p, err)
	}
	return r
}

func (s *Store) put(key string, data []byte, ifAbsent bool) error {
	p, err := putPath(key, data)
	if err != nil {
		return err
	}
	rd, err := s.createRoot()
	if err != nil {
		return err
	}
	dir, base := split(p)
	if strings.HasSuffix(key, "/") && !ifAbsent {
		r, err := openDir(rd, p, true)
		if err != nil {
			return s.writeErrorAt("mkdir", p, p, err)
		}
		return r.Close()
	}
	r, err := openDir(rd, dir, true)
	if err != nil {
		return s.writeErrorAt("mkdir", p, dir, err)
	}
	defer r.Close()
	if strings.HasSuffix(key, "/") {
		if err := r.Mkdir(base, 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%w: %s", storage.ErrExist, s.path(p))
			}
			return err
		}
		return nil
	}
	if fi, err := r.Lstat(base); err == nil && isLink(fi) && !ifAbsent {
		return fmt.Errorf("%w; it is not replaced", s.linkErrorAt(p, p))
	}
	tmp, err := writeTempIn(r, base, data)
	if err != nil {
		return err
	}
	defer r.Remove(tmp)
	if ifAbsent {
		if err := r.Link(tmp, base); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%w: %s", storage.ErrExist, s.path(p))
			}
			return err
		}
		return nil
	}
	return r.Rename(tmp, base)
}

func writeTempIn(r *os.Root, base string, data []byte) (string, error) {
	for range 100 {
		name := tempName(base, rand.Uint64())
		f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		err = f.Chmod(0o644)
		if err == nil {
			_, err = f.Write(data)
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			r.Remove(name)
			return "", err
		}
		return name, nil
	}
	return "", fmt.Errorf("no free temporary name for %s", base)
}

// PutIfAbsent writes a temporary file beside the target and hard-links it into place.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	return s.put(key, data, true)
}

// Put implements storage.Store (write to a temporary file, then rename).
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	return s.put(key, data, false)
}

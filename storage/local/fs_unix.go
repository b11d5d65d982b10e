//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package local

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/internal/walkahead"
)

// rootDir is the open root directory. The *os.File owns the descriptor: it stays open while
// the store is reachable (every method keeps it alive while it uses fd) and its finalizer
// closes it after.
type rootDir struct {
	f  *os.File
	fd int
}

// openRootDir opens the root, following links in its ancestors but not in its last
// component.
func openRootDir(path string) (*rootDir, error) {
	fd, err := ignoringEINTR(func() (int, error) {
		return unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &rootDir{f: os.NewFile(uintptr(fd), path), fd: fd}, nil
}

func ignoringEINTR[T any](f func() (T, error)) (T, error) {
	for {
		v, err := f()
		if err != unix.EINTR {
			return v, err
		}
	}
}

func ignoringEINTR0(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

func closeFD(fd int) { _ = unix.Close(fd) }

func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	return ignoringEINTR(func() (int, error) { return unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, mode) })
}

func lstatAt(dirfd int, name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := ignoringEINTR0(func() error { return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) })
	return st, err
}

// isLink reports whether fi (from Lstat) is a symbolic link.
func isLink(fi fs.FileInfo) bool { return fi.Mode()&fs.ModeSymlink != 0 }

func isLinkAt(dirfd int, name string) bool {
	st, err := lstatAt(dirfd, name)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

func isDirAt(dirfd int, name string) bool {
	st, err := lstatAt(dirfd, name)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// object describes a stat result (the entry itself: a link is not followed).
func object(st *unix.Stat_t) storage.Object {
	sec, nsec := st.Mtim.Unix()
	o := storage.Object{Size: st.Size, ModTime: time.Unix(sec, nsec)}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		o.IsDir, o.Size = true, 0
	case unix.S_IFLNK:
		o.IsLink = true
	}
	return o
}

// openComponents opens the directory p (relative, "" for dirfd itself) below dirfd one
// component at a time, each relative to the one before and with O_NOFOLLOW, so that no link
// is followed whatever is renamed meanwhile. A link on the way is ELOOP, whatever errno the
// system gives for it (ENOTDIR on Linux with O_DIRECTORY, EMLINK on FreeBSD, EFTYPE on
// NetBSD). flags are those of the last component (O_RDONLY to list it, searchFlags to use it
// as a parent); the others are opened with searchFlags.
func openComponents(dirfd int, p string, flags int) (int, error) {
	if p == "" {
		return openat(dirfd, ".", flags|unix.O_DIRECTORY, 0)
	}
	fd := dirfd
	for {
		comp, rest, more := strings.Cut(p, "/")
		f := searchFlags
		if !more {
			f = flags
		}
		next, err := openat(fd, comp, f|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		if err != nil && err != unix.ENOENT && isLinkAt(fd, comp) {
			err = unix.ELOOP
		}
		if fd != dirfd {
			closeFD(fd)
		}
		if err != nil {
			return -1, err
		}
		if !more {
			return next, nil
		}
		fd, p = next, rest
	}
}

// linkOnTheWay returns the first component of p (relative) that is a symbolic link, as a
// relative path, or "" when there is none (any more).
func linkOnTheWay(dirfd int, p string) string {
	if q, mode := onTheWay(dirfd, p); mode == unix.S_IFLNK {
		return q
	}
	return ""
}

// fileOnTheWay returns the first component of p (relative) that is there and is not a
// directory (a file, or a link), as a relative path, or "" when there is none (any more).
func fileOnTheWay(dirfd int, p string) string {
	q, _ := onTheWay(dirfd, p)
	return q
}

// onTheWay returns the first component of p (relative) that is there and is not a
// directory, as a relative path, with its kind (S_IFMT bits): "" when every component is a
// directory or missing.
func onTheWay(dirfd int, p string) (string, uint32) {
	if p == "" {
		return "", 0
	}
	fd := dirfd
	defer func() {
		if fd != dirfd {
			closeFD(fd)
		}
	}()
	for i := 0; ; {
		j := strings.IndexByte(p[i:], '/')
		end := len(p)
		if j >= 0 {
			end = i + j
		}
		comp := p[i:end]
		st, err := lstatAt(fd, comp)
		if err != nil {
			return "", 0
		}
		if mode := uint32(st.Mode & unix.S_IFMT); mode != unix.S_IFDIR {
			return p[:end], mode
		}
		if end == len(p) {
			return "", 0
		}
		next, err := openat(fd, comp, searchFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		if err != nil {
			return "", 0
		}
		if fd != dirfd {
			closeFD(fd)
		}
		fd, i = next, end+1
	}
}

// errorAt turns the errno of a read (Stat, Open) of the relative path p into the store's
// errors: a path through a missing directory or through a file does not exist.
func (s *Store) errorAt(rd *rootDir, op, p string, err error) error {
	switch err {
	case unix.ELOOP:
		return s.linkErrorAt(p, linkOnTheWay(rd.fd, p))
	case unix.ENOENT, unix.ENOTDIR:
		return notExist(&os.PathError{Op: op, Path: s.path(p), Err: err})
	}
	return &os.PathError{Op: op, Path: s.path(p), Err: err}
}

// writeErrorAt turns the errno of opening (or creating) dir, the relative directory of the
// relative path p, for a write, a delete or a move, into the store's errors: a file on the
// way is ErrNotDir. Nothing is ErrNotExist here: the caller says what is missing.
func (s *Store) writeErrorAt(rd *rootDir, op, p, dir string, err error) error {
	switch err {
	case unix.ELOOP:
		return s.linkErrorAt(p, linkOnTheWay(rd.fd, dir))
	case unix.ENOTDIR:
		return s.notDirError(p, fileOnTheWay(rd.fd, dir))
	}
	return &os.PathError{Op: op, Path: s.path(dir), Err: err}
}

// list lists one directory: names sorted, each described by fstatat relative to the open
// directory (no symbolic link is followed), except the regular files need (when set) says
// nothing needs described: those the directory itself calls regular files (d_type) are
// reported with NoStat. The directory is opened beneath the root without following links:
// one swapped for a link since its parent was listed fails the walk with ErrSymlink. An entry
// that vanished since the names were read is left out (when it was described).
func (s *Store) list(ctx context.Context, dirKey string, need func(string) bool) (walkahead.Listing, error) {
	rd, err := s.rootDir()
	if err != nil {
		return walkahead.Listing{}, err
	}
	defer runtime.KeepAlive(rd)
	p := strings.TrimSuffix(dirKey, "/")
	fd, err := openBeneath(rd.fd, p, unix.O_RDONLY)
	if err == unix.ELOOP {
		return walkahead.Listing{}, s.errorAt(rd, "open", p, err)
	}
	if err != nil {
		// Not storage.ErrNotExist: a directory that vanished while the walk went on is a
		// failed listing, not a missing prefix.
		return walkahead.Listing{}, &os.PathError{Op: "open", Path: s.path(p), Err: err}
	}
	f := os.NewFile(uintptr(fd), s.path(p))
	defer f.Close()
	ents, err := readDirents(fd, f, dirKey)
	if err != nil {
		return walkahead.Listing{}, &os.PathError{Op: "readdirent", Path: s.path(p), Err: err}
	}
	ents = sortByName(ents, len(dirKey))
	l := walkahead.Listing{Children: make([]storage.Object, 0, len(ents)), Entries: len(ents)}
	for i, e := range ents {
		if i%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return walkahead.Listing{}, err
			}
		}
		key := e.key
		if need != nil && e.regular() && !need(key) {
			l.Children = append(l.Children, storage.Object{Key: key, NoStat: true})
			continue
		}
		st, err := lstatAt(fd, key[len(dirKey):])
		if err != nil {
			if err == unix.ENOENT {
				continue // vanished while listing
			}
			return walkahead.Listing{}, &os.PathError{Op: "fstatat", Path: s.path(key), Err: err}
		}
		o := object(&st)
		o.Key = key
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

// parentOf opens the parent directory of the relative path p (not the root itself) beneath
// the root, for use as the directory of *at calls; the caller closes it.
func parentOf(rd *rootDir, p string) (fd int, base string, err error) {
	dir, base := split(p)
	fd, err = openBeneath(rd.fd, dir, searchFlags)
	return fd, base, err
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
	defer runtime.KeepAlive(rd)
	var st unix.Stat_t
	if p == "" {
		if err := ignoringEINTR0(func() error { return unix.Fstat(rd.fd, &st) }); err != nil {
			return storage.Object{}, err
		}
	} else {
		pfd, base, err := parentOf(rd, p)
		if err != nil {
			return storage.Object{}, s.errorAt(rd, "stat", p, err)
		}
		st, err = lstatAt(pfd, base)
		closeFD(pfd)
		if err != nil {
			return storage.Object{}, s.errorAt(rd, "stat", p, err)
		}
	}
	o := object(&st)
	o.Key = key
	switch {
	case o.IsDir && key != "":
		o.Key = p + "/"
	case o.IsLink:
		o.Key = p
	}
	return o, nil
}

// Open implements storage.Store. Only a regular file opens: a link is ErrSymlink; a FIFO or
// device planted in the log is refused without blocking on it.
func (s *Store) Open(ctx context.Context, key string) (storage.Reader, error) {
	p, err := rel(key)
	if err != nil {
		return nil, err
	}
	rd, err := s.rootDir()
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(rd)
	if p == "" {
		return nil, fmt.Errorf("%s is a directory", s.root)
	}
	pfd, base, err := parentOf(rd, p)
	if err != nil {
		return nil, s.errorAt(rd, "open", p, err)
	}
	fd, err := openat(pfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil && err != unix.ENOENT && isLinkAt(pfd, base) {
		err = unix.ELOOP
	}
	closeFD(pfd)
	if err != nil {
		return nil, s.errorAt(rd, "open", p, err)
	}
	var st unix.Stat_t
	if err := ignoringEINTR0(func() error { return unix.Fstat(fd, &st) }); err != nil {
		closeFD(fd)
		return nil, &os.PathError{Op: "fstat", Path: s.path(p), Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		closeFD(fd)
		return nil, fmt.Errorf("%s is a directory", s.path(p))
	default:
		closeFD(fd)
		return nil, fmt.Errorf("%s: %w", s.path(p), storage.ErrNotRegular)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		closeFD(fd)
		return nil, err
	}
	return reader{File: os.NewFile(uintptr(fd), s.path(p)), size: st.Size}, nil
}

// deleter deletes the keys of one Delete call. Consecutive keys in one directory share one
// open parent: a key costs one unlinkat, and one openat2 (or one openat per component) when
// its directory differs from the previous key's.
//
// A held parent was opened beneath the root with no link on the way, so it is the directory
// that was at that path when it was opened. The window this leaves: if that directory is
// renamed away (even out of the root) while the call goes on, the next keys of the call in
// it are unlinked in it by name: the planned files of that very directory, never those of a
// directory a link swapped in at the path now leads to. A delete without the cache has the
// same window, between its openat2 and its unlinkat; the cache stretches it to the rest of
// one Delete call (one batch of keys).
type deleter struct {
	s       *Store
	rd      *rootDir
	rootErr error
	dir     string // the relative path of the held parent, when held
	held    bool
	fd      int   // the held parent (-1 when err)
	err     error // why the held parent could not be opened
}

func (s *Store) newDeleter() *deleter {
	d := &deleter{s: s, fd: -1}
	d.rd, d.rootErr = s.rootDir()
	return d
}

func (d *deleter) close() {
	if d.fd >= 0 {
		closeFD(d.fd)
		d.fd = -1
	}
	runtime.KeepAlive(d.rd)
}

func (d *deleter) parent(dir string) (int, error) {
	if d.held && d.dir == dir {
		return d.fd, d.err
	}
	if d.fd >= 0 {
		closeFD(d.fd)
	}
	d.fd, d.err = openBeneath(d.rd.fd, dir, searchFlags)
	if d.err != nil {
		d.fd = -1
	}
	d.dir, d.held = dir, true
	return d.fd, d.err
}

func (d *deleter) delete(key string) storage.DeleteResult {
	p, r, done := deleteTarget(key, d.rootErr)
	if done {
		return r
	}
	s := d.s
	dir, base := split(p)
	pfd, err := d.parent(dir)
	if err != nil {
		if err == unix.ENOENT {
			r.Gone = true // a path through a missing directory does not exist
		} else {
			// A file where a directory was (ENOTDIR) is not taken for the key's absence.
			r.Err = s.writeErrorAt(d.rd, "open", p, dir, err)
		}
		return r
	}
	isDir := strings.HasSuffix(key, "/")
	flags := 0
	if isDir {
		flags = unix.AT_REMOVEDIR
	}
	err = ignoringEINTR0(func() error { return unix.Unlinkat(pfd, base, flags) })
	switch {
	case err == nil:
	case err == unix.ENOENT:
		r.Gone = true
	case isDir && (err == unix.ENOTEMPTY || err == unix.EEXIST):
		r.Err = fmt.Errorf("%w: %s", storage.ErrNotEmpty, s.path(p))
	case isDir && err == unix.ENOTDIR:
		what := "a file"
		if isLinkAt(pfd, base) {
			what = "a symbolic link"
		}
		r.Err = fmt.Errorf("%s: key and entry kind differ (the key names a directory, the entry is %s)", s.path(p), what)
	case !isDir && (err == unix.EISDIR || err == unix.EPERM && isDirAt(pfd, base)):
		r.Err = fmt.Errorf("%s: key and entry kind differ (the key names a file, the entry is a directory)", s.path(p))
	default:
		r.Err = &os.PathError{Op: "unlinkat", Path: s.path(p), Err: err}
	}
	return r
}

// mkdirAll opens the directory p (relative) beneath the root, creating what is missing, one
// component at a time without following links; the caller closes the result.
func mkdirAll(rd *rootDir, p string) (int, error) {
	if p == "" {
		return openat(rd.fd, ".", searchFlags|unix.O_DIRECTORY, 0)
	}
	fd := rd.fd
	for {
		comp, rest, more := strings.Cut(p, "/")
		next, err := openComponents(fd, comp, searchFlags)
		if err == unix.ENOENT {
			err = ignoringEINTR0(func() error { return unix.Mkdirat(fd, comp, 0o755) })
			if err == nil || err == unix.EEXIST {
				next, err = openComponents(fd, comp, searchFlags)
			}
		}
		if fd != rd.fd {
			closeFD(fd)
		}
		if err != nil {
			return -1, err
		}
		if !more {
			return next, nil
		}
		fd, p = next, rest
	}
}

// writeTemp writes data to a new hidden temporary file in the directory pfd and returns its
// name.
func writeTemp(pfd int, base string, data []byte) (string, error) {
	for range 100 {
		name := tempName(base, rand.Uint64())
		fd, err := openat(pfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, 0o644)
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return "", err
		}
		f := os.NewFile(uintptr(fd), name)
		// The mode is 0644 whatever the umask: commits are read by other users and engines.
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
			_ = unix.Unlinkat(pfd, name, 0)
			return "", err
		}
		return name, nil
	}
	return "", fmt.Errorf("no free temporary name for %s", base)
}

// put writes a key (file or directory) below the root; ifAbsent makes it fail with ErrExist
// when the key is taken.
func (s *Store) put(key string, data []byte, ifAbsent bool) error {
	p, err := putPath(key, data)
	if err != nil {
		return err
	}
	rd, err := s.createRoot()
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(rd)
	dir, base := split(p)
	if strings.HasSuffix(key, "/") && !ifAbsent {
		fd, err := mkdirAll(rd, p) // a directory key creates the directory
		if err != nil {
			return s.writeErrorAt(rd, "mkdir", p, p, err)
		}
		closeFD(fd)
		return nil
	}
	pfd, err := mkdirAll(rd, dir)
	if err != nil {
		return s.writeErrorAt(rd, "mkdir", p, dir, err)
	}
	defer closeFD(pfd)
	if strings.HasSuffix(key, "/") {
		err := ignoringEINTR0(func() error { return unix.Mkdirat(pfd, base, 0o755) })
		if err == unix.EEXIST {
			return fmt.Errorf("%w: %s", storage.ErrExist, s.path(p))
		}
		if err != nil {
			return &os.PathError{Op: "mkdirat", Path: s.path(p), Err: err}
		}
		return nil
	}
	if !ifAbsent && isLinkAt(pfd, base) {
		// rename(2) would replace the link, not write through it; a link where the store
		// writes is left for the user to look at.
		return fmt.Errorf("%w; it is not replaced", s.linkErrorAt(p, p))
	}
	tmp, err := writeTemp(pfd, base, data)
	if err != nil {
		return &os.PathError{Op: "write", Path: s.path(dir), Err: err}
	}
	defer func() { _ = unix.Unlinkat(pfd, tmp, 0) }()
	if ifAbsent {
		// link(2) fails atomically when the name exists (a link there included), across
		// processes, which an exclusive create followed by a write is not (a reader could
		// see a partial file).
		err := ignoringEINTR0(func() error { return unix.Linkat(pfd, tmp, pfd, base, 0) })
		if err == unix.EEXIST {
			return fmt.Errorf("%w: %s", storage.ErrExist, s.path(p))
		}
		if err != nil {
			return &os.PathError{Op: "linkat", Path: s.path(p), Err: err}
		}
		return nil
	}
	if err := ignoringEINTR0(func() error { return unix.Renameat(pfd, tmp, pfd, base) }); err != nil {
		return &os.PathError{Op: "renameat", Path: s.path(p), Err: err}
	}
	return nil
}

// PutIfAbsent writes a temporary file beside the target and hard-links it into place.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	return s.put(key, data, true)
}

// Put implements storage.Store (write to a temporary file, then rename).
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	return s.put(key, data, false)
}

// findLink is linkOnTheWay from the root.
func (s *Store) findLink(p string) string {
	rd, err := s.rootDir()
	if err != nil {
		return ""
	}
	defer runtime.KeepAlive(rd)
	return linkOnTheWay(rd.fd, p)
}

//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package local

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/deltavacuum/deltavacuum/storage"
)

// move is a hard link to the new name (which fails when it exists), then the old name
// removed, both through os.Root (the weaker resolution fs_root.go describes).
func (s *Store) move(pf, pt string) error {
	rd, err := s.rootDir()
	if err != nil {
		return rootWriteError(err)
	}
	sdir, sbase := split(pf)
	sr, err := openDir(rd, sdir, false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", storage.ErrNotExist, s.path(pf))
		}
		return s.writeErrorAt("open", pf, sdir, err) // a file on the way: ErrNotDir
	}
	defer sr.Close()
	fi, err := sr.Lstat(sbase)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", storage.ErrNotExist, s.path(pf))
		}
		return err
	}
	if fi.IsDir() && !isLink(fi) {
		return fmt.Errorf("move %s: it is a directory, not a file", s.path(pf))
	}
	tdir, _ := split(pt)
	tr, err := openDir(rd, tdir, true)
	if err != nil {
		// Never ErrNotExist: from is there; a file where to's folder must be is ErrNotDir.
		return s.writeErrorAt("mkdir", pt, tdir, err)
	}
	tr.Close()
	if err := rd.r.Link(pf, pt); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s", storage.ErrExist, s.path(pt))
		}
		if _, lerr := sr.Lstat(sbase); errors.Is(lerr, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", storage.ErrNotExist, s.path(pf))
		}
		return fmt.Errorf("move %s to %s: %v", s.path(pf), s.path(pt), err) // from is there
	}
	return sr.Remove(sbase)
}

//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package local

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/deltavacuum/deltavacuum/storage"
)

func (s *Store) move(pf, pt string) error {
	rd, err := s.rootDir()
	if err != nil {
		return rootWriteError(err)
	}
	defer runtime.KeepAlive(rd)
	sdir, _ := split(pf)
	sfd, sbase, err := parentOf(rd, pf)
	if err != nil {
		if err == unix.ENOENT {
			return fmt.Errorf("%w: %s", storage.ErrNotExist, s.path(pf))
		}
		return s.writeErrorAt(rd, "open", pf, sdir, err) // a file on the way: ErrNotDir
	}
	defer closeFD(sfd)
	st, err := lstatAt(sfd, sbase)
	if err != nil {
		if err == unix.ENOENT {
			return fmt.Errorf("%w: %s", storage.ErrNotExist, s.path(pf))
		}
		return &os.PathError{Op: "lstat", Path: s.path(pf), Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return fmt.Errorf("move %s: it is a directory, not a file", s.path(pf))
	}
	tdir, tbase := split(pt)
	dfd, err := mkdirAll(rd, tdir)
	if err != nil {
		// Never ErrNotExist: from is there; a file where to's folder must be is ErrNotDir.
		return s.writeErrorAt(rd, "mkdir", pt, tdir, err)
	}
	defer closeFD(dfd)
	err = renameNoReplace(sfd, sbase, dfd, tbase)
	switch {
	case err == nil:
		return nil
	case err == unix.EEXIST:
		return fmt.Errorf("%w: %s", storage.ErrExist, s.path(pt))
	case err == unix.ENOENT:
		if _, lerr := lstatAt(sfd, sbase); lerr == unix.ENOENT {
			return fmt.Errorf("%w: %s", storage.ErrNotExist, s.path(pf))
		}
		// from is there: to's folder was removed since it was opened.
	}
	return &os.LinkError{Op: "rename", Old: s.path(pf), New: s.path(pt), Err: err}
}

// linkThenUnlink renames without replacing where renameat2 is missing: linkat(2) fails
// atomically when the new name exists; the old name is removed after.
func linkThenUnlink(sfd int, sbase string, dfd int, dbase string) error {
	if err := ignoringEINTR0(func() error { return unix.Linkat(sfd, sbase, dfd, dbase, 0) }); err != nil {
		return err
	}
	return ignoringEINTR0(func() error { return unix.Unlinkat(sfd, sbase, 0) })
}

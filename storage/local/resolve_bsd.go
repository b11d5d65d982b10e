//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package local

import "golang.org/x/sys/unix"

// searchFlags open a directory only to resolve names in it (the parent of a key, a
// component on the way).
const searchFlags = unix.O_RDONLY

// openBeneath opens the directory p (relative, '/'-separated, "" for dirfd itself) below
// dirfd without following any link, one component at a time (these systems have no
// openat2): a link on the way is ELOOP. flags are O_RDONLY or searchFlags.
func openBeneath(dirfd int, p string, flags int) (int, error) {
	return openComponents(dirfd, p, flags)
}

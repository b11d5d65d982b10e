package local

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// searchFlags open a directory only to resolve names in it (the parent of a key, a
// component on the way): no read permission is needed and nothing is read.
const searchFlags = unix.O_PATH

// beneath is how openat2(2) resolves every key: below the directory given, through no
// symbolic link (magic links of /proc included).
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

var (
	probeOnce sync.Once
	// noOpenat2 is set when the kernel has no openat2(2) (before 5.6, or hidden by a
	// sandbox's seccomp filter, which may answer ENOSYS or EPERM), and by tests.
	noOpenat2 atomic.Bool
)

// openBeneath opens the directory p (relative, '/'-separated, "" for dirfd itself) below
// dirfd without following any link: a link on the way is ELOOP. flags are O_RDONLY or
// searchFlags.
func openBeneath(dirfd int, p string, flags int) (int, error) {
	probeOnce.Do(func() { probeOpenat2(dirfd) })
	if noOpenat2.Load() {
		return openComponents(dirfd, p, flags)
	}
	if p == "" {
		p = "."
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_DIRECTORY | unix.O_CLOEXEC), Resolve: beneath}
	for {
		fd, err := unix.Openat2(dirfd, p, &how)
		switch err {
		case nil:
			return fd, nil
		case unix.EINTR, unix.EAGAIN:
			// EAGAIN: a rename elsewhere raced the resolution; trying again is safe.
			continue
		case unix.ENOSYS:
			noOpenat2.Store(true)
			return openComponents(dirfd, p, flags)
		}
		return -1, err
	}
}

// probeOpenat2 finds out once whether openat2 works here, on a directory of the store.
func probeOpenat2(dirfd int) {
	fd, err := unix.Openat2(dirfd, ".", &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: beneath})
	for err == unix.EINTR {
		fd, err = unix.Openat2(dirfd, ".", &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: beneath})
	}
	if err != nil {
		noOpenat2.Store(true)
		return
	}
	closeFD(fd)
}

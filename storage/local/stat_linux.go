package local

import (
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/deltavacuum/deltavacuum/storage"
)

// statter describes the entries of one open directory with fstatat relative to it, so that
// the kernel does not resolve the directory's path again for every entry (about 40 % less
// time per entry than lstat of the full path, bench/syscalls_test.go).
type statter struct{ fd int }

func newStatter(dir *os.File, _ string) statter { return statter{fd: int(dir.Fd())} }

func (s statter) stat(name string) (storage.Object, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(s.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return storage.Object{}, &os.PathError{Op: "fstatat", Path: name, Err: err}
		}
		break
	}
	return storage.Object{
		Size:    st.Size,
		ModTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec),
		IsDir:   st.Mode&unix.S_IFMT == unix.S_IFDIR,
	}, nil
}

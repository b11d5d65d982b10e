//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package local

import "os"

// dirent is one name of a directory. Here the kinds are not read: every entry is described
// by fstatat.
type dirent struct {
	name string
}

func (d dirent) regular() bool { return false }

// readDirents reads the names of the open directory f.
func readDirents(_ int, f *os.File) ([]dirent, error) {
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirent, len(names))
	for i, n := range names {
		out[i] = dirent{name: n}
	}
	return out, nil
}

//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package local

import "os"

// dirent is one entry of a directory: its key (the directory's key and its name). Here the
// kinds are not read: every entry is described by fstatat.
type dirent struct {
	key string
}

func (d dirent) regular() bool { return false }

// readDirents reads the entries of the open directory f, whose key is dirKey.
func readDirents(_ int, f *os.File, dirKey string) ([]dirent, error) {
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirent, len(names))
	for i, n := range names {
		out[i] = dirent{key: dirKey + n}
	}
	return out, nil
}

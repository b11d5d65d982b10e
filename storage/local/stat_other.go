//go:build !linux

package local

import (
	"os"
	"path/filepath"

	"github.com/deltavacuum/deltavacuum/storage"
)

// statter describes the entries of one directory with lstat of their full paths.
type statter struct{ dir string }

func newStatter(_ *os.File, dir string) statter { return statter{dir: dir} }

func (s statter) stat(name string) (storage.Object, error) {
	fi, err := os.Lstat(filepath.Join(s.dir, name))
	if err != nil {
		return storage.Object{}, err
	}
	return storage.Object{Size: fi.Size(), ModTime: fi.ModTime(), IsDir: fi.IsDir()}, nil
}

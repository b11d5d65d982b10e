// Package tempfile makes the temporary files that the planner's files to delete and an
// inventory's rows spill into: removed from their folder as soon as they are open where the
// system allows it (not on Windows), so that a crash leaves nothing behind; otherwise removed
// when closed.
package tempfile

import (
	"errors"
	"os"
	"runtime"
	"sync"
)

// File is one such temporary file. Close may be called more than once.
type File struct {
	*os.File
	path string // to remove at Close; "" when removed from its folder already
	once sync.Once
	err  error
}

// Create creates a file in dir ("" is os.TempDir()) named after pattern (os.CreateTemp).
func Create(dir, pattern string) (*File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	t := &File{File: f, path: f.Name()}
	if runtime.GOOS != "windows" && os.Remove(f.Name()) == nil {
		t.path = ""
	}
	return t, nil
}

// Path is where the file can still be found by name, "" once it was removed from its folder.
func (f *File) Path() string { return f.path }

// Close closes the file and removes it by name when it still has one.
func (f *File) Close() error {
	f.once.Do(func() {
		f.err = f.File.Close()
		if f.path != "" {
			if err := os.Remove(f.path); err != nil && !errors.Is(err, os.ErrNotExist) && f.err == nil {
				f.err = err
			}
		}
	})
	return f.err
}

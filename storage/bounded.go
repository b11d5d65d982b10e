package storage

import (
	"errors"
	"io"
)

// BoundedReader is an io.ReaderAt over R that keeps reads within the first Size bytes, so that
// a truncated file shows up as io.EOF rather than as a backend error, and remembers the first
// real I/O error in Err, so that a failing store can be told apart from a corrupt file when a
// file-format library reports only that it could not read.
type BoundedReader struct {
	R    Reader
	Size int64
	Err  error
}

// ReadAt implements io.ReaderAt.
func (b *BoundedReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= b.Size {
		return 0, io.EOF
	}
	short := false
	if rest := b.Size - off; int64(len(p)) > rest {
		p, short = p[:rest], true
	}
	n, err := b.R.ReadAt(p, off)
	if err == io.EOF && n == len(p) {
		err = nil
	}
	if err != nil {
		if b.Err == nil && !errors.Is(err, io.EOF) {
			b.Err = err
		}
		return n, err
	}
	if short {
		return n, io.EOF
	}
	return n, nil
}

package storage_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

type failingReader struct{ storage.Reader }

var errBackend = errors.New("connection reset")

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errBackend }

func TestBoundedReader(t *testing.T) {
	ctx := context.Background()
	st := mem.New("mem://t")
	if err := st.Put(ctx, "f", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	r, err := st.Open(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A Size shorter than the object: the file as a reader that trusts a shorter length sees it.
	b := &storage.BoundedReader{R: r, Size: 8}
	p := make([]byte, 4)
	if n, err := b.ReadAt(p, 2); n != 4 || err != nil || string(p) != "2345" {
		t.Errorf("inside: %d %v %q", n, err, p)
	}
	if n, err := b.ReadAt(p, 6); n != 2 || err != io.EOF || string(p[:n]) != "67" {
		t.Errorf("across the end: %d %v %q", n, err, p[:n])
	}
	if n, err := b.ReadAt(p, 8); n != 0 || err != io.EOF {
		t.Errorf("at the end: %d %v", n, err)
	}
	if _, err := b.ReadAt(p, -1); err == nil || err == io.EOF {
		t.Errorf("negative offset: %v", err)
	}
	if b.Err != nil {
		t.Errorf("no I/O error happened, Err = %v", b.Err)
	}
	f := &storage.BoundedReader{R: failingReader{r}, Size: 10}
	if _, err := f.ReadAt(p, 0); !errors.Is(err, errBackend) || !errors.Is(f.Err, errBackend) {
		t.Errorf("backend error: returned %v, remembered %v", err, f.Err)
	}
}

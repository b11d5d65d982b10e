package storage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// changing opens an object, and fails the first reads with ErrChanged, as an object store does
// when another process writes the object again between its HEAD and its GET.
type changing struct {
	storage.Store
	fails int
}

func (c *changing) Open(ctx context.Context, key string) (storage.Reader, error) {
	r, err := c.Store.Open(ctx, key)
	if err != nil || c.fails == 0 {
		return r, err
	}
	c.fails--
	return changedReader{r}, nil
}

type changedReader struct{ storage.Reader }

func (changedReader) ReadAt(p []byte, off int64) (int, error) {
	return 0, fmt.Errorf("read: %w (written again while it was read)", storage.ErrChanged)
}

// TestReadAllOpensAgainWhatChanged: ReadAll reads one whole version of an object that is
// written again while it reads, opening it again up to three times, and then says so.
func TestReadAllOpensAgainWhatChanged(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		fails   int
		changed bool
	}{{0, false}, {1, false}, {2, false}, {3, true}} {
		m := mem.New("mem://t")
		if err := m.Put(ctx, "k", []byte("beat")); err != nil {
			t.Fatal(err)
		}
		s := &changing{Store: m, fails: c.fails}
		got, err := storage.ReadAll(ctx, s, "k")
		switch {
		case c.changed && !errors.Is(err, storage.ErrChanged):
			t.Errorf("%d changes: %q, %v, want ErrChanged", c.fails, got, err)
		case !c.changed && (err != nil || string(got) != "beat"):
			t.Errorf("%d changes: %q, %v, want the object", c.fails, got, err)
		}
	}
}

package inventory

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/deltavacuum/deltavacuum/sql"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// row is an inventory row with the required schema.
type row struct {
	Path             string `parquet:"path"`
	Length           int64  `parquet:"length"`
	IsDir            bool   `parquet:"isDir"`
	ModificationTime int64  `parquet:"modificationTime"`
}

// writeParquet writes rows to the file p, creating its directory.
func writeParquet[T any](t testing.TB, p string, rows []T) {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, buf.Bytes())
}

func writeFile(t testing.TB, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func gzipped(t testing.TB, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tableRoot returns a table directory and its URI as storage/local reports it.
func tableRoot(t testing.TB) (dir, uri string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "table")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s.Root(), s.Location()
}

// walk lists l as lines "key size mtime" (mtime "-" when zero), directories ending in '/'.
func walk(t testing.TB, l *Listing, prefix string) []string {
	t.Helper()
	got, err := walkErr(l, prefix, nil)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return got
}

// walkErr walks l, returning SkipDir for the directory keys in skip.
func walkErr(l *Listing, prefix string, skip map[string]bool) ([]string, error) {
	got := []string{}
	err := l.Walk(context.Background(), prefix, func(o storage.Object) error {
		mt := "-"
		if !o.ModTime.IsZero() {
			mt = fmt.Sprint(o.ModTime.UnixMilli())
		}
		if o.IsDir != strings.HasSuffix(o.Key, "/") {
			return fmt.Errorf("object %q: IsDir %v", o.Key, o.IsDir)
		}
		got = append(got, fmt.Sprintf("%s %d %s", o.Key, o.Size, mt))
		if skip[o.Key] {
			return storage.SkipDir
		}
		return nil
	})
	return got, err
}

func open(t testing.TB, src Source, root string) *Listing {
	t.Helper()
	l, err := Open(context.Background(), src, root, Options{})
	if err != nil {
		t.Fatalf("Open(%+v): %v", src, err)
	}
	return l
}

func diff(t testing.TB, got, want []string) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("listing differs (-want +got):\n%s", d)
	}
}

// query parses the inventory query of a VACUUM statement.
func query(t testing.TB, q string) *sql.Query {
	t.Helper()
	st, err := sql.Parse("VACUUM t USING INVENTORY (" + q + ")")
	if err != nil {
		t.Fatal(err)
	}
	return st.(*sql.Vacuum).Inventory.Query
}

func wantSchemaError(t testing.TB, err error, want string) {
	t.Helper()
	if !errors.Is(err, ErrInvalidSchema) {
		t.Fatalf("got error %v, want ErrInvalidSchema", err)
	}
	var se *SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("got %T, want *SchemaError", err)
	}
	if want != "" && err.Error() != want {
		t.Errorf("got message\n%s\nwant\n%s", err.Error(), want)
	}
}

func mustRead(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

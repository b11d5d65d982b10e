package inventory

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/deltavacuum/deltavacuum/sql"
	"github.com/deltavacuum/deltavacuum/storage"
)

// csvTable is one CSV file or several with one header (RFC 4180: ',' separated, '"' quoted,
// quotes doubled inside quoted fields). Files starting with the gzip magic are decompressed. All
// columns are text: an empty field is NULL, and the required columns are converted to their
// types as they are read.
type csvTable struct {
	name      string
	store     storage.Store
	files     []string // keys in store
	names     []string // for messages
	header    []string
	hasHeader bool // the files start with a header row (false for S3 Inventory)
	cols      []column
}

// newCSVTable reads the header of the first file, or takes header when the files have none.
func newCSVTable(ctx context.Context, name string, store storage.Store, keys, names, header []string) (*csvTable, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("inventory %s: no CSV files", name)
	}
	t := &csvTable{name: name, store: store, files: keys, names: names, header: header, hasHeader: header == nil}
	if t.hasHeader {
		err := t.read(ctx, 0, func(r *csv.Reader, rec []string) error {
			t.header = slices.Clone(rec)
			return errStop
		})
		if err != nil && !errors.Is(err, errStop) {
			return nil, err
		}
		if t.header == nil {
			return nil, fmt.Errorf("inventory %s: the CSV file is empty: it needs a header row naming the columns (path, length, isDir, modificationTime)", names[0])
		}
	}
	for _, h := range t.header {
		t.cols = append(t.cols, column{name: h, typ: "STRING", kind: kindText})
	}
	return t, nil
}

var errStop = errors.New("stop")

func (t *csvTable) location() string  { return t.name }
func (t *csvTable) columns() []column { return t.cols }

// read calls fn with each record of file i, the header row included.
func (t *csvTable) read(ctx context.Context, i int, fn func(r *csv.Reader, rec []string) error) error {
	obj, err := t.store.Open(ctx, t.files[i])
	if err != nil {
		return fmt.Errorf("inventory %s: %w", t.names[i], err)
	}
	defer obj.Close()
	var in io.Reader = bufio.NewReaderSize(io.NewSectionReader(obj, 0, obj.Size()), 256<<10)
	var magic [2]byte
	if n, _ := obj.ReadAt(magic[:], 0); n == 2 && magic == [2]byte{0x1f, 0x8b} {
		zr, err := gzip.NewReader(in)
		if err != nil {
			return fmt.Errorf("inventory %s: %w", t.names[i], err)
		}
		defer zr.Close()
		in = bufio.NewReaderSize(zr, 256<<10)
	}
	r := csv.NewReader(in)
	r.ReuseRecord = true
	r.FieldsPerRecord = -1
	first := true
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("inventory %s: %w", t.names[i], err)
		}
		if first {
			rec[0] = strings.TrimPrefix(rec[0], "\ufeff")
			first = false
		}
		if err := fn(r, rec); err != nil {
			return err
		}
	}
}

func (t *csvTable) scan(ctx context.Context, need []bool, fn func(row []sql.Value) error) error {
	row := make([]sql.Value, len(t.cols))
	for i := range t.files {
		header := t.hasHeader
		err := t.read(ctx, i, func(r *csv.Reader, rec []string) error {
			line, _ := r.FieldPos(0)
			if header {
				header = false
				if !slices.Equal(rec, t.header) {
					return fmt.Errorf("inventory %s: its header row %q differs from that of %s, %q", t.names[i], rec, t.names[0], t.header)
				}
				return nil
			}
			if len(rec) != len(t.header) {
				return fmt.Errorf("inventory %s line %d: %d fields, the header names %d", t.names[i], line, len(rec), len(t.header))
			}
			for j, v := range rec {
				switch {
				case !need[j]:
				case v == "":
					row[j] = sql.NullValue()
				default:
					row[j] = sql.StringValue(v)
				}
			}
			if err := fn(row); err != nil {
				return fmt.Errorf("inventory %s line %d: %w", t.names[i], line, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

package parquetguard

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// invRow is a row of an inventory report as the inventory package reads it: a key, a size, a
// time, a flag; the storage class repeats and is dictionary-encoded.
type invRow struct {
	Key      string `parquet:"key"`
	Size     int64  `parquet:"size"`
	Modified int64  `parquet:"modified,timestamp(millisecond)"`
	Latest   bool   `parquet:"latest"`
	Class    string `parquet:"class,dict"`
}

// countingReader is an object that counts what is read of it.
type countingReader struct {
	data         []byte
	reads, bytes int64
	largest      int64 // the largest single read
	failAt       int64 // a read reaching past this offset fails with failure (0: never)
	failure      error
}

func (r *countingReader) ReadAt(p []byte, off int64) (int, error) {
	r.reads++
	r.bytes += int64(len(p))
	r.largest = max(r.largest, int64(len(p)))
	if r.failAt > 0 && off+int64(len(p)) > r.failAt {
		return 0, r.failure
	}
	if off >= int64(len(r.data)) {
		return 0, io.EOF
	}
	n := copy(p, r.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (r *countingReader) Close() error { return nil }
func (r *countingReader) Size() int64  { return int64(len(r.data)) }

// writeReport writes n rows as one row group of small pages, so that each column chunk holds
// many pages.
func writeReport(t testing.TB, n int, codec compress.Codec, pageVersion int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[invRow](&buf, parquet.Compression(codec), parquet.PageBufferSize(4<<10),
		parquet.DataPageVersion(pageVersion), parquet.MaxRowsPerRowGroup(int64(n)))
	rows := make([]invRow, 0, 1000)
	for i := range n {
		rows = append(rows, invRow{
			Key:      fmt.Sprintf("date=2020-01-%02d/part-%05d-%08x.c000.snappy.parquet", i%28+1, i, uint32(i)*2654435761),
			Size:     int64(i) * 37,
			Modified: 1_600_000_000_000 + int64(i),
			Latest:   i%3 != 0,
			Class:    []string{"STANDARD", "GLACIER", "STANDARD_IA"}[i%3],
		})
		if len(rows) == cap(rows) || i == n-1 {
			if _, err := w.Write(rows); err != nil {
				t.Fatal(err)
			}
			rows = rows[:0]
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readResult is what readReport read: the rows (each column's values in order, as strings)
// and the error that stopped it.
type readResult struct {
	rows    [][]string
	err     error
	streams []*pageStream // of the last row group
}

// readReport reads every column of every row group in step, row by row, as the inventory
// reader does, through a Source that streams chunks larger than above.
func readReport(t testing.TB, r *countingReader, above, window int64) readResult {
	t.Helper()
	defer StreamForTest(above, window)()
	var res readResult
	src := NewSource(r)
	f, err := src.Open()
	if err != nil {
		res.err = err
		return res
	}
	leaves := f.Root().Columns()
	load := make([]Chunk, len(leaves))
	for i, c := range leaves {
		load[i] = Chunk{Column: c.Index(), Name: c.Name(), Codec: c.Compression().CompressionCodec()}
	}
	for g, rg := range f.RowGroups() {
		if err := src.LoadChunks(&f.Metadata().RowGroups[g], load); err != nil {
			res.err = err
			return res
		}
		res.streams = src.streams
		cols := make([]*valueCursor, len(leaves))
		for i, c := range leaves {
			cols[i] = &valueCursor{buf: make([]parquet.Value, 100)}
			if err := cols[i].pages.Open(rg.ColumnChunks()[c.Index()]); err != nil {
				res.err = src.Fail("opening column", err)
				return res
			}
			defer cols[i].pages.Close()
		}
		for range rg.NumRows() {
			row := make([]string, len(cols))
			for i, c := range cols {
				v, err := c.next()
				if err != nil {
					res.err = src.Fail("reading column "+leaves[i].Name(), err)
					return res
				}
				row[i] = v.String()
			}
			res.rows = append(res.rows, row)
		}
	}
	return res
}

// valueCursor reads the values of one column chunk, a page at a time.
type valueCursor struct {
	pages Pages
	vals  parquet.ValueReader
	buf   []parquet.Value
	i, n  int
}

func (c *valueCursor) next() (parquet.Value, error) {
	for c.i >= c.n {
		if c.vals != nil {
			var n int
			err := Protect(func() error {
				var err error
				n, err = c.vals.ReadValues(c.buf)
				return err
			})
			c.i, c.n = 0, n
			if n > 0 {
				break
			}
			if err != nil && err != io.EOF {
				return parquet.Value{}, err
			}
			c.vals = nil
			continue
		}
		page, err := c.pages.Next()
		if err != nil {
			return parquet.Value{}, err
		}
		c.vals = page.Values()
	}
	c.i++
	return c.buf[c.i-1], nil
}

// largestPageOf returns the largest page (header and data) of the chunk at [start, end).
func largestPageOf(t *testing.T, data []byte, start, end int64) int64 {
	var largest int64
	for pos := start; pos < end; {
		h, n := pageHeaderAt(t, data, pos)
		largest = max(largest, int64(n)+int64(h.CompressedPageSize))
		pos += int64(n) + int64(h.CompressedPageSize)
	}
	return largest
}

func pageHeaderAt(t *testing.T, data []byte, pos int64) (format.PageHeader, int) {
	t.Helper()
	n, err := CheckThrift(data[pos:])
	if err != nil {
		t.Fatal(err)
	}
	var h format.PageHeader
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[pos:pos+int64(n)], &h); err != nil {
		t.Fatal(err)
	}
	return h, n
}

// damagePage damages the k-th page of column col of the first row group: its header is
// rewritten with header, its bytes damaged in place with raw, or (snappy) its data's length
// claim raised past MaxPageBytes. What follows moves and the footer's offsets follow it. It
// returns the file and the first row of the page.
func damagePage(t *testing.T, data []byte, col string, k int, header func(*format.PageHeader), raw func([]byte), snappy bool) ([]byte, int64) {
	t.Helper()
	footerLen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	footerStart := len(data) - 8 - footerLen
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[footerStart:len(data)-8], &md); err != nil {
		t.Fatal(err)
	}
	var chunk *format.ColumnChunk
	for i := range md.RowGroups[0].Columns {
		if c := &md.RowGroups[0].Columns[i]; strings.Join(c.MetaData.PathInSchema, ".") == col {
			chunk = c
		}
	}
	pos, end := ChunkRange(chunk)
	end += pos
	var firstRow int64
	var h format.PageHeader
	var n int
	for i := 0; ; i++ {
		if pos >= end {
			t.Fatalf("column %s has fewer than %d pages", col, k+1)
		}
		h, n = pageHeaderAt(t, data, pos)
		if i >= k && h.DataPageHeader.Valid {
			break
		}
		if h.DataPageHeader.Valid {
			firstRow += int64(h.DataPageHeader.V.NumValues)
		}
		pos += int64(n) + int64(h.CompressedPageSize)
	}
	var replaced []byte
	switch {
	case raw != nil:
		replaced = append([]byte(nil), data[pos:pos+int64(n)]...)
		raw(replaced)
	case snappy:
		// The page's data: its snappy length claim, rewritten, and the header's size with it.
		body := data[pos+int64(n) : pos+int64(n)+int64(h.CompressedPageSize)]
		_, k := binary.Uvarint(body)
		newBody := append(binary.AppendUvarint(nil, MaxPageBytes+1), body[k:]...)
		h.CompressedPageSize = int32(len(newBody))
		hb, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
		if err != nil {
			t.Fatal(err)
		}
		replaced = append(hb, newBody...)
		n += len(body) // the old body goes too
	default:
		header(&h)
		hb, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
		if err != nil {
			t.Fatal(err)
		}
		replaced = hb
	}
	delta := int64(len(replaced) - n)
	body := append(append(append([]byte(nil), data[:pos]...), replaced...), data[pos+int64(n):footerStart]...)
	shift := func(p *int64) {
		if *p > pos {
			*p += delta
		}
	}
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			c := &md.RowGroups[i].Columns[j]
			shift(&c.MetaData.DataPageOffset)
			shift(&c.MetaData.DictionaryPageOffset)
			shift(&c.FileOffset)
		}
		shift(&md.RowGroups[i].FileOffset)
	}
	chunk.MetaData.TotalCompressedSize += delta
	md.RowGroups[0].TotalCompressedSize += delta
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	out := append(body, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...), firstRow
}

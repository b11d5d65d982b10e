package inventory

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/deltavacuum/deltavacuum/internal/parquetguard"
)

// TestHostileParquet reads inventory files whose page headers or row groups claim sizes far
// beyond the file: parquet-go would allocate what they claim (a gigabyte for the first case)
// before finding out. Each must be refused with an error naming the file and the problem, and
// the reader must allocate no more than a small multiple of the file.
func TestHostileParquet(t *testing.T) {
	dir, root := tableRoot(t)
	rows := make([]row, 5000)
	for i := range rows {
		rows[i] = row{Path: fmt.Sprintf("file:%s/f%05d", dir, i), Length: int64(i), ModificationTime: 1}
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.Compression(&parquet.Snappy))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	for _, tc := range []struct {
		name string
		page func(*format.PageHeader)
		meta func(*format.ColumnChunk)
		want string
	}{
		{"page claims a gigabyte uncompressed", func(h *format.PageHeader) { h.UncompressedPageSize = 1 << 30 }, nil,
			"page claims 1073741824 bytes uncompressed"},
		{"page claims a billion values", func(h *format.PageHeader) {
			switch {
			case h.DataPageHeader.Valid:
				h.DataPageHeader.V.NumValues = 1 << 30
			case h.DataPageHeaderV2.Valid:
				h.DataPageHeaderV2.V.NumValues = 1 << 30
			default:
				h.DictionaryPageHeader.V.NumValues = 1 << 30
			}
		}, nil, "page claims 1073741824 values"},
		{"page overruns its chunk", func(h *format.PageHeader) { h.CompressedPageSize = 1 << 30 }, nil,
			"page of 1073741824 bytes overruns its chunk"},
		{"chunk claims a terabyte", nil, func(c *format.ColumnChunk) { c.MetaData.TotalCompressedSize = 1 << 40 },
			"lies outside the file"},
	} {
		// Each file is refused alike whether its column chunks are held whole or, as those of
		// a report of gigabytes are, read a page at a time.
		for _, mode := range []struct {
			name          string
			above, window int64
		}{{"whole chunks", 1 << 40, 0}, {"page at a time", 0, 1 << 10}} {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				defer parquetguard.StreamForTest(mode.above, mode.window)()
				data := pqDamage(t, good, tc.page, tc.meta)
				inv := filepath.Join(t.TempDir(), "inventory.parquet")
				writeFile(t, inv, data)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				l, err := Open(context.Background(), Source{Location: inv}, root, Options{})
				if err == nil {
					_, err = walkErr(l, "", nil)
				}
				runtime.ReadMemStats(&after)
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "inventory.parquet") {
					t.Errorf("got %v, want an error naming the file and %q", err, tc.want)
				}
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
					t.Errorf("reading a %d-byte file allocated %d MB", len(data), alloc>>20)
				}
			})
		}
	}
}

// TestParquetPageAtATime reads an inventory written as one row group of many pages with its
// column chunks held whole and a page at a time through small windows: the listings must be
// the same.
func TestParquetPageAtATime(t *testing.T) {
	dir, root := tableRoot(t)
	rows := make([]row, 30_000)
	for i := range rows {
		rows[i] = row{Path: fmt.Sprintf("file:%s/p=%d/f%05d", dir, i%7, i), Length: int64(i), ModificationTime: int64(1000 + i)}
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.Compression(&parquet.Snappy), parquet.PageBufferSize(4<<10))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(t.TempDir(), "inventory.parquet")
	writeFile(t, inv, buf.Bytes())
	list := func(above, window int64) []string {
		defer parquetguard.StreamForTest(above, window)()
		l, err := Open(context.Background(), Source{Location: inv}, root, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := walkErr(l, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	whole := list(1<<40, 0)
	if len(whole) < 30_000 {
		t.Fatalf("%d entries listed", len(whole))
	}
	if streamed := list(16<<10, 4<<10); !slices.Equal(streamed, whole) {
		t.Fatal("the listing read a page at a time differs from that read with whole chunks")
	}
}

// pqDamage rewrites the first page header of the first column chunk of a Parquet file with
// page, and that chunk's metadata with meta, moving what follows and fixing the footer's offsets.
func pqDamage(t *testing.T, data []byte, page func(*format.PageHeader), meta func(*format.ColumnChunk)) []byte {
	t.Helper()
	footerLen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	footerStart := len(data) - 8 - footerLen
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[footerStart:len(data)-8], &md); err != nil {
		t.Fatal(err)
	}
	first := &md.RowGroups[0].Columns[0]
	off, _ := parquetguard.ChunkRange(first)
	body := append([]byte(nil), data[:footerStart]...)
	if page != nil {
		n, err := parquetguard.CheckThrift(data[off:])
		if err != nil {
			t.Fatal(err)
		}
		var h format.PageHeader
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[off:off+int64(n)], &h); err != nil {
			t.Fatal(err)
		}
		page(&h)
		hb, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
		if err != nil {
			t.Fatal(err)
		}
		delta := int64(len(hb) - n)
		body = append(append(append([]byte(nil), data[:off]...), hb...), data[off+int64(n):footerStart]...)
		shift := func(p *int64) {
			if *p > off {
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
		first.MetaData.TotalCompressedSize += delta
		md.RowGroups[0].TotalCompressedSize += delta
	}
	if meta != nil {
		meta(first)
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	out := append(body, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

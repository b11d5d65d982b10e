package parquetguard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// TestStreamedChunksReadAsWhole: a row group whose chunks are larger than the bound, read a page
// at a time through small windows, gives exactly the rows read with its chunks held whole, for
// each codec and both page versions. (Not LZ4_RAW: parquet-go v0.32.0 itself reads wrong values
// from the LZ4_RAW pages it writes, with parquet.Read as much as here.)
func TestStreamedChunksReadAsWhole(t *testing.T) {
	for _, codec := range []compress.Codec{&parquet.Snappy, &parquet.Zstd, &parquet.Gzip, &parquet.Uncompressed} {
		for _, version := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/v%d", codec.CompressionCodec(), version), func(t *testing.T) {
				data := writeReport(t, 20_000, codec, version)
				whole := readReport(t, &countingReader{data: data}, 1<<40, 0)
				if whole.err != nil || len(whole.streams) != 0 {
					t.Fatalf("whole chunks: %v, %d streams", whole.err, len(whole.streams))
				}
				if len(whole.rows) != 20_000 {
					t.Fatalf("whole chunks: %d rows", len(whole.rows))
				}
				for i, row := range whole.rows {
					if row[1] != fmt.Sprint(i*37) || row[2] != fmt.Sprint(1_600_000_000_000+i) {
						t.Fatalf("whole chunks: row %d is %v", i, row)
					}
				}
				for _, window := range []int64{1, 1000, 64 << 10} {
					streamed := readReport(t, &countingReader{data: data}, 16<<10, window)
					if streamed.err != nil {
						t.Fatalf("window %d: %v", window, streamed.err)
					}
					if len(streamed.streams) == 0 {
						t.Fatalf("window %d: no chunk streamed", window)
					}
					if !reflect.DeepEqual(streamed.rows, whole.rows) {
						t.Fatalf("window %d: the rows differ from those of whole chunks", window)
					}
				}
			})
		}
	}
}

// TestStreamedChunksMemory: reading a chunk many times larger than the window holds no more
// than a window and a page (plus the header probe) at once, and reads the chunk once.
func TestStreamedChunksMemory(t *testing.T) {
	data := writeReport(t, 100_000, &parquet.Snappy, 1)
	const window = 32 << 10
	r := &countingReader{data: data}
	res := readReport(t, r, 64<<10, window)
	if res.err != nil {
		t.Fatal(res.err)
	}
	var largestPage int64
	for _, st := range res.streams {
		largestPage = max(largestPage, largestPageOf(t, data, st.start, st.end))
	}
	for _, st := range res.streams {
		size := st.end - st.start
		if size < 20*window && st.check.name == "key" {
			t.Fatalf("chunk of %s is %d bytes: too small for this test", st.check.name, size)
		}
		// A read of parquet-go (64 KiB) plus what follows it to the end of a page, a read from
		// the store beyond that and the probe for the next header.
		bound := int64(ReadBufferSize) + largestPage + window + 64<<10
		if st.peak > bound {
			t.Errorf("column %s: %d bytes held at once for a chunk of %d, want at most %d", st.check.name, st.peak, size, bound)
		}
		if st.read != size {
			t.Errorf("column %s: %d bytes read for a chunk of %d", st.check.name, st.read, size)
		}
		t.Logf("column %s: chunk of %d bytes, at most %d held, largest page %d", st.check.name, size, st.peak, largestPage)
	}
	if r.largest > max(TailRead, window+largestPage+64<<10) {
		t.Errorf("largest read from the store: %d bytes", r.largest)
	}
}

// TestStreamedChunksRefuseDeepPage: a damaged page far into a streamed chunk is refused with
// the CorruptError the whole chunk gets, and no row from that page on is returned.
func TestStreamedChunksRefuseDeepPage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header func(*format.PageHeader) // rewrites the header
		raw    func([]byte)             // or damages its bytes in place
		snappy bool                     // or raises the snappy length claim of its data
		want   string
	}{
		{"bad header", nil, func(b []byte) { b[0] = 0xFF }, false, "page header at"},
		{"page overruns its chunk", func(h *format.PageHeader) { h.CompressedPageSize = 1 << 30 }, nil, false, "overruns its chunk"},
		{"decompressed size lie", func(h *format.PageHeader) { h.UncompressedPageSize = 1 << 30 }, nil, false, "bytes uncompressed"},
		{"value count lie", func(h *format.PageHeader) { h.DataPageHeader.V.NumValues = 1 << 30 }, nil, false, "values"},
		{"snappy length lie", nil, nil, true, "snappy block claims"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good := writeReport(t, 20_000, &parquet.Snappy, 1)
			data, firstRow := damagePage(t, good, "key", 40, tc.header, tc.raw, tc.snappy)
			whole := readReport(t, &countingReader{data: data}, 1<<40, 0)
			var want *CorruptError
			if !errors.As(whole.err, &want) || !strings.Contains(want.Msg, tc.want) || !strings.Contains(want.Msg, "column key") {
				t.Fatalf("whole chunks: got %v, want a CorruptError naming the column and %q", whole.err, tc.want)
			}
			all := readReport(t, &countingReader{data: good}, 1<<40, 0)
			for _, window := range []int64{1, 4 << 10, 1 << 20} {
				streamed := readReport(t, &countingReader{data: data}, 16<<10, window)
				var got *CorruptError
				if !errors.As(streamed.err, &got) || got.Msg != want.Msg {
					t.Fatalf("window %d: got %v, want %q", window, streamed.err, want.Msg)
				}
				if int64(len(streamed.rows)) > firstRow {
					t.Fatalf("window %d: %d rows returned, the damaged page starts at row %d", window, len(streamed.rows), firstRow)
				}
				if !reflect.DeepEqual(streamed.rows, all.rows[:len(streamed.rows)]) {
					t.Fatalf("window %d: the rows before the damage differ", window)
				}
			}
		})
	}
}

// TestStreamedChunksStoreFailure: a store failing in the middle of a streamed chunk is a
// ReadError, not a corrupt file.
func TestStreamedChunksStoreFailure(t *testing.T) {
	data := writeReport(t, 20_000, &parquet.Snappy, 1)
	failure := errors.New("connection reset")
	r := &countingReader{data: data, failure: failure}
	src := NewSource(r)
	f, err := src.Open()
	if err != nil {
		t.Fatal(err)
	}
	r.failAt = int64(len(data)) / 3 // in the key column's chunk, after the footer was read
	defer StreamForTest(16<<10, 4<<10)()
	leaves := f.Root().Columns()
	load := make([]Chunk, len(leaves))
	for i, c := range leaves {
		load[i] = Chunk{Column: c.Index(), Name: c.Name(), Codec: c.Compression().CompressionCodec()}
	}
	if err := src.LoadChunks(&f.Metadata().RowGroups[0], load[:1]); err != nil {
		t.Fatal(err)
	}
	c := &valueCursor{buf: make([]parquet.Value, 100)}
	if err := c.pages.Open(f.RowGroups()[0].ColumnChunks()[0]); err != nil {
		t.Fatal(err)
	}
	defer c.pages.Close()
	for {
		if _, err = c.next(); err != nil {
			break
		}
	}
	var re *ReadError
	if err = src.Fail("reading column key", err); !errors.As(err, &re) || !errors.Is(err, failure) {
		t.Fatalf("got %v, want a ReadError of the store's failure", err)
	}
}

// TestStreamedChunksOverlap: a streamed chunk that shares bytes with another projected chunk
// is refused, since the stream checks those bytes only as its own pages.
func TestStreamedChunksOverlap(t *testing.T) {
	good := writeReport(t, 5_000, &parquet.Snappy, 1)
	footerLen := int(binary.LittleEndian.Uint32(good[len(good)-8:]))
	footerStart := len(good) - 8 - footerLen
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), good[footerStart:len(good)-8], &md); err != nil {
		t.Fatal(err)
	}
	// The size column's chunk claims the key column's too.
	key, size := &md.RowGroups[0].Columns[0], &md.RowGroups[0].Columns[1]
	keyOff, _ := ChunkRange(key)
	sizeOff, sizeN := ChunkRange(size)
	size.MetaData.DataPageOffset, size.MetaData.DictionaryPageOffset = keyOff, 0
	size.MetaData.TotalCompressedSize = sizeOff + sizeN - keyOff
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	data := append(append([]byte(nil), good[:footerStart]...), footer...)
	data = binary.LittleEndian.AppendUint32(data, uint32(len(footer)))
	data = append(data, "PAR1"...)
	res := readReport(t, &countingReader{data: data}, 1<<10, 4<<10)
	var c *CorruptError
	if !errors.As(res.err, &c) || !strings.Contains(c.Msg, "overlap") {
		t.Fatalf("got %v, want the overlap refused", res.err)
	}
}

// TestStreamedChunksCheckRest: the pages of a streamed chunk that parquet-go never reached (a
// reader stops at the last row) are checked by CheckRest, as LoadChunks checks those of a chunk
// held whole.
func TestStreamedChunksCheckRest(t *testing.T) {
	good := writeReport(t, 20_000, &parquet.Snappy, 1)
	bad, _ := damagePage(t, good, "key", 40, func(h *format.PageHeader) { h.UncompressedPageSize = 1 << 30 }, nil, false)
	defer StreamForTest(16<<10, 4<<10)()
	for _, tc := range []struct {
		name string
		data []byte
		want string // "" for none
	}{{"sound", good, ""}, {"damaged", bad, "column key: page claims 1073741824 bytes uncompressed"}} {
		t.Run(tc.name, func(t *testing.T) {
			src := NewSource(&countingReader{data: tc.data})
			f, err := src.Open()
			if err != nil {
				t.Fatal(err)
			}
			key := f.Root().Column("key")
			chunk := Chunk{Column: key.Index(), Name: "key", Codec: key.Compression().CompressionCodec()}
			if err := src.LoadChunks(&f.Metadata().RowGroups[0], []Chunk{chunk}); err != nil {
				t.Fatal(err)
			}
			c := &valueCursor{buf: make([]parquet.Value, 100)}
			if err := c.pages.Open(f.RowGroups()[0].ColumnChunks()[key.Index()]); err != nil {
				t.Fatal(err)
			}
			defer c.pages.Close()
			for range 100 { // the first rows only
				if _, err := c.next(); err != nil {
					t.Fatal(err)
				}
			}
			err = src.CheckRest()
			var ce *CorruptError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("sound chunk refused: %v", err)
			case tc.want != "" && (!errors.As(err, &ce) || ce.Msg != tc.want):
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if st := src.streams[0]; tc.want == "" && (st.checked != st.end || st.read != st.end-st.start) {
				t.Fatalf("checked to %d of %d, read %d bytes of %d", st.checked-st.start, st.end-st.start, st.read, st.end-st.start)
			}
		})
	}
}

// TestPageStreamServesBytes: a stream serves the chunk's bytes as they are in the file, read in
// pieces of any size, and starts over (checking again) when asked for bytes behind its window,
// as parquet-go does to read a dictionary page again.
func TestPageStreamServesBytes(t *testing.T) {
	data := writeReport(t, 5_000, &parquet.Snappy, 1)
	src := NewSource(&countingReader{data: data})
	f, err := src.Open()
	if err != nil {
		t.Fatal(err)
	}
	key := f.Root().Column("key")
	off, n := ChunkRange(&f.Metadata().RowGroups[0].Columns[key.Index()])
	for _, piece := range []int{1, 7, 1000, 64 << 10} {
		defer StreamForTest(0, 512)()
		st := newPageStream(Chunk{Column: key.Index(), Name: "key", Codec: key.Compression().CompressionCodec()}, off, n)
		for pass := range 2 { // the second pass starts over from the chunk's start
			var got []byte
			p := make([]byte, piece)
			for pos := off; pos < off+n; {
				k, err := st.readAt(&src.BoundedReader, p, pos)
				if err != nil && !(err == io.EOF && pos+int64(k) == off+n) {
					t.Fatalf("piece %d, pass %d, at %d: %v", piece, pass, pos-off, err)
				}
				got = append(got, p[:k]...)
				pos += int64(k)
			}
			if !bytes.Equal(got, data[off:off+n]) {
				t.Fatalf("piece %d, pass %d: the bytes served differ from the file's", piece, pass)
			}
		}
		// Small pieces move the window past the start: the second pass reads the chunk again.
		// (A piece of 64 KiB leaves the start in the window, which serves it again.)
		if piece < 64<<10 && st.read != 2*n || st.read > 2*n {
			t.Fatalf("piece %d: %d bytes read from the store for two passes over %d", piece, st.read, n)
		}
	}
}

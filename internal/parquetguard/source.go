package parquetguard

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/deltavacuum/deltavacuum/storage"
)

const (
	// ReadBufferSize is the size of the buffered reads parquet-go's page readers make. They
	// read from memory (see Source), so it need not be large; it is a constant because
	// parquet-go pools its read buffers by size.
	ReadBufferSize = 64 << 10
	// MaxPageBytes and MaxPageValues bound what a page header may claim. parquet-go allocates
	// buffers of the claimed sizes before decoding, so a damaged header could otherwise ask for
	// gigabytes. Writers use pages of about 1 MB and 20,000 rows.
	MaxPageBytes  = 128 << 20
	MaxPageValues = 16 << 20
	// TailRead is how much of the end of a file is read to find the footer: usually all of it
	// (and all of a small file) in one request.
	TailRead = 64 << 10
)

// CorruptError is a file that cannot be read safely as Parquet. Msg says what is wrong; the
// caller adds which file and what to do.
type CorruptError struct{ Msg string }

func (e *CorruptError) Error() string { return e.Msg }

func corruptf(format string, args ...any) error {
	return &CorruptError{Msg: fmt.Sprintf(format, args...)}
}

// ReadError is a failure of the store while reading the file (not a property of the file).
type ReadError struct {
	What string // what was being read
	Err  error
}

func (e *ReadError) Error() string { return e.What + ": " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// Source is the io.ReaderAt handed to parquet-go. The footer and the column chunks of a row
// group are fetched in one read each and checked before parquet-go parses them; parquet-go's
// reads are then served from those regions. A column chunk too large to hold (see
// streamAbove) is instead read a window at a time as parquet-go goes through it, each page
// checked before parquet-go sees any of its bytes (pageStream). Other reads go to the object,
// kept within its size so that a truncated file shows up as io.EOF rather than as a backend
// error. The first real I/O error is remembered, so that a failing store is not reported as a
// corrupt file.
type Source struct {
	storage.BoundedReader
	regions []region
	streams []*pageStream
	// refused is the first page a stream refused: parquet-go reports only that it could not
	// read, Fail reports why.
	refused error
}

// region is a range of the file held in memory.
type region struct {
	off  int64
	data []byte
}

// NewSource returns a Source reading r.
func NewSource(r storage.Reader) *Source {
	return &Source{BoundedReader: storage.BoundedReader{R: r, Size: r.Size()}}
}

// ReadAt serves p from a fetched region when one holds it, from a streamed chunk when p starts
// in one, from the object otherwise.
func (s *Source) ReadAt(p []byte, off int64) (int, error) {
	for _, r := range s.regions {
		if off >= r.off && off+int64(len(p)) <= r.off+int64(len(r.data)) {
			return copy(p, r.data[off-r.off:]), nil
		}
	}
	for _, st := range s.streams {
		if off >= st.start && off < st.end {
			n, err := st.readAt(&s.BoundedReader, p, off)
			var c *CorruptError
			if s.refused == nil && errors.As(err, &c) {
				s.refused = err
			}
			return n, err
		}
	}
	return s.BoundedReader.ReadAt(p, off)
}

// Drop forgets the fetched regions and streamed chunks (those of the previous row group).
func (s *Source) Drop() {
	clear(s.regions)
	s.regions = s.regions[:0]
	clear(s.streams)
	s.streams = s.streams[:0]
}

// fetch reads n bytes at off into a new region.
func (s *Source) fetch(off, n int64, what string) ([]byte, error) {
	if off < 0 || n < 0 || off > s.Size || n > s.Size-off {
		return nil, corruptf("%s at %d+%d lies outside the file of %d bytes", what, off, n, s.Size)
	}
	b := make([]byte, n)
	if _, err := s.ReadAt(b, off); err != nil {
		return nil, s.Fail("reading "+what, err)
	}
	s.regions = append(s.regions, region{off, b})
	return b, nil
}

// Fail turns an error reported by parquet-go while doing what into a ReadError when the store
// failed, a CorruptError otherwise.
func (s *Source) Fail(what string, err error) error {
	if s.Err != nil {
		return &ReadError{What: what, Err: s.Err}
	}
	if s.refused != nil {
		return s.refused
	}
	return corruptf("%s: %v", what, err)
}

// Open checks the framing of the file and its footer, and has parquet-go parse the footer.
// Page indexes and bloom filters are never read.
func (s *Source) Open() (f *parquet.File, err error) {
	const magic = "PAR1"
	if s.Size < 12 {
		return nil, corruptf("file of %d bytes is too small to be Parquet", s.Size)
	}
	tail, err := s.fetch(s.Size-min(s.Size, TailRead), min(s.Size, TailRead), "footer")
	if err != nil {
		return nil, err
	}
	head := make([]byte, 4)
	if _, err := s.ReadAt(head, 0); err != nil {
		return nil, s.Fail("reading header", err)
	}
	s.regions = append(s.regions, region{0, head})
	trailer := tail[len(tail)-8:]
	if string(head) != magic || string(trailer[4:]) != magic {
		return nil, corruptf("not a Parquet file (or an encrypted one): bad magic bytes")
	}
	footerLen := int64(binary.LittleEndian.Uint32(trailer[:4]))
	if footerLen > s.Size-12 {
		return nil, corruptf("footer length %d exceeds file size %d", footerLen, s.Size)
	}
	var footer []byte
	if footerLen+8 <= int64(len(tail)) {
		footer = tail[int64(len(tail))-8-footerLen : len(tail)-8]
	} else if footer, err = s.fetch(s.Size-8-footerLen, footerLen, "footer"); err != nil {
		return nil, err
	}
	if _, err := CheckThrift(footer); err != nil {
		return nil, corruptf("footer: %v", err)
	}
	err = Protect(func() error {
		var err error
		f, err = parquet.OpenFile(s, s.Size,
			parquet.SkipPageIndex(true),
			parquet.SkipBloomFilters(true),
			parquet.ReadBufferSize(ReadBufferSize),
			parquet.FileReadMode(parquet.ReadModeSync),
		)
		return err
	})
	s.Drop()
	if err != nil {
		return nil, s.Fail("reading footer", err)
	}
	return f, nil
}

// Chunk names a column chunk of a row group to load.
type Chunk struct {
	Column int    // leaf column index
	Name   string // for messages
	// Codec is the codec parquet-go decompresses the column's pages with: that of the
	// column's first chunk in the file (parquet.Column.Compression).
	Codec format.CompressionCodec
}

// ChunkRange returns where a column chunk lies, as parquet-go's page reader sees it.
func ChunkRange(c *format.ColumnChunk) (off, n int64) {
	off = c.MetaData.DataPageOffset
	if c.MetaData.DictionaryPageOffset != 0 {
		off = c.MetaData.DictionaryPageOffset
	}
	return off, c.MetaData.TotalCompressedSize
}

// LoadChunks drops the regions of the previous row group, fetches the given column chunks of
// row group rg, merging adjacent ones into one read, and checks their pages (see
// checkPages). Afterwards parquet-go reads those chunks from memory. A chunk larger than
// streamAbove is not fetched: its pages are read and checked as parquet-go reaches them
// (pageStream), so that a page it refuses surfaces as an error of parquet-go's read, which
// Fail turns back into the CorruptError.
func (s *Source) LoadChunks(rg *format.RowGroup, chunks []Chunk) error {
	s.Drop()
	s.refused = nil
	type span struct {
		off, n int64
		c      Chunk
	}
	spans := make([]span, 0, len(chunks))
	for _, c := range chunks {
		if c.Column < 0 || c.Column >= len(rg.Columns) {
			return corruptf("row group lacks column %s", c.Name)
		}
		off, n := ChunkRange(&rg.Columns[c.Column])
		if off < 0 || n < 0 || off > s.Size || n > s.Size-off {
			return corruptf("column chunk of %s at %d+%d lies outside the file of %d bytes", c.Name, off, n, s.Size)
		}
		if n > streamAbove.Load() {
			if !slices.ContainsFunc(s.streams, func(st *pageStream) bool { return st.column == c.Column }) {
				s.streams = append(s.streams, newPageStream(c, off, n))
			}
			continue
		}
		spans = append(spans, span{off, n, c})
	}
	// A stream checks the pages of its own chunk only, and parquet-go's reads carry no column:
	// bytes of a streamed chunk must be nobody else's, or a read of another column there would
	// be served bytes checked as something else. Column chunks never overlap in a sound file.
	for _, st := range s.streams {
		for _, o := range s.streams {
			if o != st && o.start < st.end && st.start < o.end {
				return corruptf("column chunks of %s and %s overlap", st.check.name, o.check.name)
			}
		}
		for _, sp := range spans {
			if sp.off < st.end && st.start < sp.off+sp.n {
				return corruptf("column chunks of %s and %s overlap", st.check.name, sp.c.Name)
			}
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.off, b.off) })
	for i := 0; i < len(spans); {
		j, end := i+1, spans[i].off+spans[i].n
		for j < len(spans) && spans[j].off == end {
			end += spans[j].n
			j++
		}
		data, err := s.fetch(spans[i].off, end-spans[i].off, "column chunk of "+spans[i].c.Name)
		if err != nil {
			return err
		}
		for _, sp := range spans[i:j] {
			lo := sp.off - spans[i].off
			if err := checkPages(data[lo:lo+sp.n], sp.c.Name, sp.c.Codec); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

// CheckRest checks the pages of the streamed chunks of the row group that parquet-go did not
// reach (a reader stops at the row group's last row), so that a row group read a page at a
// time is refused whenever one held whole would have been. It reads nothing in the usual case:
// parquet-go's read-ahead reaches the end of the chunk with its last page.
func (s *Source) CheckRest() error {
	for _, st := range s.streams {
		if err := st.rest(&s.BoundedReader); err != nil {
			var c *CorruptError
			if errors.As(err, &c) {
				return err
			}
			return &ReadError{What: "reading column chunk of " + st.check.name, Err: err}
		}
	}
	return nil
}

// Protect runs fn and turns a panic into an error. parquet-go panics on some malformed inputs
// (unknown encodings, inconsistent schemas); it is only ever used around parquet-go calls, so
// that panics in our own code or in callbacks still crash loudly.
func Protect(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("parquet-go panic: %v", p)
		}
	}()
	return fn()
}

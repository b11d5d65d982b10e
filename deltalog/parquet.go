package deltalog

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"

	"github.com/deltavacuum/deltavacuum/storage"
)

const (
	// pqReadBufferSize is the size of the buffered reads parquet-go's page readers make. They
	// read from memory (see pqSource), so it need not be large; it is a constant because
	// parquet-go pools its read buffers by size.
	pqReadBufferSize = 64 << 10
	// pqMaxPageBytes and pqMaxPageValues bound what a page header may claim. parquet-go
	// allocates buffers of the claimed sizes before decoding, so a damaged header could
	// otherwise ask for gigabytes. Writers use pages of about 1 MB and 20,000 rows.
	pqMaxPageBytes  = 128 << 20
	pqMaxPageValues = 16 << 20
)

// readParquetActions streams the rows of a Parquet checkpoint file (classic, one part of a
// multi-part checkpoint, V2 top-level file or sidecar) as actions, calling fn once per row
// whose action kind is in want. Rows come in file order.
//
// Only the leaf columns needed for the wanted kinds are read: for add and remove the fields
// that identify a file and its deletion vector (never stats or partition values), for
// metaData, protocol, sidecar and checkpointMetadata their whole group. The needed column
// chunks of one row group are held in memory, compressed, and decoded one page at a time, so
// memory is bounded by a row group, not by the number of rows in the file.
//
// A file that is not Parquet, is truncated or whose columns have unexpected types yields an
// error wrapping ErrCorrupt; an error of the underlying reader is returned as is.
func readParquetActions(ctx context.Context, r storage.Reader, want Kinds, fn func(*Action) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	src := &pqSource{BoundedReader: storage.BoundedReader{R: r, Size: r.Size()}}
	f, err := src.open()
	if err != nil {
		return err
	}
	p, err := newPQPlan(f, want)
	if err != nil {
		return err
	}
	if len(p.cursors) == 0 {
		// None of the wanted groups is in the file (a sidecar read for metadata, say).
		return nil
	}
	for i, rg := range f.RowGroups() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := p.readRowGroup(ctx, src, f, i, rg, fn); err != nil {
			return err
		}
	}
	if len(p.missing) > 0 && (p.sidecars == 0 || p.checkpointMetadata == 0) {
		return pqCorruptf("the file has no %s column and is not a V2 checkpoint that lists sidecars: its file actions are nowhere",
			strings.Join(p.missing, " or "))
	}
	return nil
}

// pqCorruptf returns an error wrapping ErrCorrupt.
func pqCorruptf(format string, args ...any) error {
	return fmt.Errorf("parquet checkpoint: "+format+": %w", append(args, ErrCorrupt)...)
}

// pqSource is the io.ReaderAt handed to parquet-go. The footer and the column chunks of a row
// group are fetched in one read each and checked before parquet-go parses them; parquet-go's
// reads are then served from those regions. Other reads go to the object, kept within its
// size so that a truncated file shows up as io.EOF rather than as a backend error. The first
// real I/O error is remembered, so that a failing store is not reported as a corrupt file.
type pqSource struct {
	storage.BoundedReader
	regions []pqRegion
}

// pqRegion is a range of the file held in memory.
type pqRegion struct {
	off  int64
	data []byte
}

func (s *pqSource) ReadAt(p []byte, off int64) (int, error) {
	for _, r := range s.regions {
		if off >= r.off && off+int64(len(p)) <= r.off+int64(len(r.data)) {
			return copy(p, r.data[off-r.off:]), nil
		}
	}
	return s.BoundedReader.ReadAt(p, off)
}

// drop forgets the regions.
func (s *pqSource) drop() {
	clear(s.regions)
	s.regions = s.regions[:0]
}

// fetch reads n bytes at off into a new region.
func (s *pqSource) fetch(off, n int64, what string) ([]byte, error) {
	if off < 0 || n < 0 || off > s.Size || n > s.Size-off {
		return nil, pqCorruptf("%s at %d+%d lies outside the file of %d bytes", what, off, n, s.Size)
	}
	b := make([]byte, n)
	if _, err := s.ReadAt(b, off); err != nil {
		return nil, s.fail("reading "+what, err)
	}
	s.regions = append(s.regions, pqRegion{off, b})
	return b, nil
}

// fail turns an error reported by parquet-go into ours: the reader's own error when there was
// one, ErrCorrupt otherwise.
func (s *pqSource) fail(what string, err error) error {
	if s.Err != nil {
		return fmt.Errorf("parquet checkpoint: %s: %w", what, s.Err)
	}
	return pqCorruptf("%s: %v", what, err)
}

// pqTailRead is how much of the end of a file is read to find the footer: usually all of it
// (and all of a small file) in one request.
const pqTailRead = 64 << 10

// open checks the framing of the file and parses its footer.
func (s *pqSource) open() (f *parquet.File, err error) {
	const magic = "PAR1"
	if s.Size < 12 {
		return nil, pqCorruptf("file of %d bytes is too small to be Parquet", s.Size)
	}
	tail, err := s.fetch(s.Size-min(s.Size, pqTailRead), min(s.Size, pqTailRead), "footer")
	if err != nil {
		return nil, err
	}
	head := make([]byte, 4)
	if _, err := s.ReadAt(head, 0); err != nil {
		return nil, s.fail("reading header", err)
	}
	s.regions = append(s.regions, pqRegion{0, head})
	trailer := tail[len(tail)-8:]
	if string(head) != magic || string(trailer[4:]) != magic {
		return nil, pqCorruptf("not a Parquet file (or an encrypted one): bad magic bytes")
	}
	footerLen := int64(binary.LittleEndian.Uint32(trailer[:4]))
	if footerLen > s.Size-12 {
		return nil, pqCorruptf("footer length %d exceeds file size %d", footerLen, s.Size)
	}
	var footer []byte
	if footerLen+8 <= int64(len(tail)) {
		footer = tail[int64(len(tail))-8-footerLen : len(tail)-8]
	} else if footer, err = s.fetch(s.Size-8-footerLen, footerLen, "footer"); err != nil {
		return nil, err
	}
	if _, err := pqCheckThrift(footer); err != nil {
		return nil, pqCorruptf("footer: %v", err)
	}
	err = pqProtect(func() error {
		var err error
		f, err = parquet.OpenFile(s, s.Size,
			parquet.SkipPageIndex(true),
			parquet.SkipBloomFilters(true),
			parquet.ReadBufferSize(pqReadBufferSize),
			parquet.FileReadMode(parquet.ReadModeSync),
		)
		return err
	})
	s.drop()
	if err != nil {
		return nil, s.fail("reading footer", err)
	}
	return f, nil
}

// pqChunkRange returns where a column chunk lies, as parquet-go's page reader sees it.
func pqChunkRange(c *format.ColumnChunk) (off, n int64) {
	off = c.MetaData.DataPageOffset
	if c.MetaData.DictionaryPageOffset != 0 {
		off = c.MetaData.DictionaryPageOffset
	}
	return off, c.MetaData.TotalCompressedSize
}

// loadChunks fetches the column chunks of the planned columns of a row group, merging
// adjacent ones into one read, and checks their page headers.
func (s *pqSource) loadChunks(rg *format.RowGroup, cursors []*pqCursor) error {
	s.drop()
	type chunk struct {
		off, n int64
		c      *pqCursor
	}
	var chunks []chunk
	for _, c := range cursors {
		off, n := pqChunkRange(&rg.Columns[c.index])
		if off < 0 || n < 0 || off > s.Size || n > s.Size-off {
			return pqCorruptf("column chunk of %s at %d+%d lies outside the file of %d bytes", c.name, off, n, s.Size)
		}
		chunks = append(chunks, chunk{off, n, c})
	}
	slices.SortFunc(chunks, func(a, b chunk) int { return cmp.Compare(a.off, b.off) })
	for i := 0; i < len(chunks); {
		j, end := i+1, chunks[i].off+chunks[i].n
		for j < len(chunks) && chunks[j].off == end {
			end += chunks[j].n
			j++
		}
		data, err := s.fetch(chunks[i].off, end-chunks[i].off, "column chunk of "+chunks[i].c.name)
		if err != nil {
			return err
		}
		for _, c := range chunks[i:j] {
			lo := c.off - chunks[i].off
			if err := pqCheckPages(data[lo:lo+c.n], c.c.name, c.c.codec); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

// pqCheckPages walks the page headers of a column chunk and checks the sizes and counts they
// claim against the chunk and against pqMaxPageBytes and pqMaxPageValues, and that each
// compressed page decompresses within pqMaxPageBytes: parquet-go trusts all of these.
func pqCheckPages(chunk []byte, name string, codec format.CompressionCodec) error {
	var scratch []byte
	for pos := 0; pos < len(chunk); {
		n, err := pqCheckThrift(chunk[pos:])
		if err != nil {
			return pqCorruptf("column %s: page header at %d: %v", name, pos, err)
		}
		var h format.PageHeader
		err = pqProtect(func() error { return thrift.Unmarshal(new(thrift.CompactProtocol), chunk[pos:pos+n], &h) })
		if err != nil {
			return pqCorruptf("column %s: page header at %d: %v", name, pos, err)
		}
		pos += n
		values, levels, compressed := int64(0), int64(0), true
		switch {
		case h.DataPageHeader.Valid:
			values = int64(h.DataPageHeader.V.NumValues)
		case h.DataPageHeaderV2.Valid:
			// Version 2 pages keep their levels uncompressed, before the values.
			v := &h.DataPageHeaderV2.V
			values = max(int64(v.NumValues), int64(v.NumRows), int64(v.NumNulls))
			if v.RepetitionLevelsByteLength < 0 || v.DefinitionLevelsByteLength < 0 {
				return pqCorruptf("column %s: negative level lengths", name)
			}
			levels = int64(v.RepetitionLevelsByteLength) + int64(v.DefinitionLevelsByteLength)
			compressed = !v.IsCompressed.Valid || v.IsCompressed.V
		case h.DictionaryPageHeader.Valid:
			values = int64(h.DictionaryPageHeader.V.NumValues)
		default:
			compressed = false // index pages and unknown kinds are skipped by parquet-go
		}
		switch {
		case h.CompressedPageSize < 0 || int(h.CompressedPageSize) > len(chunk)-pos:
			return pqCorruptf("column %s: page of %d bytes overruns its chunk", name, h.CompressedPageSize)
		case h.UncompressedPageSize < 0 || h.UncompressedPageSize > pqMaxPageBytes:
			return pqCorruptf("column %s: page claims %d bytes uncompressed", name, h.UncompressedPageSize)
		case values < 0 || values > pqMaxPageValues:
			return pqCorruptf("column %s: page claims %d values", name, values)
		case levels > int64(h.CompressedPageSize):
			return pqCorruptf("column %s: page levels overrun the page", name)
		}
		page := chunk[pos+int(levels) : pos+int(h.CompressedPageSize)]
		if compressed {
			if scratch, err = pqCheckCompressed(codec, page, int(h.UncompressedPageSize), scratch); err != nil {
				return pqCorruptf("column %s: compressed page: %v", name, err)
			}
		}
		pos += int(h.CompressedPageSize)
	}
	return nil
}

// pqZstd decodes zstd pages with a bound on their decoded size.
var pqZstd = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(pqMaxPageBytes))
})

// pqCheckCompressed checks that parquet-go's decoder for codec will decode data in bounded
// memory. Snappy (what Spark writes by default) only needs its length header checked. The
// others are decoded here with a bound, since parquet-go's decoders read gzip and brotli
// streams to their end, trust zstd's frame size and retry LZ4 with ever larger buffers on any
// error: damaged data could exhaust memory. scratch is reused between calls.
func pqCheckCompressed(codec format.CompressionCodec, data []byte, uncompressed int, scratch []byte) ([]byte, error) {
	switch codec {
	case format.Snappy:
		// A bad header fails in parquet-go; only a length too large to allocate matters.
		if n, k := binary.Uvarint(data); k > 0 && n > pqMaxPageBytes {
			return scratch, fmt.Errorf("snappy block claims %d bytes", n)
		}
	case format.Lz4Raw:
		if cap(scratch) < uncompressed {
			scratch = make([]byte, uncompressed)
		}
		if _, err := lz4.UncompressBlock(data, scratch[:uncompressed]); err != nil {
			return scratch, fmt.Errorf("lz4: %w", err)
		}
	case format.Zstd:
		d, err := pqZstd()
		if err != nil {
			return scratch, err
		}
		scratch, err = d.DecodeAll(data, scratch[:0])
		return scratch, err
	case format.Gzip, format.Brotli:
		var r io.Reader
		if codec == format.Gzip {
			z, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				return scratch, err
			}
			r = z
		} else {
			r = brotli.NewReader(bytes.NewReader(data))
		}
		n, err := io.Copy(io.Discard, io.LimitReader(r, pqMaxPageBytes+1))
		if err != nil {
			return scratch, err
		}
		if n > pqMaxPageBytes {
			return scratch, fmt.Errorf("page decompresses to more than %d bytes", pqMaxPageBytes)
		}
	}
	return scratch, nil
}

// pqCheckThrift walks one thrift compact-protocol struct at the start of b and returns its
// length. parquet-go's thrift decoder allocates as many elements as a list header claims
// before reading them, so a damaged length could make it allocate gigabytes and crash the
// process; every element takes at least one byte, so a list longer than the bytes left is
// refused here. Nesting is bounded too.
func pqCheckThrift(b []byte) (int, error) {
	w := pqThriftWalker{b: b}
	if err := w.structure(0); err != nil {
		return 0, err
	}
	return w.pos, nil
}

type pqThriftWalker struct {
	b   []byte
	pos int
}

var errPQThrift = errors.New("malformed thrift")

func (w *pqThriftWalker) byte() (byte, error) {
	if w.pos >= len(w.b) {
		return 0, io.ErrUnexpectedEOF
	}
	w.pos++
	return w.b[w.pos-1], nil
}

func (w *pqThriftWalker) uvarint() (uint64, error) {
	v, n := binary.Uvarint(w.b[w.pos:])
	if n <= 0 {
		return 0, errPQThrift
	}
	w.pos += n
	return v, nil
}

func (w *pqThriftWalker) skip(n uint64) error {
	if n > uint64(len(w.b)-w.pos) {
		return io.ErrUnexpectedEOF
	}
	w.pos += int(n)
	return nil
}

func (w *pqThriftWalker) structure(depth int) error {
	if depth > 32 {
		return fmt.Errorf("%w: nested too deep", errPQThrift)
	}
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		if h == 0 {
			return nil // stop field
		}
		if h>>4 == 0 { // long form: the field id follows
			if _, err := w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.value(h&0x0f, depth, true); err != nil {
			return err
		}
	}
}

// value skips one value of compact type t; booleans take no byte as fields, one in lists.
func (w *pqThriftWalker) value(t byte, depth int, field bool) error {
	switch t {
	case 1, 2: // true, false
		if field {
			return nil
		}
		return w.skip(1)
	case 3: // byte
		return w.skip(1)
	case 4, 5, 6: // i16, i32, i64
		_, err := w.uvarint()
		return err
	case 7: // double
		return w.skip(8)
	case 8: // binary
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		return w.skip(n)
	case 9, 10: // list, set
		h, err := w.byte()
		if err != nil {
			return err
		}
		n := uint64(h >> 4)
		if n == 15 {
			if n, err = w.uvarint(); err != nil {
				return err
			}
		}
		if n > uint64(len(w.b)-w.pos) {
			return fmt.Errorf("%w: list of %d elements in %d bytes", errPQThrift, n, len(w.b)-w.pos)
		}
		for range n {
			if err := w.value(h&0x0f, depth+1, false); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		n, err := w.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		if n > uint64(len(w.b)-w.pos)/2 {
			return fmt.Errorf("%w: map of %d entries in %d bytes", errPQThrift, n, len(w.b)-w.pos)
		}
		for range n {
			if err := w.value(kv>>4, depth+1, false); err != nil {
				return err
			}
			if err := w.value(kv&0x0f, depth+1, false); err != nil {
				return err
			}
		}
		return nil
	case 12: // struct
		return w.structure(depth + 1)
	case 13: // uuid
		return w.skip(16)
	}
	return fmt.Errorf("%w: unknown type %d", errPQThrift, t)
}

// pqProtect runs fn and turns a panic into an error. parquet-go panics on some malformed inputs
// (unknown encodings, inconsistent schemas); it is only ever used around parquet-go calls, so
// that panics in our own code or in callbacks still crash loudly.
func pqProtect(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("parquet-go panic: %v", p)
		}
	}()
	return fn()
}

// pqPlan is the projection of one file: the column groups to read and a cursor per
// leaf column.
type pqPlan struct {
	want        Kinds
	add, remove *pqFileReader
	generic     []*pqGroupReader
	cursors     []*pqCursor
	numLeaves   int

	// missing names the add or remove column that a file read for its file actions lacks.
	// Only a V2 checkpoint that lists sidecars may lack them; its rows are counted to tell.
	missing                      []string
	sidecars, checkpointMetadata int
}

// newPQPlan plans the columns of f to read for the kinds in want. Every column read is
// checked, by exact name and type, before any row is: parquet-go's Column matches names
// exactly, as the protocol does (Add is not add), and a column of the wrong type or a
// duplicate name is ErrCorrupt.
//
// A file read for add or remove actions must have both columns: a classic checkpoint, a part
// of a multi-part one or a sidecar without them is corrupt, not a table without live files
// (a missing remove column would lose the tombstones inside the retention, which protect
// files). The one exception is the protocol's: a V2 checkpoint may keep every file action in
// sidecar files ("either all … embedded inside itself or all of them should be in sidecar
// files", PROTOCOL.md, V2 Spec), and then need not have the columns. Such a file must have
// checkpointMetadata and sidecar columns, hold its checkpointMetadata action (every V2
// checkpoint has exactly one) and list at least one sidecar, the last two checked as its rows
// are read; otherwise its file actions would be nowhere. A sidecar or a part of a multi-part
// checkpoint (the caller knows, and sets kindFilesHere) gets no such exception.
// Every V2 checkpoint in the fixtures (Spark, Databricks, delta-kernel-rs) has the add and
// remove columns anyway.
func newPQPlan(f *parquet.File, want Kinds) (*pqPlan, error) {
	p := &pqPlan{want: want, numLeaves: len(f.Schema().Columns())}
	root := f.Root()
	if err := pqCheckNames(root, "the schema"); err != nil {
		return nil, err
	}
	for _, g := range []struct {
		name string
		kind Kinds
	}{{"add", KindAdd}, {"remove", KindRemove}} {
		if want&g.kind == 0 {
			continue
		}
		col, err := pqChild(root, g.name, "the schema")
		if err != nil {
			return nil, err
		}
		if col == nil {
			if want&kindFilesHere != 0 || root.Column("checkpointMetadata") == nil || root.Column("sidecar") == nil {
				return nil, pqCorruptf("the file has no %s column: a checkpoint or sidecar read for its file actions must have one", g.name)
			}
			p.missing = append(p.missing, g.name)
			continue
		}
		r, err := p.fileReader(col, g.kind)
		if err != nil {
			return nil, err
		}
		if g.kind == KindAdd {
			p.add = r
		} else {
			p.remove = r
		}
	}
	for _, g := range []struct {
		name string
		kind Kinds
	}{
		{"metaData", KindMetadata},
		{"protocol", KindProtocol},
		{"sidecar", KindSidecar},
		{"checkpointMetadata", KindCheckpointMetadata},
	} {
		if want&g.kind == 0 && (len(p.missing) == 0 || g.kind&(KindSidecar|KindCheckpointMetadata) == 0) {
			continue
		}
		col, err := pqChild(root, g.name, "the schema")
		if err != nil {
			return nil, err
		}
		if col == nil {
			continue
		}
		r, err := p.genericReader(col, g.kind)
		if err != nil {
			return nil, err
		}
		p.generic = append(p.generic, r)
	}
	return p, nil
}

// pqCheckNames checks that no two children of group g have names equal but for case: an
// exact duplicate would let parquet-go's Column pick one of them arbitrarily, and names that
// differ only in case are read as one column by case-insensitive readers (Spark's default),
// so the file means different things to different engines. Only the groups this program reads
// are checked (the top level, the file-action groups, the deletion vectors and the generic
// groups it rebuilds), never the table's own columns in stats_parsed or
// partitionValues_parsed, which a case-sensitive table may legitimately spell so. A name
// that is not valid UTF-8 is corrupt too.
func pqCheckNames(g *parquet.Column, what string) error {
	children := g.Columns()
	for i, c := range children {
		if !utf8.ValidString(c.Name()) {
			return pqCorruptf("%s has a column named %q, which is not valid UTF-8", what, c.Name())
		}
		for _, d := range children[i+1:] {
			if strings.EqualFold(c.Name(), d.Name()) {
				if c.Name() == d.Name() {
					return pqCorruptf("%s has two columns named %s", what, c.Name())
				}
				return pqCorruptf("%s has columns %s and %s, whose names differ only in case", what, c.Name(), d.Name())
			}
		}
	}
	return nil
}

// pqChild returns the child of group g named exactly name, nil when there is none. A child
// whose name is name in another case (Add for add, DeletionVector for deletionVector) is
// ErrCorrupt rather than absent: names are case-sensitive, so it is not the column wanted,
// yet a case-insensitive reader would take it for that column; the file cannot be read one
// way with confidence. what names g in messages.
func pqChild(g *parquet.Column, name, what string) (*parquet.Column, error) {
	if c := g.Column(name); c != nil {
		return c, nil
	}
	for _, c := range g.Columns() {
		if strings.EqualFold(c.Name(), name) {
			return nil, pqCorruptf("%s has a column %s but none named %s: column names are case-sensitive", what, c.Name(), name)
		}
	}
	return nil, nil
}

// pqActionGroup checks that col, a top-level action column, is an optional group: a row holds
// one action, so every action column must be null in the rows of the others.
func pqActionGroup(col *parquet.Column) error {
	if col.Leaf() || !col.Optional() {
		return pqCorruptf("column %s is not an optional group", col.Name())
	}
	return nil
}

func (p *pqPlan) cursor(col *parquet.Column, name string, kinds ...parquet.Kind) (*pqCursor, error) {
	if col == nil {
		return nil, nil
	}
	if !col.Leaf() {
		return nil, pqCorruptf("column %s is a group, want a value", name)
	}
	if col.MaxRepetitionLevel() != 0 {
		return nil, pqCorruptf("column %s is repeated", name)
	}
	kind, err := pqLeafKind(col, name)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(kinds, kind) {
		return nil, pqCorruptf("column %s has type %v, want %v", name, kind, kinds[0])
	}
	if kind == parquet.ByteArray && !pqIsString(col.Type()) {
		return nil, pqCorruptf("column %s is annotated as %v, want a string", name, col.Type())
	}
	c := newPQCursor(col, name, kind)
	p.cursors = append(p.cursors, c)
	return c, nil
}

// pqIsString reports whether a BYTE_ARRAY column holds strings: annotated as one, or plain
// binary (which the values' UTF-8 check then guards), not a decimal or BSON.
func pqIsString(t parquet.Type) bool {
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		switch lt.Value.(type) {
		case *format.StringType, *format.EnumType, *format.JsonType:
			return true
		}
		return false
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.UTF8, deprecated.Enum, deprecated.Json:
			return true
		}
		return false
	}
	return true
}

// fileReader plans the columns of an add or remove group.
func (p *pqPlan) fileReader(g *parquet.Column, kind Kinds) (*pqFileReader, error) {
	if err := pqActionGroup(g); err != nil {
		return nil, err
	}
	name := g.Name()
	if err := pqCheckNames(g, "column group "+name); err != nil {
		return nil, err
	}
	r := &pqFileReader{kind: kind, def: byte(g.MaxDefinitionLevel())}
	var err error
	leaf := func(field string, kinds ...parquet.Kind) *pqCursor {
		if err != nil {
			return nil
		}
		var col *parquet.Column
		if col, err = pqChild(g, field, "column group "+name); err != nil {
			return nil
		}
		var c *pqCursor
		c, err = p.cursor(col, name+"."+field, kinds...)
		return c
	}
	ints := []parquet.Kind{parquet.Int64, parquet.Int32}
	r.path = leaf("path", parquet.ByteArray)
	r.size = leaf("size", ints...)
	r.dataChange = leaf("dataChange", parquet.Boolean)
	if kind == KindAdd {
		r.modificationTime = leaf("modificationTime", ints...)
	} else {
		r.deletionTimestamp = leaf("deletionTimestamp", ints...)
	}
	if err != nil {
		return nil, err
	}
	if r.path == nil {
		return nil, pqCorruptf("column group %s has no path column", name)
	}
	dv, err := pqChild(g, "deletionVector", "column group "+name)
	if err != nil {
		return nil, err
	}
	if dv == nil && p.want&kindDVRequired != 0 {
		// Read without the column, every deletion vector of the table would look absent and
		// its file unreferenced.
		return nil, pqCorruptf("column group %s has no deletionVector column, but the checkpoint's protocol has the deletionVectors feature", name)
	}
	if dv != nil {
		if dv.Leaf() || dv.Repeated() {
			return nil, pqCorruptf("column %s.deletionVector is not a group", name)
		}
		name := name + ".deletionVector"
		if err := pqCheckNames(dv, "column group "+name); err != nil {
			return nil, err
		}
		d := &pqDVReader{def: byte(dv.MaxDefinitionLevel())}
		leaf := func(field string, kinds ...parquet.Kind) *pqCursor {
			if err != nil {
				return nil
			}
			var col *parquet.Column
			if col, err = pqChild(dv, field, "column group "+name); err != nil {
				return nil
			}
			var c *pqCursor
			c, err = p.cursor(col, name+"."+field, kinds...)
			return c
		}
		d.storageType = leaf("storageType", parquet.ByteArray)
		d.pathOrInlineDv = leaf("pathOrInlineDv", parquet.ByteArray)
		d.offset = leaf("offset", parquet.Int32, parquet.Int64)
		d.sizeInBytes = leaf("sizeInBytes", parquet.Int32, parquet.Int64)
		d.cardinality = leaf("cardinality", ints...)
		if err != nil {
			return nil, err
		}
		// Without these two a deletion vector cannot be located; ignoring it could let VACUUM
		// delete a file a live add still needs.
		if d.storageType == nil || d.pathOrInlineDv == nil {
			return nil, pqCorruptf("column group %s lacks storageType or pathOrInlineDv", name)
		}
		r.dv = d
	}
	return r, nil
}

// genericReader plans every leaf column of group g.
func (p *pqPlan) genericReader(g *parquet.Column, kind Kinds) (*pqGroupReader, error) {
	if err := pqActionGroup(g); err != nil {
		return nil, err
	}
	r := &pqGroupReader{kind: kind}
	var build func(c *parquet.Column, path string) (*pqNode, error)
	build = func(c *parquet.Column, path string) (*pqNode, error) {
		n := &pqNode{
			name:     c.Name(),
			def:      byte(c.MaxDefinitionLevel()),
			rep:      byte(c.MaxRepetitionLevel()),
			repeated: c.Repeated(),
			leafLo:   len(r.leaves),
		}
		if c.Leaf() {
			n.leaf = true
			kind, err := pqLeafKind(c, path)
			if err != nil {
				return nil, err
			}
			lc := newPQCursor(c, path, kind)
			r.encs = append(r.encs, pqJSONEncFor(c.Type(), kind))
			r.leaves = append(r.leaves, lc)
			p.cursors = append(p.cursors, lc)
		} else {
			if err := pqCheckNames(c, "column group "+path); err != nil {
				return nil, err
			}
			n.isMap, n.isList = pqGroupAnnotation(c.Type())
			for _, child := range c.Columns() {
				cn, err := build(child, path+"."+child.Name())
				if err != nil {
					return nil, err
				}
				n.children = append(n.children, cn)
			}
			if len(n.children) == 0 {
				return nil, pqCorruptf("column group %s is empty", path)
			}
			if n.isMap || n.isList {
				// Both annotations wrap exactly one repeated group (or value, for legacy lists).
				if len(n.children) != 1 || !n.children[0].repeated {
					n.isMap, n.isList = false, false
				} else if n.isMap && n.children[0].leaf {
					n.isMap = false
				}
			}
		}
		n.leafHi = len(r.leaves)
		return n, nil
	}
	root, err := build(g, g.Name())
	if err != nil {
		return nil, err
	}
	r.root = root
	r.rows = make([][]pqEntry, len(r.leaves))
	return r, nil
}

func pqGroupAnnotation(t parquet.Type) (isMap, isList bool) {
	if lt := t.LogicalType(); lt != nil {
		switch lt.Value.(type) {
		case *format.MapType:
			return true, false
		case *format.ListType:
			return false, true
		}
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.Map, deprecated.MapKeyValue:
			return true, false
		case deprecated.List:
			return false, true
		}
	}
	return false, false
}

// readRowGroup reads the rows of one row group in lockstep across all planned columns.
func (p *pqPlan) readRowGroup(ctx context.Context, src *pqSource, f *parquet.File, index int, rg parquet.RowGroup, fn func(*Action) error) error {
	chunks := rg.ColumnChunks()
	if len(chunks) != p.numLeaves || len(f.Metadata().RowGroups[index].Columns) != p.numLeaves {
		return pqCorruptf("row group %d has %d column chunks, the schema %d columns", index, len(chunks), p.numLeaves)
	}
	if err := src.loadChunks(&f.Metadata().RowGroups[index], p.cursors); err != nil {
		return err
	}
	defer src.drop()
	for _, c := range p.cursors {
		if err := c.open(ctx, src, chunks[c.index]); err != nil {
			return err
		}
	}
	defer func() {
		for _, c := range p.cursors {
			c.close()
		}
	}()
	numRows := rg.NumRows()
	for row := range numRows {
		var act *Action
		found := 0
		if p.add != nil {
			a, err := p.add.readRow()
			if err != nil {
				return err
			}
			if a != nil {
				act = a
				found++
			}
		}
		if p.remove != nil {
			a, err := p.remove.readRow()
			if err != nil {
				return err
			}
			if a != nil {
				act = a
				found++
			}
		}
		for _, r := range p.generic {
			a, err := r.readRow()
			if err != nil {
				return err
			}
			if a != nil {
				act = a
				found++
			}
		}
		if found > 1 {
			return pqCorruptf("row %d of row group %d holds %d actions", row, index, found)
		}
		if act != nil && act.Sidecar != nil {
			p.sidecars++
		}
		if act != nil && act.CheckpointMetadata != nil {
			p.checkpointMetadata++
		}
		if act != nil && act.kind()&p.want != 0 {
			if err := fn(act); err != nil {
				return err
			}
		}
	}
	// Every column must end with the row group; extra values mean the levels are inconsistent.
	for _, c := range p.cursors {
		more, err := c.more()
		if err != nil {
			return err
		}
		if more {
			return pqCorruptf("column %s has more values than the %d rows of row group %d", c.name, numRows, index)
		}
	}
	return nil
}

// pqFileReader decodes add or remove actions from their projected columns.
type pqFileReader struct {
	kind Kinds
	def  byte // definition level at which the action group is present

	path, size, dataChange              *pqCursor
	modificationTime, deletionTimestamp *pqCursor
	dv                                  *pqDVReader
}

type pqDVReader struct {
	def                                                           byte
	storageType, pathOrInlineDv, offset, sizeInBytes, cardinality *pqCursor
}

// Actions are allocated together with their payload: one allocation per row instead of two
// or three, which matters with millions of rows.
type pqAddAlloc struct {
	act Action
	add Add
}

type pqRemoveAlloc struct {
	act    Action
	remove Remove
	ts     int64
	size   int64
}

type pqDVAlloc struct {
	dv     DeletionVector
	offset int32
}

// readRow advances every column of the group by one row and returns the row's action, or nil
// when the row holds another action.
func (r *pqFileReader) readRow() (*Action, error) {
	def, err := r.path.next()
	if err != nil {
		return nil, err
	}
	if def < r.def {
		r.skipRest()
		return nil, nil
	}
	if def < r.path.maxDef {
		// The group is there but its path is null: the action names no file.
		return nil, pqCorruptf("column %s: a %s action has no path", r.path.name, r.kindName())
	}
	path, err := r.path.string()
	if err != nil {
		return nil, err
	}
	var dv *DeletionVector
	if r.dv != nil {
		if dv, err = r.dv.readRow(); err != nil {
			return nil, err
		}
	}
	dataChange, _, err := r.dataChange.bool()
	if err != nil {
		return nil, err
	}
	size, hasSize, err := r.size.int64()
	if err != nil {
		return nil, err
	}
	if r.kind == KindAdd {
		mtime, _, err := r.modificationTime.int64()
		if err != nil {
			return nil, err
		}
		a := &pqAddAlloc{add: Add{
			Path:             path,
			Size:             size,
			ModificationTime: mtime,
			DataChange:       dataChange,
			DeletionVector:   dv,
		}}
		a.act.Add = &a.add
		return &a.act, nil
	}
	ts, hasTS, err := r.deletionTimestamp.int64()
	if err != nil {
		return nil, err
	}
	a := &pqRemoveAlloc{remove: Remove{
		Path:           path,
		DataChange:     dataChange,
		DeletionVector: dv,
	}, ts: ts, size: size}
	if hasTS {
		a.remove.DeletionTimestamp = &a.ts
	}
	if hasSize {
		a.remove.Size = &a.size
	}
	a.act.Remove = &a.remove
	return &a.act, nil
}

func (r *pqFileReader) kindName() string {
	if r.kind == KindAdd {
		return "add"
	}
	return "remove"
}

// skipRest advances the group's other columns past a row in which the group is null.
func (r *pqFileReader) skipRest() {
	r.size.skip()
	r.dataChange.skip()
	r.modificationTime.skip()
	r.deletionTimestamp.skip()
	if r.dv != nil {
		r.dv.skip()
	}
}

func (d *pqDVReader) readRow() (*DeletionVector, error) {
	def, err := d.storageType.next()
	if err != nil {
		return nil, err
	}
	if def < d.def {
		d.pathOrInlineDv.skip()
		d.offset.skip()
		d.sizeInBytes.skip()
		d.cardinality.skip()
		return nil, nil
	}
	a := &pqDVAlloc{}
	if def < d.storageType.maxDef {
		// Without a storage type the vector cannot be located; guessing could let VACUUM
		// delete the file a live add reads its deleted rows from.
		return nil, pqCorruptf("column %s: a deletion vector has no storage type", d.storageType.name)
	}
	if a.dv.StorageType, err = d.storageType.string(); err != nil {
		return nil, err
	}
	if def, err = d.pathOrInlineDv.next(); err != nil {
		return nil, err
	}
	if def == d.pathOrInlineDv.maxDef {
		if a.dv.PathOrInlineDv, err = d.pathOrInlineDv.string(); err != nil {
			return nil, err
		}
	}
	off, hasOff, err := d.offset.int64()
	if err != nil {
		return nil, err
	}
	if hasOff {
		if off < math.MinInt32 || off > math.MaxInt32 {
			return nil, pqCorruptf("column %s: offset %d out of range", d.offset.name, off)
		}
		a.offset = int32(off)
		a.dv.Offset = &a.offset
	}
	size, _, err := d.sizeInBytes.int64()
	if err != nil {
		return nil, err
	}
	if size < math.MinInt32 || size > math.MaxInt32 {
		return nil, pqCorruptf("column %s: size %d out of range", d.sizeInBytes.name, size)
	}
	a.dv.SizeInBytes = int32(size)
	if a.dv.Cardinality, _, err = d.cardinality.int64(); err != nil {
		return nil, err
	}
	return &a.dv, nil
}

func (d *pqDVReader) skip() {
	d.storageType.skip()
	d.pathOrInlineDv.skip()
	d.offset.skip()
	d.sizeInBytes.skip()
	d.cardinality.skip()
}

// pqGroupReader rebuilds a whole column group (metaData, protocol, sidecar,
// checkpointMetadata) as the JSON object the action would be in a commit file, then decodes
// the action from it. Going through JSON keeps every field of the group, known or not, for
// Metadata.Raw, and makes a checkpoint row decode exactly like the same action in a commit.
type pqGroupReader struct {
	kind   Kinds
	root   *pqNode
	leaves []*pqCursor
	encs   []pqJSONEnc // per leaf
	rows   [][]pqEntry // per leaf, the entries of the current row
	vals   []byte      // JSON of the defined values of the current row
	out    []byte
}

// pqNode is one node of the schema tree of a generic group.
type pqNode struct {
	name          string
	def, rep      byte // maximum levels of the node
	repeated      bool
	leaf          bool
	isMap, isList bool
	children      []*pqNode
	// leafLo and leafHi delimit the node's leaves in pqGroupReader.leaves.
	leafLo, leafHi int
}

// pqEntry is one value slot of a leaf: its levels and, when defined, its JSON text in
// pqGroupReader.vals.
type pqEntry struct {
	rep, def byte
	lo, hi   int32
}

func (r *pqGroupReader) readRow() (*Action, error) {
	// The group is null in most rows, those of other actions; each of its columns then holds
	// a single null entry, which is skipped in bulk.
	first := r.leaves[0]
	def, err := first.next()
	if err != nil {
		return nil, err
	}
	if def < r.root.def {
		if first.rep != 0 {
			return nil, pqCorruptf("column %s: row starts with repetition level %d", first.name, first.rep)
		}
		for _, c := range r.leaves[1:] {
			c.skip()
		}
		return nil, nil
	}
	r.vals = r.vals[:0]
	for i, c := range r.leaves {
		if i > 0 {
			if def, err = c.next(); err != nil {
				return nil, err
			}
		}
		ents := r.rows[i][:0]
		for {
			e := pqEntry{rep: c.rep, def: def}
			if len(ents) == 0 && e.rep != 0 {
				return nil, pqCorruptf("column %s: row starts with repetition level %d", c.name, e.rep)
			}
			if def == c.maxDef {
				lo := len(r.vals)
				if r.vals, err = c.appendJSON(r.vals, r.encs[i]); err != nil {
					return nil, err
				}
				e.lo, e.hi = int32(lo), int32(len(r.vals))
			}
			ents = append(ents, e)
			if c.maxRep == 0 {
				break
			}
			rep, ok, err := c.peekRep()
			if err != nil {
				return nil, err
			}
			if !ok || rep == 0 {
				break
			}
			if def, err = c.next(); err != nil {
				return nil, err
			}
		}
		r.rows[i] = ents
	}
	spans := make([]pqSpan, len(r.leaves))
	for i := range spans {
		spans[i] = pqSpan{0, len(r.rows[i])}
	}
	out, _, err := r.appendNode(r.out[:0], r.root, spans)
	if err != nil {
		return nil, err
	}
	r.out = out
	act := &Action{}
	var target any
	switch r.kind {
	case KindMetadata:
		act.Metadata = &Metadata{}
		target = act.Metadata
	case KindProtocol:
		act.Protocol = &Protocol{}
		target = act.Protocol
	case KindSidecar:
		act.Sidecar = &Sidecar{}
		target = act.Sidecar
	case KindCheckpointMetadata:
		act.CheckpointMetadata = &CheckpointMetadata{}
		target = act.CheckpointMetadata
	}
	if err := unmarshalStrict(out, target); err != nil {
		return nil, pqCorruptf("column group %s: %v", r.root.name, err)
	}
	if err := act.validate(); err != nil {
		return nil, pqCorruptf("column group %s: %v", r.root.name, err)
	}
	return act, nil
}

// pqSpan delimits the entries of one leaf that belong to one instance of a node.
type pqSpan struct{ lo, hi int }

// appendNode appends the JSON of one instance of n (for a repeated n: one element) whose
// entries are spans; it reports false, appending nothing, when the instance is null.
func (r *pqGroupReader) appendNode(b []byte, n *pqNode, spans []pqSpan) ([]byte, bool, error) {
	first := r.rows[n.leafLo][spans[n.leafLo].lo]
	if first.def < n.def {
		return b, false, nil
	}
	switch {
	case n.leaf:
		return append(b, r.vals[first.lo:first.hi]...), true, nil
	case n.isList:
		rep := n.children[0]
		elem := rep
		// The standard three-level list wraps each element in a one-field group; the legacy
		// two-level forms use the repeated group itself as the element.
		if !rep.leaf && len(rep.children) == 1 && rep.name != "array" && rep.name != n.name+"_tuple" {
			elem = rep.children[0]
		}
		elems, err := r.split(rep, spans)
		if err != nil {
			return nil, false, err
		}
		b = append(b, '[')
		for i, e := range elems {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok, err = r.appendNode(b, elem, e); err != nil {
				return nil, false, err
			}
			if !ok {
				b = append(b, "null"...)
			}
		}
		return append(b, ']'), true, nil
	case n.isMap:
		kv := n.children[0]
		elems, err := r.split(kv, spans)
		if err != nil {
			return nil, false, err
		}
		b = append(b, '{')
		for i, e := range elems {
			if i > 0 {
				b = append(b, ',')
			}
			start := len(b)
			var ok bool
			if b, ok, err = r.appendNode(b, kv.children[0], e); err != nil {
				return nil, false, err
			}
			if !ok {
				b = append(b, `""`...)
			} else if b[start] != '"' {
				// JSON object keys are strings; quote a non-string key's text.
				key := string(b[start:])
				if b, err = jsontext.AppendQuote(b[:start], key); err != nil {
					return nil, false, pqCorruptf("column %s: map key: %v", n.name, err)
				}
			}
			b = append(b, ':')
			ok = false
			if len(kv.children) > 1 {
				if b, ok, err = r.appendNode(b, kv.children[1], e); err != nil {
					return nil, false, err
				}
			}
			if !ok {
				b = append(b, "null"...)
			}
		}
		return append(b, '}'), true, nil
	}
	b = append(b, '{')
	empty := true
	for _, c := range n.children {
		start := len(b)
		if !empty {
			b = append(b, ',')
		}
		// Names were checked for valid UTF-8 when the group was planned.
		b, _ = jsontext.AppendQuote(b, c.name)
		b = append(b, ':')
		var ok bool
		var err error
		if c.repeated {
			b, ok, err = r.appendRepeated(b, c, spans)
		} else {
			b, ok, err = r.appendNode(b, c, spans)
		}
		if err != nil {
			return nil, false, err
		}
		if !ok {
			// Spark leaves null fields out of the JSON of an action.
			b = b[:start]
			continue
		}
		empty = false
	}
	return append(b, '}'), true, nil
}

// appendRepeated appends a repeated field without LIST annotation as a JSON array.
func (r *pqGroupReader) appendRepeated(b []byte, n *pqNode, spans []pqSpan) ([]byte, bool, error) {
	elems, err := r.split(n, spans)
	if err != nil {
		return nil, false, err
	}
	b = append(b, '[')
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok, err = r.appendNode(b, n, e); err != nil {
			return nil, false, err
		}
		if !ok {
			b = append(b, "null"...)
		}
	}
	return append(b, ']'), true, nil
}

// split divides the entries of the repeated node n into its elements. An entry whose
// repetition level is n's own starts a new element; deeper levels continue the current one.
func (r *pqGroupReader) split(n *pqNode, spans []pqSpan) ([][]pqSpan, error) {
	first := r.rows[n.leafLo][spans[n.leafLo].lo]
	if first.def < n.def {
		return nil, nil // present but empty
	}
	var elems [][]pqSpan
	for leaf := n.leafLo; leaf < n.leafHi; leaf++ {
		ents := r.rows[leaf]
		sp := spans[leaf]
		k := 0
		start := sp.lo
		for i := sp.lo; i <= sp.hi; i++ {
			if i < sp.hi && (i == sp.lo || ents[i].rep > n.rep) {
				continue
			}
			if i < sp.hi && ents[i].rep < n.rep {
				return nil, pqCorruptf("column %s: repetition level %d inside a repeated field of level %d", r.leaves[leaf].name, ents[i].rep, n.rep)
			}
			if leaf == n.leafLo {
				e := make([]pqSpan, len(spans))
				copy(e, spans)
				elems = append(elems, e)
			} else if k >= len(elems) {
				return nil, pqCorruptf("column %s: inconsistent repetition levels", r.leaves[leaf].name)
			}
			elems[k][leaf] = pqSpan{start, i}
			k++
			start = i
		}
		if k != len(elems) {
			return nil, pqCorruptf("column %s: inconsistent repetition levels", r.leaves[leaf].name)
		}
	}
	return elems, nil
}

// pqJSONEnc says how the values of a leaf become JSON.
type pqJSONEnc uint8

const (
	pqJSONString   pqJSONEnc = iota // strings: STRING, ENUM, JSON or unannotated BYTE_ARRAY
	pqJSONNumber                    // signed integers, floats
	pqJSONUnsigned                  // unsigned integers stored as INT32/INT64
	pqJSONBool
	pqJSONBase64 // fixed-length binary (UUID, DECIMAL): base64 like encoding/json does []byte
	pqJSONInt96  // legacy timestamps: the integer as a string
)

func pqJSONEncFor(t parquet.Type, kind parquet.Kind) pqJSONEnc {
	switch kind {
	case parquet.Boolean:
		return pqJSONBool
	case parquet.Int32, parquet.Int64:
		if lt := t.LogicalType(); lt != nil {
			if it, ok := lt.Value.(*format.IntType); ok && !it.IsSigned {
				return pqJSONUnsigned
			}
		}
		return pqJSONNumber
	case parquet.Float, parquet.Double:
		return pqJSONNumber
	case parquet.FixedLenByteArray:
		return pqJSONBase64
	case parquet.Int96:
		return pqJSONInt96
	}
	return pqJSONString
}

// pqCursor walks the values of one leaf column chunk, page by page.
type pqCursor struct {
	name           string
	index          int // leaf column index
	kind           parquet.Kind
	codec          format.CompressionCodec // as parquet-go applies it: the first row group's
	maxDef, maxRep byte

	ctx   context.Context
	src   *pqSource
	pages parquet.Pages
	page  parquet.Page
	done  bool // no more pages

	// levels of the current page; defs is nil when the column is required
	defs, reps []byte
	n, i       int // entries in the page, next entry
	nvals, vi  int // defined values in the page, next value
	cur        int // value index of the entry last returned by next
	rep        byte
	pending    int // entries skipped but not yet consumed

	// values of the current page, by kind; idx maps value positions to dictionary positions
	idx   []int32
	bits  []byte
	data  []byte
	offs  []uint32
	i32   []int32
	i64   []int64
	f32   []float32
	f64   []float64
	flen  int
	count int // number of values in the arrays above (dictionary size for indexed pages)
}

func newPQCursor(col *parquet.Column, name string, kind parquet.Kind) *pqCursor {
	c := &pqCursor{
		name:   name,
		index:  col.Index(),
		kind:   kind,
		maxDef: byte(col.MaxDefinitionLevel()),
		maxRep: byte(col.MaxRepetitionLevel()),
	}
	if codec := col.Compression(); codec != nil {
		c.codec = codec.CompressionCodec()
	}
	return c
}

// pqLeafKind returns the physical type of a leaf column; parquet-go panics for a leaf of a
// damaged schema that has none.
func pqLeafKind(col *parquet.Column, name string) (kind parquet.Kind, err error) {
	err = pqProtect(func() error {
		kind = col.Type().Kind()
		return nil
	})
	if err != nil {
		return 0, pqCorruptf("column %s has no physical type", name)
	}
	return kind, nil
}

func (c *pqCursor) open(ctx context.Context, src *pqSource, chunk parquet.ColumnChunk) error {
	c.close()
	c.ctx, c.src = ctx, src
	c.done = false
	c.n, c.i, c.pending = 0, 0, 0
	err := pqProtect(func() error {
		if chunk.Type().Kind() != c.kind {
			return fmt.Errorf("chunk type %v differs from the schema's %v", chunk.Type().Kind(), c.kind)
		}
		c.pages = chunk.Pages()
		return nil
	})
	if err != nil {
		return src.fail("opening column "+c.name, err)
	}
	return nil
}

func (c *pqCursor) close() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	if c.pages != nil {
		_ = pqProtect(c.pages.Close)
		c.pages = nil
	}
}

// load reads pages until one with entries; it returns false at the end of the chunk.
func (c *pqCursor) load() (bool, error) {
	for {
		if c.done {
			return false, nil
		}
		if c.page != nil {
			parquet.Release(c.page)
			c.page = nil
		}
		if err := c.ctx.Err(); err != nil {
			return false, err
		}
		var p parquet.Page
		err := pqProtect(func() error {
			var err error
			p, err = c.pages.ReadPage()
			return err
		})
		if err == io.EOF {
			c.done = true
			return false, nil
		}
		if err != nil {
			return false, c.src.fail("reading column "+c.name, err)
		}
		c.page = p
		if err := pqProtect(func() error { return c.setPage(p) }); err != nil {
			if errors.Is(err, ErrCorrupt) {
				return false, err
			}
			return false, c.src.fail("decoding column "+c.name, err)
		}
		if c.n > 0 {
			return true, nil
		}
	}
}

// setPage exposes the levels and values of p, checking that they agree with each other so
// that later accesses cannot go out of bounds.
func (c *pqCursor) setPage(p parquet.Page) error {
	c.i, c.vi = 0, 0
	c.idx, c.bits, c.data, c.offs, c.i32, c.i64, c.f32, c.f64 = nil, nil, nil, nil, nil, nil, nil, nil
	c.defs, c.reps = nil, nil
	defined := 0
	if c.maxDef > 0 {
		c.defs = p.DefinitionLevels()
		c.n = len(c.defs)
		for _, d := range c.defs {
			if d > c.maxDef {
				return pqCorruptf("column %s: definition level %d above maximum %d", c.name, d, c.maxDef)
			}
			if d == c.maxDef {
				defined++
			}
		}
	} else {
		c.n = int(p.NumValues())
		defined = c.n
	}
	if c.maxRep > 0 {
		c.reps = p.RepetitionLevels()
		if len(c.reps) != c.n {
			return pqCorruptf("column %s: %d repetition levels for %d definition levels", c.name, len(c.reps), c.n)
		}
		for _, r := range c.reps {
			if r > c.maxRep {
				return pqCorruptf("column %s: repetition level %d above maximum %d", c.name, r, c.maxRep)
			}
		}
	}
	c.nvals = defined
	vals := p.Data()
	if dict := p.Dictionary(); dict != nil {
		if vals.Kind() != encoding.Int32 {
			return pqCorruptf("column %s: dictionary indexes of type %v", c.name, vals.Kind())
		}
		c.idx = vals.Int32()
		if len(c.idx) < defined {
			return pqCorruptf("column %s: %d dictionary indexes for %d values", c.name, len(c.idx), defined)
		}
		if err := c.setValues(dict.Page().Data()); err != nil {
			return err
		}
		for _, x := range c.idx[:defined] {
			if x < 0 || int(x) >= c.count {
				return pqCorruptf("column %s: dictionary index %d out of %d", c.name, x, c.count)
			}
		}
		return nil
	}
	if err := c.setValues(vals); err != nil {
		return err
	}
	if c.count < defined {
		return pqCorruptf("column %s: %d values for %d defined entries", c.name, c.count, defined)
	}
	return nil
}

func (c *pqCursor) setValues(v encoding.Values) error {
	if v.Kind() != pqEncodingKind(c.kind) {
		return pqCorruptf("column %s: values of type %v, want %v", c.name, v.Kind(), c.kind)
	}
	switch c.kind {
	case parquet.Boolean:
		c.bits = v.Boolean()
		c.count = 8 * len(c.bits)
	case parquet.Int32:
		c.i32 = v.Int32()
		c.count = len(c.i32)
	case parquet.Int64:
		c.i64 = v.Int64()
		c.count = len(c.i64)
	case parquet.Float:
		c.f32 = v.Float()
		c.count = len(c.f32)
	case parquet.Double:
		c.f64 = v.Double()
		c.count = len(c.f64)
	case parquet.ByteArray:
		c.data, c.offs = v.ByteArray()
		c.count = max(len(c.offs)-1, 0)
		prev := uint32(0)
		for _, o := range c.offs {
			if o < prev || int(o) > len(c.data) {
				return pqCorruptf("column %s: bad value offsets", c.name)
			}
			prev = o
		}
	case parquet.FixedLenByteArray:
		c.data, c.flen = v.FixedLenByteArray()
		if c.flen <= 0 {
			return pqCorruptf("column %s: fixed-length values of length %d", c.name, c.flen)
		}
		c.count = len(c.data) / c.flen
	case parquet.Int96:
		c.data, _ = v.Data()
		c.flen = 12
		c.count = len(c.data) / 12
	default:
		return pqCorruptf("column %s: unsupported type %v", c.name, c.kind)
	}
	return nil
}

// next advances to the next entry and returns its definition level; when it equals maxDef
// the entry's value is available through the typed accessors.
func (c *pqCursor) next() (byte, error) {
	if c.i >= c.n || c.pending > 0 {
		if err := c.refill(true); err != nil {
			return 0, err
		}
	}
	def := c.maxDef
	if c.defs != nil {
		def = c.defs[c.i]
	}
	c.rep = 0
	if c.reps != nil {
		c.rep = c.reps[c.i]
	}
	c.i++
	if def == c.maxDef {
		if c.vi >= c.nvals {
			return 0, pqCorruptf("column %s: more defined entries than values", c.name)
		}
		c.cur = c.vi
		if c.idx != nil {
			c.cur = int(c.idx[c.vi])
		}
		c.vi++
	}
	return def, nil
}

// refill consumes the pending skipped entries and, if entry is set, makes sure that an entry
// is available.
func (c *pqCursor) refill(entry bool) error {
	for {
		if k := min(c.pending, c.n-c.i); k > 0 {
			// Skipped entries are normally all null; count any defined ones so that values
			// stay aligned with their entries even in an inconsistent file.
			if c.defs == nil {
				c.vi += k
			} else {
				c.vi += bytes.Count(c.defs[c.i:c.i+k], []byte{c.maxDef})
			}
			c.i += k
			c.pending -= k
		}
		if c.i < c.n || c.pending == 0 && !entry {
			return nil
		}
		ok, err := c.load()
		if err != nil {
			return err
		}
		if !ok {
			return pqCorruptf("column %s has fewer values than its row group has rows", c.name)
		}
	}
}

// skip advances past one entry of a column that may be absent (nil). The rows of one action
// are null in the columns of every other action; skipping them one by one is most of the work
// of reading a checkpoint, so skips are only counted here and consumed in bulk later.
func (c *pqCursor) skip() {
	if c != nil {
		c.pending++
	}
}

// peekRep returns the repetition level of the next entry without consuming it; ok is false at
// the end of the chunk.
func (c *pqCursor) peekRep() (rep byte, ok bool, err error) {
	if err := c.refill(false); err != nil {
		return 0, false, err
	}
	if c.i >= c.n {
		if ok, err := c.load(); !ok || err != nil {
			return 0, false, err
		}
	}
	if c.reps == nil {
		return 0, true, nil
	}
	return c.reps[c.i], true, nil
}

// more reports whether entries remain after the last row.
func (c *pqCursor) more() (bool, error) {
	if err := c.refill(false); err != nil {
		return false, err
	}
	if c.i < c.n {
		return true, nil
	}
	return c.load()
}

// string returns the current value of a BYTE_ARRAY column as a new string (the page's memory
// is reused once the page is released). A value that is not valid UTF-8 is ErrCorrupt: it is
// refused, never mended, since a mended path would name another file than the one written.
func (c *pqCursor) string() (string, error) {
	v := c.data[c.offs[c.cur]:c.offs[c.cur+1]]
	if !utf8.Valid(v) {
		return "", pqCorruptf("column %s: value %q is not valid UTF-8", c.name, v)
	}
	return string(v), nil
}

// int64 reads the next entry of an optional integer column; ok is false for null (and for
// an absent column, c == nil).
func (c *pqCursor) int64() (v int64, ok bool, err error) {
	if c == nil {
		return 0, false, nil
	}
	def, err := c.next()
	if err != nil || def != c.maxDef {
		return 0, false, err
	}
	if c.kind == parquet.Int32 {
		return int64(c.i32[c.cur]), true, nil
	}
	return c.i64[c.cur], true, nil
}

// bool reads the next entry of an optional boolean column.
func (c *pqCursor) bool() (v, ok bool, err error) {
	if c == nil {
		return false, false, nil
	}
	def, err := c.next()
	if err != nil || def != c.maxDef {
		return false, false, err
	}
	return c.bits[c.cur>>3]&(1<<(c.cur&7)) != 0, true, nil
}

// appendJSON appends the current value as JSON.
func (c *pqCursor) appendJSON(b []byte, enc pqJSONEnc) ([]byte, error) {
	k := c.cur
	switch c.kind {
	case parquet.Boolean:
		return strconv.AppendBool(b, c.bits[k>>3]&(1<<(k&7)) != 0), nil
	case parquet.Int32:
		if enc == pqJSONUnsigned {
			return strconv.AppendUint(b, uint64(uint32(c.i32[k])), 10), nil
		}
		return strconv.AppendInt(b, int64(c.i32[k]), 10), nil
	case parquet.Int64:
		if enc == pqJSONUnsigned {
			return strconv.AppendUint(b, uint64(c.i64[k]), 10), nil
		}
		return strconv.AppendInt(b, c.i64[k], 10), nil
	case parquet.Float:
		return pqAppendJSONFloat(b, float64(c.f32[k]), 32), nil
	case parquet.Double:
		return pqAppendJSONFloat(b, c.f64[k], 64), nil
	case parquet.ByteArray:
		// A string that is not valid UTF-8 is refused, never mended with U+FFFD: it would
		// then name another file, or another setting, than the one written.
		v := c.data[c.offs[k]:c.offs[k+1]]
		q, err := jsontext.AppendQuote(b, v)
		if err != nil {
			return nil, pqCorruptf("column %s: a value is not valid UTF-8", c.name)
		}
		return q, nil
	case parquet.FixedLenByteArray:
		v := c.data[k*c.flen : (k+1)*c.flen]
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v)
		return append(b, '"'), nil
	case parquet.Int96:
		var v deprecated.Int96
		for j := range v {
			v[j] = binary.LittleEndian.Uint32(c.data[12*k+4*j:])
		}
		return strconv.AppendQuote(b, v.String()), nil
	}
	return nil, pqCorruptf("column %s: unsupported type %v", c.name, c.kind)
}

// pqAppendJSONFloat appends f as a JSON number; JSON has no NaN or infinities, so those become
// strings as Spark's Jackson writes them.
func pqAppendJSONFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.AppendQuote(b, strconv.FormatFloat(f, 'g', -1, bits))
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

// pqEncodingKind maps a column kind to the kind of its decoded values.
func pqEncodingKind(k parquet.Kind) encoding.Kind {
	switch k {
	case parquet.Boolean:
		return encoding.Boolean
	case parquet.Int32:
		return encoding.Int32
	case parquet.Int64:
		return encoding.Int64
	case parquet.Int96:
		return encoding.Int96
	case parquet.Float:
		return encoding.Float
	case parquet.Double:
		return encoding.Double
	case parquet.ByteArray:
		return encoding.ByteArray
	case parquet.FixedLenByteArray:
		return encoding.FixedLenByteArray
	}
	return encoding.Undefined
}

package deltalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"

	"github.com/deltavacuum/deltavacuum/internal/parquetguard"
)

// pqCursor walks the values of one leaf column chunk, page by page.
type pqCursor struct {
	name           string
	index          int // leaf column index
	kind           parquet.Kind
	codec          format.CompressionCodec // as parquet-go applies it: the first row group's
	maxDef, maxRep byte

	src   *parquetguard.Source
	pages parquetguard.Pages
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
	err = parquetguard.Protect(func() error {
		kind = col.Type().Kind()
		return nil
	})
	if err != nil {
		return 0, pqCorruptf("column %s has no physical type", name)
	}
	return kind, nil
}

func (c *pqCursor) open(src *parquetguard.Source, chunk parquet.ColumnChunk) error {
	c.close()
	c.src = src
	c.done = false
	c.n, c.i, c.pending = 0, 0, 0
	err := parquetguard.Protect(func() error {
		if chunk.Type().Kind() != c.kind {
			return fmt.Errorf("chunk type %v differs from the schema's %v", chunk.Type().Kind(), c.kind)
		}
		return nil
	})
	if err == nil {
		err = c.pages.Open(chunk)
	}
	if err != nil {
		return pqFail(src, "opening column "+c.name, err)
	}
	return nil
}

func (c *pqCursor) close() { c.pages.Close() }

// load reads pages until one with entries; it returns false at the end of the chunk.
func (c *pqCursor) load() (bool, error) {
	for {
		if c.done {
			return false, nil
		}
		p, err := c.pages.Next()
		if err == io.EOF {
			c.done = true
			return false, nil
		}
		if err != nil {
			return false, pqFail(c.src, "reading column "+c.name, err)
		}
		if err := parquetguard.Protect(func() error { return c.setPage(p) }); err != nil {
			if errors.Is(err, ErrCorrupt) {
				return false, err
			}
			return false, pqFail(c.src, "decoding column "+c.name, err)
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

// bytes returns the current value of a BYTE_ARRAY column, in the page's memory: it is valid
// until the next page is loaded, and unchecked (string checks it).
func (c *pqCursor) bytes() []byte {
	return c.data[c.offs[c.cur]:c.offs[c.cur+1]]
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

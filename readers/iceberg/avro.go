package iceberg

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// An Avro object container file (the Avro specification, "Object Container Files"): the
// magic "Obj\x01", a header map (the schema, the codec), a 16-byte sync marker, then blocks of
// (count, size, data, sync). The container is read here, block by block, with every length
// checked against a limit before anything is allocated, and the records are walked against the
// file's own schema (schema.go), keeping the few fields Iceberg's paths are in, with every count
// checked against the bytes left. So a manifest list of any length is read in constant memory,
// and no length or count in a file can allocate or loop past its bytes. (docs/dependencies.md
// says why this is not hamba/avro: its decoder loops over a hostile count, and it adds 5.9 MB.)

var avroMagic = []byte{'O', 'b', 'j', 1}

// errNotAvro is the cause of a file that is not an Avro container Iceberg could have written.
var errNotAvro = errors.New("not an Avro object container file")

// maxHeaderBytes bounds the header's schema and metadata: Iceberg writes a few kilobytes.
const maxHeaderBytes = 16 << 20

// container reads the records of one container file.
type container struct {
	r      *bufio.Reader
	schema *schema
	codec  string
	sync   [16]byte
	limit  int64

	left int64 // records left in the current block
	w    walker
	zstd *zstd.Decoder
}

func newOCF(r io.Reader, limit int64) (*container, error) {
	o := &container{r: bufio.NewReaderSize(r, 64<<10), limit: limit}
	var magic [4]byte
	if _, err := io.ReadFull(o.r, magic[:]); err != nil || !bytes.Equal(magic[:], avroMagic) {
		return nil, fmt.Errorf("%w: no Avro magic bytes", errNotAvro)
	}
	meta := map[string][]byte{}
	total := int64(0)
	for {
		n, err := o.long()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		if n < 0 {
			n = -n
			if _, err := o.long(); err != nil { // the block's size in bytes
				return nil, err
			}
		}
		if n > maxHeaderBytes {
			return nil, fmt.Errorf("%w: a header of %d entries", errNotAvro, n)
		}
		for i := int64(0); i < n; i++ {
			k, err := o.bytes(maxHeaderBytes - total)
			if err != nil {
				return nil, err
			}
			v, err := o.bytes(maxHeaderBytes - total - int64(len(k)))
			if err != nil {
				return nil, err
			}
			total += int64(len(k) + len(v))
			meta[string(k)] = v
		}
	}
	if _, err := io.ReadFull(o.r, o.sync[:]); err != nil {
		return nil, fmt.Errorf("%w: no sync marker: %v", errNotAvro, err)
	}
	s, ok := meta["avro.schema"]
	if !ok {
		return nil, fmt.Errorf("%w: no avro.schema in its header", errNotAvro)
	}
	schema, err := parseSchema(s)
	if err != nil {
		return nil, fmt.Errorf("%w: its schema: %v", errNotAvro, err)
	}
	o.schema = schema
	o.codec = string(meta["avro.codec"])
	switch o.codec {
	case "", "null", "deflate", "snappy":
	case "zstandard":
		if o.zstd, err = zstdDecoder(limit); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: unknown codec %q", errNotAvro, o.codec)
	}
	return o, nil
}

// close releases what the file holds (nothing yet: the decoders are shared).
func (o *container) close() {}

// zstdDecoders are shared by every file, one per limit: making one costs more than reading a
// small manifest, and DecodeAll may be called concurrently.
var zstdDecoders sync.Map // int64 -> *zstd.Decoder

func zstdDecoder(limit int64) (*zstd.Decoder, error) {
	if d, ok := zstdDecoders.Load(limit); ok {
		return d.(*zstd.Decoder), nil
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(uint64(limit)), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	if prev, loaded := zstdDecoders.LoadOrStore(limit, d); loaded {
		d.Close()
		return prev.(*zstd.Decoder), nil
	}
	return d, nil
}

// long reads one zig-zag varint (at most ten bytes).
func (o *container) long() (int64, error) {
	var u uint64
	for shift := uint(0); shift < 70; shift += 7 {
		b, err := o.r.ReadByte()
		if err != nil {
			return 0, fmt.Errorf("%w: truncated: %v", errNotAvro, noEOF(err))
		}
		u |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return int64(u>>1) ^ -int64(u&1), nil
		}
	}
	return 0, fmt.Errorf("%w: a number longer than ten bytes", errNotAvro)
}

func (o *container) bytes(limit int64) ([]byte, error) {
	n, err := o.long()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > limit {
		return nil, fmt.Errorf("%w: a length of %d", errNotAvro, n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(o.r, b); err != nil {
		return nil, fmt.Errorf("%w: truncated: %v", errNotAvro, noEOF(err))
	}
	return b, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// next reads the next record, keeping in v the values of the leaves v names (dotted paths
// through records: "data_file.file_path"); a string or bytes leaf is kept as a string, an int
// or long as an int64, through any union. It returns false at the end of the file.
func (o *container) next(v record) (bool, error) {
	for o.left == 0 {
		if _, err := o.r.Peek(1); err == io.EOF {
			return false, nil
		}
		count, err := o.long()
		if err != nil {
			return false, err
		}
		size, err := o.long()
		if err != nil {
			return false, err
		}
		if count < 0 || size < 0 || size > o.limit {
			return false, fmt.Errorf("%w: a block of %d records in %d bytes (the limit is %d bytes: Options.MaxAvroBlockBytes)", errNotAvro, count, size, o.limit)
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(o.r, data); err != nil {
			return false, fmt.Errorf("%w: truncated block: %v", errNotAvro, noEOF(err))
		}
		var sync [16]byte
		if _, err := io.ReadFull(o.r, sync[:]); err != nil || sync != o.sync {
			return false, fmt.Errorf("%w: a block without its sync marker", errNotAvro)
		}
		if data, err = o.inflate(data); err != nil {
			return false, err
		}
		if count > int64(len(data)) && count > 0 {
			// Every record Iceberg writes takes at least one byte.
			return false, fmt.Errorf("%w: %d records in %d bytes", errNotAvro, count, len(data))
		}
		o.left = count
		o.w = walker{b: data}
	}
	o.left--
	for k := range v {
		v[k] = nil
	}
	if err := o.w.value(o.schema, "", v, 0); err != nil {
		return false, fmt.Errorf("%w: a record: %v", errNotAvro, err)
	}
	return true, nil
}

func (o *container) inflate(data []byte) ([]byte, error) {
	switch o.codec {
	case "deflate":
		out, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(data)), o.limit+1))
		if err != nil {
			return nil, fmt.Errorf("%w: deflate: %v", errNotAvro, err)
		}
		if int64(len(out)) > o.limit {
			return nil, fmt.Errorf("%w: a block inflates to more than %d bytes (Options.MaxAvroBlockBytes)", errNotAvro, o.limit)
		}
		return out, nil
	case "snappy":
		// Avro's snappy blocks end with the big-endian CRC-32 of the inflated bytes.
		if len(data) < 4 {
			return nil, fmt.Errorf("%w: a snappy block of %d bytes", errNotAvro, len(data))
		}
		body, sum := data[:len(data)-4], binary.BigEndian.Uint32(data[len(data)-4:])
		n, err := snappy.DecodedLen(body)
		if err != nil || int64(n) > o.limit {
			return nil, fmt.Errorf("%w: a snappy block of %d bytes inflated (the limit is %d)", errNotAvro, n, o.limit)
		}
		out, err := snappy.Decode(nil, body)
		if err != nil {
			return nil, fmt.Errorf("%w: snappy: %v", errNotAvro, err)
		}
		if crc32.ChecksumIEEE(out) != sum {
			return nil, fmt.Errorf("%w: a snappy block whose checksum does not match", errNotAvro)
		}
		return out, nil
	case "zstandard":
		out, err := o.zstd.DecodeAll(data, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: zstandard: %v", errNotAvro, err)
		}
		if int64(len(out)) > o.limit {
			return nil, fmt.Errorf("%w: a block inflates to more than %d bytes", errNotAvro, o.limit)
		}
		return out, nil
	}
	return data, nil
}

// hasFields reports whether the file's records are records with these fields (a dotted path
// goes into a nested record).
func hasFields(s *schema, paths ...string) bool {
	for _, p := range paths {
		cur := s
		for _, name := range splitDot(p) {
			if cur.kind != "record" {
				return false
			}
			var found *schema
			for _, f := range cur.fields {
				if f.name == name {
					found = f.typ
				}
			}
			if found == nil {
				return false
			}
			cur = found
		}
	}
	return true
}

func splitDot(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}

// record holds the leaves of one record that a caller wants: their paths are its keys, set to
// nil before the read; a leaf the record lacks stays nil.
type record map[string]any

func newRecord(paths ...string) record {
	r := record{}
	for _, p := range paths {
		r[p] = nil
	}
	return r
}

func (r record) str(p string) (string, bool) {
	s, ok := r[p].(string)
	return s, ok
}

func (r record) num(p string) (int64, bool) {
	n, ok := r[p].(int64)
	return n, ok
}

// maxDepth bounds the nesting of a value: a recursive schema (a record that holds itself)
// cannot recurse past it.
const maxDepth = 64

// walker reads Avro's binary encoding (the specification, "Binary Encoding") from one
// inflated block.
type walker struct {
	b   []byte
	off int
}

var errShort = errors.New("truncated value")

func (w *walker) long() (int64, error) {
	var u uint64
	for shift := uint(0); shift < 70; shift += 7 {
		if w.off >= len(w.b) {
			return 0, errShort
		}
		c := w.b[w.off]
		w.off++
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), nil
		}
	}
	return 0, errors.New("a number longer than ten bytes")
}

func (w *walker) take(n int64) ([]byte, error) {
	if n < 0 || n > int64(len(w.b)-w.off) {
		return nil, fmt.Errorf("a length of %d with %d bytes left", n, len(w.b)-w.off)
	}
	b := w.b[w.off : w.off+int(n)]
	w.off += int(n)
	return b, nil
}

// value reads one value of schema s found at path p, keeping it in out when out wants p.
func (w *walker) value(s *schema, p string, out record, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("values nested deeper than %d", maxDepth)
	}
	_, want := out[p]
	switch s.kind {
	case "record":
		for _, f := range s.fields {
			fp := f.name
			if p != "" {
				fp = p + "." + fp
			}
			if err := w.value(f.typ, fp, out, depth+1); err != nil {
				return err
			}
		}
		return nil
	case "union":
		i, err := w.long()
		if err != nil {
			return err
		}
		if i < 0 || i >= int64(len(s.branches)) {
			return fmt.Errorf("union branch %d of %d", i, len(s.branches))
		}
		return w.value(s.branches[i], p, out, depth+1)
	case "array":
		return w.blocks(p, func() error { return w.value(s.items, p+"[]", out, depth+1) }, zeroSize(s.items, 0))
	case "map":
		return w.blocks(p, func() error {
			if err := w.value(stringSchema, p+"{}", out, depth+1); err != nil {
				return err
			}
			return w.value(s.values, p+"{}", out, depth+1)
		}, false)
	case "fixed":
		_, err := w.take(int64(s.size))
		return err
	case "enum":
		i, err := w.long()
		if err == nil && (i < 0 || i >= int64(s.symbols)) {
			err = fmt.Errorf("enum symbol %d of %d", i, s.symbols)
		}
		return err
	case "null":
		return nil
	case "boolean":
		_, err := w.take(1)
		return err
	case "int", "long":
		n, err := w.long()
		if err == nil && want {
			out[p] = n
		}
		return err
	case "float":
		_, err := w.take(4)
		return err
	case "double":
		_, err := w.take(8)
		return err
	case "string", "bytes":
		n, err := w.long()
		if err != nil {
			return err
		}
		b, err := w.take(n)
		if err == nil && want {
			out[p] = string(b)
		}
		return err
	}
	return fmt.Errorf("an unknown type %s", s.kind)
}

var stringSchema = &schema{kind: "string"}

// blocks reads the blocks of an array or map. Every item that takes a byte or more must fit
// in the bytes left, so that a hostile count cannot make it loop; items that take no byte at
// all (nulls) are not iterated.
func (w *walker) blocks(p string, item func() error, empty bool) error {
	for {
		n, err := w.long()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if n < 0 {
			if n == -n { // the smallest int64 has no positive
				return fmt.Errorf("%s: a block count of %d", p, n)
			}
			n = -n
			if _, err := w.long(); err != nil { // the block's size in bytes
				return err
			}
		}
		if empty {
			continue
		}
		if n > int64(len(w.b)-w.off) {
			return fmt.Errorf("%s: %d items with %d bytes left", p, n, len(w.b)-w.off)
		}
		for ; n > 0; n-- {
			if err := item(); err != nil {
				return err
			}
		}
	}
}

// zeroSize reports whether every value of s is encoded in no byte at all.
func zeroSize(s *schema, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch s.kind {
	case "record":
		for _, f := range s.fields {
			if !zeroSize(f.typ, depth+1) {
				return false
			}
		}
		return true
	case "fixed":
		return s.size == 0
	}
	return s.kind == "null"
}

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

	"github.com/hamba/avro/v2"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// An Avro object container file (the Avro specification, "Object Container Files"): the
// magic "Obj\x01", a header map (the schema, the codec), a 16-byte sync marker, then blocks of
// (count, size, data, sync). The container is read here, block by block, with every length
// checked against a limit before anything is allocated; the records of each block are decoded
// by hamba/avro against the file's own schema. So a manifest list of any length is read in
// constant memory, and a hostile length cannot allocate.

var avroMagic = []byte{'O', 'b', 'j', 1}

// errNotAvro is the cause of a file that is not an Avro container Iceberg could have written.
var errNotAvro = errors.New("not an Avro object container file")

// maxHeaderBytes bounds the header's schema and metadata: Iceberg writes a few kilobytes.
const maxHeaderBytes = 16 << 20

// container reads the records of one container file.
type container struct {
	r      *bufio.Reader
	schema avro.Schema
	codec  string
	sync   [16]byte
	limit  int64
	api    avro.API

	left int64 // records left in the current block
	dec  *avro.Decoder
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
	// A cache of its own: named types of one file (Iceberg's partition records, r102 and the
	// like) must not leak into the next.
	schema, err := avro.ParseBytesWithCache(s, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("%w: its schema: %v", errNotAvro, err)
	}
	o.schema = schema
	o.codec = string(meta["avro.codec"])
	switch o.codec {
	case "", "null", "deflate", "snappy":
	case "zstandard":
		if o.zstd, err = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(uint64(limit)), zstd.WithDecoderConcurrency(1)); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: unknown codec %q", errNotAvro, o.codec)
	}
	o.api = avro.Config{
		MaxByteSliceSize:  int(min(limit, 1<<30)),
		MaxSliceAllocSize: int(min(limit, 1<<30)),
	}.Freeze()
	return o, nil
}

// close releases the codec.
func (o *container) close() {
	if o.zstd != nil {
		o.zstd.Close()
	}
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

// next decodes the next record into v. It returns false at the end of the file.
func (o *container) next(v any) (bool, error) {
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
		o.dec = o.api.NewDecoder(o.schema, bytes.NewReader(data))
	}
	o.left--
	if err := o.dec.Decode(v); err != nil {
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
func hasFields(s avro.Schema, paths ...string) bool {
	for _, p := range paths {
		cur := s
		for _, name := range splitDot(p) {
			rec, ok := cur.(*avro.RecordSchema)
			if !ok {
				return false
			}
			var found avro.Schema
			for _, f := range rec.Fields() {
				if f.Name() == name {
					found = f.Type()
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

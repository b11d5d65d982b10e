package parquetguard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// checkPages walks the page headers of a column chunk held whole in memory and checks each
// page (see pageChecker).
func checkPages(chunk []byte, name string, codec format.CompressionCodec) error {
	c := pageChecker{name: name, codec: codec}
	for pos := 0; pos < len(chunk); {
		h, n, _, err := c.header(chunk[pos:min(len(chunk), pos+MaxPageBytes)], int64(pos))
		if err != nil {
			return err
		}
		pos += n
		size, err := c.page(&h, chunk[pos:], int64(len(chunk)-pos))
		if err != nil {
			return err
		}
		pos += size
	}
	return nil
}

// pageChecker checks the pages of one column chunk, one after the other, whether the chunk is
// held whole (checkPages) or read a window at a time (pageStream): both make the same checks in
// the same order, so that a file is refused, with the same message, whatever the size of its
// chunks.
//
// It checks the sizes and counts a page header claims against the chunk and against
// MaxPageBytes and MaxPageValues, and that each compressed page decompresses within
// MaxPageBytes: parquet-go trusts all of these. Negative sizes and counts are parquet-go's to
// refuse (it does, when it reads the header), except where this walk would itself slice by
// them.
type pageChecker struct {
	name    string
	codec   format.CompressionCodec
	scratch []byte // reused by checkCompressed
}

// header checks the page header at the start of b, at offset pos of the chunk. b holds the
// rest of the chunk, or at most MaxPageBytes of it: no header may be larger. When the walk
// fails for want of bytes after b (short), a caller holding only part of the chunk must retry
// with more before taking the error as final.
func (c *pageChecker) header(b []byte, pos int64) (h format.PageHeader, n int, short bool, err error) {
	n, short, err = checkThrift(b)
	if err != nil {
		return h, 0, short, corruptf("column %s: page header at %d: %v", c.name, pos, err)
	}
	err = Protect(func() error { return thrift.Unmarshal(new(thrift.CompactProtocol), b[:n], &h) })
	if err != nil {
		return h, 0, false, corruptf("column %s: page header at %d: %v", c.name, pos, err)
	}
	return h, n, false, nil
}

// claims is what a page header says of its page.
type claims struct {
	values     int64 // values (or rows, or nulls: the largest)
	levels     int64 // bytes of levels kept uncompressed before the values (version 2 pages)
	compressed bool  // whether parquet-go decompresses the page
	badLevels  bool  // negative level lengths
}

func claimsOf(h *format.PageHeader) claims {
	switch {
	case h.DataPageHeader.Valid:
		return claims{values: int64(h.DataPageHeader.V.NumValues), compressed: true}
	case h.DataPageHeaderV2.Valid:
		v := &h.DataPageHeaderV2.V
		return claims{
			values:     max(int64(v.NumValues), int64(v.NumRows), int64(v.NumNulls)),
			levels:     int64(v.RepetitionLevelsByteLength) + int64(v.DefinitionLevelsByteLength),
			compressed: !v.IsCompressed.Valid || v.IsCompressed.V,
			badLevels:  v.RepetitionLevelsByteLength < 0 || v.DefinitionLevelsByteLength < 0,
		}
	case h.DictionaryPageHeader.Valid:
		return claims{values: int64(h.DictionaryPageHeader.V.NumValues), compressed: true}
	}
	return claims{} // index pages and unknown kinds are skipped by parquet-go
}

// size checks what header h claims against left, the bytes of the chunk after the header, and
// returns the size of the page that follows the header. A stream needs it before it holds the
// page.
func (c *pageChecker) size(h *format.PageHeader, left int64) (int, error) {
	cl := claimsOf(h)
	switch {
	case cl.badLevels:
		return 0, corruptf("column %s: negative level lengths", c.name)
	case h.CompressedPageSize < 0 || int64(h.CompressedPageSize) > left:
		return 0, corruptf("column %s: page of %d bytes overruns its chunk", c.name, h.CompressedPageSize)
	case h.CompressedPageSize > MaxPageBytes:
		// parquet-go reads a page whole into a buffer of this size.
		return 0, corruptf("column %s: page claims %d bytes compressed", c.name, h.CompressedPageSize)
	case h.UncompressedPageSize > MaxPageBytes:
		return 0, corruptf("column %s: page claims %d bytes uncompressed", c.name, h.UncompressedPageSize)
	case cl.values > MaxPageValues:
		return 0, corruptf("column %s: page claims %d values", c.name, cl.values)
	case cl.levels > int64(h.CompressedPageSize):
		return 0, corruptf("column %s: page levels overrun the page", c.name)
	}
	return int(h.CompressedPageSize), nil
}

// page checks header h against left, the bytes of the chunk after it, and the page that
// follows it, held in b (at least the page's size when size accepts it); it returns the page's
// size.
func (c *pageChecker) page(h *format.PageHeader, b []byte, left int64) (int, error) {
	size, err := c.size(h, left)
	if err != nil {
		return 0, err
	}
	if cl := claimsOf(h); cl.compressed && h.UncompressedPageSize >= 0 {
		if c.scratch, err = checkCompressed(c.codec, b[cl.levels:size], int(h.UncompressedPageSize), c.scratch); err != nil {
			return 0, corruptf("column %s: compressed page: %v", c.name, err)
		}
	}
	return size, nil
}

// checkCompressed checks that parquet-go's decoder for codec will decode data in bounded
// memory. parquet-go's decoders read gzip and brotli streams to their end, trust zstd's frame
// sizes and retry LZ4 with ever larger buffers on any error, so damaged data could exhaust
// memory.
//
// Snappy (what Spark writes by default) and zstd are checked from their headers alone, so that
// their pages are decompressed once, by parquet-go. LZ4, gzip and brotli pages, rare in
// checkpoints and inventories, are decoded here with a bound and then again by parquet-go: their
// decoded size cannot be known without decoding. scratch is reused between calls.
func checkCompressed(codec format.CompressionCodec, data []byte, uncompressed int, scratch []byte) ([]byte, error) {
	switch codec {
	case format.Snappy:
		// A bad header fails in parquet-go; only a length too large to allocate matters.
		if n, k := binary.Uvarint(data); k > 0 && n > MaxPageBytes {
			return scratch, fmt.Errorf("snappy block claims %d bytes", n)
		}
	case format.Zstd:
		return scratch, checkZstd(data)
	case format.Lz4Raw:
		if cap(scratch) < uncompressed {
			scratch = make([]byte, uncompressed)
		}
		if _, err := lz4.UncompressBlock(data, scratch[:uncompressed]); err != nil {
			return scratch, fmt.Errorf("lz4: %w", err)
		}
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
		n, err := io.Copy(io.Discard, io.LimitReader(r, MaxPageBytes+1))
		if err != nil {
			return scratch, err
		}
		if n > MaxPageBytes {
			return scratch, fmt.Errorf("page decompresses to more than %d bytes", MaxPageBytes)
		}
	}
	return scratch, nil
}

var errZstd = errors.New("malformed zstd data")

// zstdMaxBlock is the most a compressed zstd block may decode to (RFC 8878, 3.1.1.2.3).
const zstdMaxBlock = 128 << 10

// checkZstd walks the frame and block headers of zstd data (RFC 8878) and checks that what they
// say the data decodes to stays within MaxPageBytes: the content sizes frames declare (the
// decoder allocates them up front), their window sizes, and the sum of the blocks' decoded
// sizes (raw and RLE blocks give theirs, a compressed block decodes to at most 128 KiB and to no
// more than the window). The
// blocks themselves are left to the decoder, which refuses what does not match its headers.
func checkZstd(data []byte) error {
	total := uint64(0)
	for pos := 0; pos < len(data); {
		if len(data)-pos < 4 {
			return fmt.Errorf("%w: truncated frame", errZstd)
		}
		magic := binary.LittleEndian.Uint32(data[pos:])
		pos += 4
		if magic&0xFFFFFFF0 == 0x184D2A50 { // skippable frame
			if len(data)-pos < 4 {
				return fmt.Errorf("%w: truncated skippable frame", errZstd)
			}
			n := uint64(binary.LittleEndian.Uint32(data[pos:]))
			pos += 4
			if n > uint64(len(data)-pos) {
				return fmt.Errorf("%w: skippable frame overruns the page", errZstd)
			}
			pos += int(n)
			continue
		}
		if magic != 0xFD2FB528 {
			return fmt.Errorf("%w: bad frame magic %#x", errZstd, magic)
		}
		if pos >= len(data) {
			return fmt.Errorf("%w: truncated frame header", errZstd)
		}
		desc := data[pos]
		pos++
		fcsFlag, single, checksum, dictFlag := desc>>6, desc&0x20 != 0, desc&0x04 != 0, desc&0x03
		window := uint64(0)
		if !single {
			if pos >= len(data) {
				return fmt.Errorf("%w: truncated frame header", errZstd)
			}
			wd := data[pos]
			pos++
			base := uint64(1) << (10 + wd>>3)
			window = base + base/8*uint64(wd&7)
		}
		pos += [4]int{0, 1, 2, 4}[dictFlag]
		fcsLen := [4]int{0, 2, 4, 8}[fcsFlag]
		if fcsFlag == 0 && single {
			fcsLen = 1
		}
		if pos+fcsLen > len(data) {
			return fmt.Errorf("%w: truncated frame header", errZstd)
		}
		var fcs uint64
		switch fcsLen {
		case 1:
			fcs = uint64(data[pos])
		case 2:
			fcs = uint64(binary.LittleEndian.Uint16(data[pos:])) + 256
		case 4:
			fcs = uint64(binary.LittleEndian.Uint32(data[pos:]))
		case 8:
			fcs = binary.LittleEndian.Uint64(data[pos:])
		}
		pos += fcsLen
		if single {
			window = fcs
		}
		if fcs > MaxPageBytes || window > MaxPageBytes {
			return fmt.Errorf("zstd frame claims %d bytes of content and a window of %d: more than %d", fcs, window, MaxPageBytes)
		}
		for last := false; !last; {
			if len(data)-pos < 3 {
				return fmt.Errorf("%w: truncated block header", errZstd)
			}
			bh := uint32(data[pos]) | uint32(data[pos+1])<<8 | uint32(data[pos+2])<<16
			pos += 3
			last = bh&1 != 0
			size := int(bh >> 3)
			switch (bh >> 1) & 3 {
			case 0: // raw
				total += uint64(size)
			case 1: // RLE: one byte repeated size times
				total += uint64(size)
				size = 1
			case 2: // compressed: at most a block, and never more than the window
				total += min(zstdMaxBlock, window)
			default:
				return fmt.Errorf("%w: reserved block type", errZstd)
			}
			if size > len(data)-pos {
				return fmt.Errorf("%w: block overruns the page", errZstd)
			}
			pos += size
			if total > MaxPageBytes {
				return fmt.Errorf("zstd page decompresses to more than %d bytes", MaxPageBytes)
			}
		}
		if checksum {
			pos += 4
		}
	}
	return nil
}

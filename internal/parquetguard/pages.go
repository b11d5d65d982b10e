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

// checkPages walks the page headers of a column chunk and checks the sizes and counts they
// claim against the chunk and against MaxPageBytes and MaxPageValues, and that each compressed
// page decompresses within MaxPageBytes: parquet-go trusts all of these. Negative sizes and
// counts are parquet-go's to refuse (it does, when it reads the header), except where this walk
// would itself slice by them.
func checkPages(chunk []byte, name string, codec format.CompressionCodec) error {
	var scratch []byte
	for pos := 0; pos < len(chunk); {
		n, err := CheckThrift(chunk[pos:])
		if err != nil {
			return corruptf("column %s: page header at %d: %v", name, pos, err)
		}
		var h format.PageHeader
		err = Protect(func() error { return thrift.Unmarshal(new(thrift.CompactProtocol), chunk[pos:pos+n], &h) })
		if err != nil {
			return corruptf("column %s: page header at %d: %v", name, pos, err)
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
				return corruptf("column %s: negative level lengths", name)
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
			return corruptf("column %s: page of %d bytes overruns its chunk", name, h.CompressedPageSize)
		case h.UncompressedPageSize > MaxPageBytes:
			return corruptf("column %s: page claims %d bytes uncompressed", name, h.UncompressedPageSize)
		case values > MaxPageValues:
			return corruptf("column %s: page claims %d values", name, values)
		case levels > int64(h.CompressedPageSize):
			return corruptf("column %s: page levels overrun the page", name)
		}
		page := chunk[pos+int(levels) : pos+int(h.CompressedPageSize)]
		if compressed && h.UncompressedPageSize >= 0 {
			if scratch, err = checkCompressed(codec, page, int(h.UncompressedPageSize), scratch); err != nil {
				return corruptf("column %s: compressed page: %v", name, err)
			}
		}
		pos += int(h.CompressedPageSize)
	}
	return nil
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

package parquetguard

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// zstdFrame builds a zstd frame by hand: descriptor and optional window byte and content size,
// then blocks given as (type, size) pairs with their payload.
func zstdFrame(desc byte, window []byte, fcs []byte, blocks [][2]int) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	b = append(b, desc)
	b = append(b, window...)
	b = append(b, fcs...)
	for i, bl := range blocks {
		h := uint32(bl[0])<<1 | uint32(bl[1])<<3
		if i == len(blocks)-1 {
			h |= 1
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16))
		payload := bl[1]
		if bl[0] == 1 {
			payload = 1
		}
		b = append(b, make([]byte, payload)...)
	}
	return b
}

func TestCheckZstd(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	text := bytes.Repeat([]byte("part=1/part-00000-3f1c2b4a.c000.snappy.parquet\n"), 100_000) // 4.7 MB
	rle := make([][2]int, 1100)
	for i := range rle {
		rle[i] = [2]int{1, 128 << 10} // 1100 RLE blocks of 128 KiB: 140 MB from 4 KB
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string // "" to accept
	}{
		{"encoder output", enc.EncodeAll(text, nil), ""},
		{"two frames", append(enc.EncodeAll(text[:1000], nil), enc.EncodeAll(text[1000:5000], nil)...), ""},
		{"skippable frame", append([]byte{0x50, 0x2A, 0x4D, 0x18, 2, 0, 0, 0, 9, 9}, enc.EncodeAll(text[:10], nil)...), ""},
		{"RLE bomb", zstdFrame(0x00, []byte{0x58}, nil, rle), "decompresses to more than"},
		{"content size claim", zstdFrame(0xE0, nil, binary.LittleEndian.AppendUint64(nil, 1<<40), [][2]int{{0, 1}}), "claims 1099511627776 bytes of content"},
		{"window claim", zstdFrame(0x00, []byte{0xF8}, nil, [][2]int{{0, 1}}), "a window of"},
		{"block overruns", zstdFrame(0x00, []byte{0x58}, nil, [][2]int{{0, 10}})[:15], "block overruns"},
		{"reserved block type", zstdFrame(0x00, []byte{0x58}, nil, [][2]int{{3, 0}}), "reserved block type"},
		{"bad magic", []byte("not zstd at all"), "bad frame magic"},
		{"truncated", []byte{0x28, 0xB5, 0x2F}, "truncated frame"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := checkCompressed(format.Zstd, tc.data, 0, nil)
			if tc.want == "" && err != nil {
				t.Fatalf("refused valid zstd data: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestCheckGzipBomb: a gzip page that decompresses to more than MaxPageBytes is refused.
func TestCheckGzipBomb(t *testing.T) {
	var buf bytes.Buffer
	z, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zeros := make([]byte, 1<<20)
	for range MaxPageBytes>>20 + 1 {
		if _, err := z.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := checkCompressed(format.Gzip, buf.Bytes(), 0, nil); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("got %v, want a refusal", err)
	}
	if _, err := checkCompressed(format.Snappy, binary.AppendUvarint(nil, MaxPageBytes+1), 0, nil); err == nil {
		t.Fatal("snappy length claim accepted")
	}
}

func TestCheckThrift(t *testing.T) {
	// A list field (type 9) claiming 2^20 i32 elements in a few bytes.
	b := []byte{0x19, 0xF5, 0x80, 0x80, 0x40, 0x00}
	if _, err := CheckThrift(b); err == nil || !strings.Contains(err.Error(), "elements in") {
		t.Fatalf("got %v, want a refusal of the list", err)
	}
	deep := bytes.Repeat([]byte{0x1C}, 40) // struct in struct, 40 deep
	if _, err := CheckThrift(deep); err == nil || !strings.Contains(err.Error(), "nested too deep") {
		t.Fatalf("got %v, want a refusal of the nesting", err)
	}
	if n, err := CheckThrift([]byte{0x15, 0x04, 0x00, 0xFF}); err != nil || n != 3 {
		t.Fatalf("got %d, %v; want 3 bytes", n, err)
	}
}

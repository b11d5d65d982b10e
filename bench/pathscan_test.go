package bench

import (
	"strings"
	"testing"
)

// invalidURIChar is deltalog's check (deltalog/paths.go), copied to measure it against a byte
// table; the recommendation in docs/scaling.md is to scan bytes with invalidURIByte instead.
func invalidURIChar(r rune) bool {
	return r < 0x20 || r == 0x7f || strings.ContainsRune("{}\\\"", r)
}

var invalidURIByte = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	for _, c := range []byte{0x7f, '{', '}', '\\', '"'} {
		t[c] = true
	}
	return t
}()

func indexInvalidByte(s string) int {
	for i := 0; i < len(s); i++ {
		if invalidURIByte[s[i]] {
			return i
		}
	}
	return -1
}

const samplePath = "date=2020-03-17/part-00042-3f2a1c5e-8b9d-4e1f-a2c3-1234567890ab.c000.snappy.parquet"

// BenchmarkPathCheck times the per-path URI character check of log replay, as it is and with a
// byte table (same result: every invalid character is ASCII).
func BenchmarkPathCheck(b *testing.B) {
	for _, s := range []string{samplePath, samplePath + "\x01", "p=caf\u00e9/x\"y"} {
		if got, want := indexInvalidByte(s), strings.IndexFunc(s, invalidURIChar); got != want {
			b.Fatalf("%q: byte table finds %d, IndexFunc %d", s, got, want)
		}
	}
	b.Run("IndexFunc", func(b *testing.B) {
		for b.Loop() {
			if strings.IndexFunc(samplePath, invalidURIChar) >= 0 {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("byte-table", func(b *testing.B) {
		for b.Loop() {
			if indexInvalidByte(samplePath) >= 0 {
				b.Fatal("invalid")
			}
		}
	})
}

package vacuum

import "testing"

// TestChecksumOf: only ".<name>.crc" with a name of at least one byte is a checksum companion;
// "..crc" names no file, and is no companion.
func TestChecksumOf(t *testing.T) {
	for name, want := range map[string]string{
		".part-0.parquet.crc": "part-0.parquet",
		".a.crc":              "a",
		"..crc":               "",
		".crc":                "",
		"a.crc":               "",
		".a.crc.tmp":          "",
	} {
		got, ok := checksumOf(name)
		if got != want || ok != (want != "") {
			t.Errorf("checksumOf(%q) = %q, %v; want %q, %v", name, got, ok, want, want != "")
		}
	}
}

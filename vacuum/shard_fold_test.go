package vacuum

import (
	"testing"
)

// TestShardOfAgreesWithFold: two keys the planner takes for one file in other spellings (equal
// folded: keptByFold) are in one shard, whatever the case of a checksum companion's ".crc",
// and a companion in any case goes with its file; otherwise the shard that lists one spelling
// does not know the log protects the other.
func TestShardOfAgreesWithFold(t *testing.T) {
	pairs := [][2]string{
		{".X.crc/a", ".x.CRC/a"},
		{".x=A.crc/f.parquet", ".x=a.CRC/f.parquet"},
		{".Part-0.parquet.Crc", "part-0.parquet"},
		{".caf\u00e9.crc", "CAFE\u0301"},
	}
	for _, pair := range pairs {
		for n := 2; n <= 64; n++ {
			if a, b := ShardOf(pair[0], n), ShardOf(pair[1], n); a != b {
				t.Errorf("count %d: %q in shard %d, %q in shard %d", n, pair[0], a, pair[1], b)
				break
			}
		}
	}
}

// TestShardFoldedChecksumSpelling: a partition column whose folders start with '.' (".x=",
// not hidden) and a value ending in ".crc": the live file, listed with the value in other
// cases, is kept by one run (another spelling of a protected key) and so by every shard.
func TestShardFoldedChecksumSpelling(t *testing.T) {
	tb := newTable(t, tableSpec{partitionColumns: []string{".x"}})
	tb.commit(add(".x=A.crc/f.parquet"))
	tb.file(".x=a.CRC/f.parquet", 20*day) // a case-insensitive store's listing of the live file
	tb.file("orphan.parquet", 20*day)
	v := tb.version
	if got := deleted(tb.plan(retain0)); len(got) != 1 || got["orphan.parquet"] == "" {
		t.Fatalf("one run deletes %v, want orphan.parquet only", got)
	}
	for n := 2; n <= 16; n++ {
		for i := range n {
			opts := retain0
			opts.Shard, opts.Version = &Shard{Index: i, Count: n}, &v
			if got := deleted(tb.plan(opts)); got[".x=a.CRC/f.parquet"] != "" {
				t.Errorf("shard %d/%d deletes the live file in another spelling: %v", i, n, got)
			}
		}
	}
}

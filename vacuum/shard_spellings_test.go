package vacuum

import (
	"slices"
	"testing"
)

// TestShardUnionOverSpellings: for log paths that can be read several ways and listings that
// spell a live file otherwise (case, NFC and NFD, percent escapes, '#', '?', '+', absolute
// URIs and paths, deletion vectors with a prefix in other cases, companions, change data), the
// shards' plans together are exactly one run's, in FULL, LITE and with an inventory, for every
// count up to 12: no shard deletes what one run keeps because it was protected in another.
func TestShardUnionOverSpellings(t *testing.T) {
	cases := []struct {
		partitionColumns []string
		log              [][]any
		listed           []string
	}{
		{nil, [][]any{{add("Date=1/a.parquet"), add("x.parquet")}, {remove("date=1/a.parquet", 10*day), remove("x.parquet", 10*day)}, {add("DATE=1/a.parquet")}},
			[]string{"date=1/a.parquet", "DATE=1/a.parquet", "x.parquet"}},
		{nil, [][]any{{add("p=a%3Ab/a.parquet")}}, []string{"p=a%3Ab/a.parquet", "p=a:b/a.parquet", "p=a%3ab/a.parquet", "P=A%3AB/a.parquet"}},
		{nil, [][]any{{add("a#b/c.parquet"), add("z.parquet")}, {remove("a/c.parquet", 10*day), remove("z.parquet", 10*day)}}, []string{"a/c.parquet", "a#b/c.parquet", "a", "z.parquet"}},
		{nil, [][]any{{add("x?y=1/c.parquet")}}, []string{"x?y=1/c.parquet", "x"}},
		{nil, [][]any{{add("a+b/c.parquet")}}, []string{"a+b/c.parquet", "a b/c.parquet"}},
		{nil, [][]any{{add("caf%C3%A9/a.parquet")}}, []string{"caf\u00e9/a.parquet", "cafe\u0301/a.parquet", "CAFE\u0301/a.parquet", "CAF\u00c9/a.parquet"}},
		{nil, [][]any{{add("mem://bucket/table/q=1/a.parquet")}, {remove("q=1/a.parquet", 10*day), add("q=1/a.parquet")}}, []string{"q=1/a.parquet", "Q=1/a.parquet"}},
		{nil, [][]any{{add("/table/r=1/a.parquet")}}, []string{"r=1/a.parquet"}},
		{[]string{".x"}, [][]any{{add(".x=A.crc/f.parquet")}}, []string{".x=a.CRC/f.parquet", ".x=A.crc/f.parquet", ".x=a.crc/f.parquet"}},
		{nil, [][]any{{add("K=1/f.parquet"), add("s=\u00df/f.parquet"), add("\u03a3=1/f.parquet")}}, []string{"\u212a=1/f.parquet", "s=ss/f.parquet", "S=SS/f.parquet", "\u03c3=1/f.parquet", "\u03c2=1/f.parquet"}},
		{nil, [][]any{{add("a%2Fb/f.parquet")}}, []string{"a/b/f.parquet", "a%2Fb/f.parquet"}},
		{nil, [][]any{{add("A.parquet"), add("b.parquet")}, {remove("b.parquet", 10*day)}}, []string{"a.parquet", ".a.parquet.crc", ".A.parquet.crc", "b.parquet", ".b.parquet.crc", ".B.parquet.CRC"}},
		{nil, [][]any{{addDV("z.parquet", dvU("Ab", z85))}, {removeDV("z.parquet", 10*day, dvU("ab", z85))}}, []string{"Ab/" + dvFile, "ab/" + dvFile, "AB/" + dvFile, "z.parquet"}},
		{nil, [][]any{{cdc("_change_data/A.parquet"), add("_change_data/a.parquet")}}, []string{"_change_data/A.parquet", "_change_data/a.parquet"}},
		{[]string{"p"}, [][]any{{add("p=1/a.parquet"), add("p=1/b.parquet")}, {remove("p=1/a.parquet", 10*day)}},
			[]string{"p=1/a.parquet", "p=1/.a.parquet.crc", "p=1/b.parquet", "p=1/.b.parquet.crc", ".p=1.crc", "P=1/b.parquet"}},
	}
	for ci, tc := range cases {
		tb := newTable(t, tableSpec{partitionColumns: tc.partitionColumns})
		for _, c := range tc.log {
			tb.commit(c...)
		}
		for _, k := range tc.listed {
			tb.file(k, 20*day)
		}
		tb.file("zz-orphan.parquet", 20*day)
		v := tb.version
		for _, mode := range []string{"full", "lite", "inventory"} {
			base := retain0
			switch mode {
			case "lite":
				base.Mode = ModeLite
			case "inventory":
				base.Inventory = tb.store
			}
			whole := planned(tb.plan(base))
			for n := 2; n <= 12; n++ {
				var union []string
				for i := range n {
					opts := base
					opts.Shard, opts.Version = &Shard{Index: i, Count: n}, &v
					union = append(union, planned(tb.plan(opts))...)
				}
				slices.Sort(union)
				if !slices.Equal(union, whole) {
					t.Errorf("case %d (%q), %s, %d shards: the union of the plans\n%q\nis not one run's\n%q", ci, tc.listed, mode, n, union, whole)
					break
				}
			}
		}
	}
}

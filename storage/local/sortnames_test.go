//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package local

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// sortByName orders the entries of a directory as strings.Compare orders their keys: names
// sharing a long prefix, names equal in the eight bytes that rank them, names shorter than
// eight bytes past the common prefix, names that begin others, bytes above 0x7f.
func TestSortByName(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "b", "0", "9", "-", ".", "_", "=", "é", "\xff", "\x01", "Z"}
	name := func(prefix string) string {
		var b strings.Builder
		b.WriteString(prefix)
		for range r.IntN(14) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		if b.Len() == 0 {
			b.WriteString("x")
		}
		return b.String()
	}
	for round := range 500 {
		dir := []string{"", "date=2020-01-01/", "a/b/"}[round%3]
		prefix := []string{"", "part-000", "part-00042-3f2a", "p"}[round%4]
		n := 1 + r.IntN(60)
		seen := map[string]bool{}
		var ents []dirent
		for range n {
			nm := name(prefix)
			if r.IntN(5) == 0 && len(ents) > 0 { // one that begins another
				nm = ents[r.IntN(len(ents))].key[len(dir):] + alphabet[r.IntN(len(alphabet))]
			}
			if seen[nm] {
				continue
			}
			seen[nm] = true
			ents = append(ents, dirent{key: dir + nm})
		}
		want := make([]string, len(ents))
		for i, e := range ents {
			want[i] = e.key
		}
		slices.SortFunc(want, strings.Compare)
		ents = sortByName(ents, len(dir))
		got := make([]string, len(ents))
		for i, e := range ents {
			got[i] = e.key
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: got %q, want %q", round, got, want)
		}
	}
}

// BenchmarkSortByName sorts the names of a partition of a Spark table: 12,000 data files.
func BenchmarkSortByName(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const dir = "date=2020-01-01/"
	keys := make([]string, 12000)
	for i := range keys {
		keys[i] = fmt.Sprintf("%spart-%05d-%08x-%04x-%04x-%04x-%012x.c000.snappy.parquet", dir, r.IntN(20000), r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
	}
	ents := make([]dirent, len(keys))
	b.Run("byName", func(b *testing.B) {
		for b.Loop() {
			for i, k := range keys {
				ents[i] = dirent{key: k}
			}
			_ = sortByName(ents, len(dir))
		}
	})
	b.Run("byKey", func(b *testing.B) {
		for b.Loop() {
			for i, k := range keys {
				ents[i] = dirent{key: k}
			}
			slices.SortFunc(ents, func(a, b dirent) int { return strings.Compare(a.key, b.key) })
		}
	})
}

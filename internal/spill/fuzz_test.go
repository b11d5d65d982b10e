package spill

import (
	"slices"
	"testing"
)

// recsOf turns fuzzer bytes into records: each byte pair is a key of up to three of a few
// names (so that keys repeat and share prefixes) and a value.
func recsOf(data []byte) []rec {
	names := []string{"", "a", "b", "a/", "ab", "p=1/", "\x00", "\xff", "é"}
	var out []rec
	for len(data) >= 2 {
		k, v := data[0], data[1]
		data = data[2:]
		key := ""
		for range k % 4 {
			key += names[int(k/4)%len(names)]
			k = k/4 + 1
		}
		out = append(out, rec{key: key, val: int64(v%8) - 4})
	}
	return out
}

// FuzzRoundTrip: any sequence of records with any budget reads back from the merge sorted and
// folded exactly as an in-memory sort would (or, without folding, every record), from Each as
// written, and after a Truncate as the records before the cut.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{}, uint8(1), true, uint16(0))
	f.Add([]byte{1, 2, 1, 3, 5, 0, 1, 1}, uint8(1), true, uint16(2))
	f.Add([]byte{9, 9, 8, 8, 7, 7, 6, 6, 5, 5, 4, 4, 3, 3}, uint8(3), false, uint16(4))
	f.Add([]byte("some records, whatever they are, in no order at all"), uint8(5), true, uint16(7))
	f.Fuzz(func(t *testing.T, data []byte, budget uint8, fold bool, cut uint16) {
		recs := recsOf(data)
		o := every
		if fold {
			o = latest
		}
		b := 1 + int(budget%16)
		fl, mem := spillSorted(t, recs, b, o)
		got, err := merged(fl, mem, o)
		if err != nil {
			t.Fatal(err)
		}
		if want := inMemory(recs, o); !slices.Equal(got, want) {
			t.Fatalf("budget %d, fold %v: merged\n%+v\nwant\n%+v", b, fold, got, want)
		}
		var written []rec
		for i := 0; i+b <= len(recs); i += b {
			written = append(written, Sort(slices.Clone(recs[i:i+b]), o)...)
		}
		read, err := each(fl)
		if err != nil || !slices.Equal(read, written) {
			t.Fatalf("Each: %+v, %v; want %+v", read, err, written)
		}
		if err := fl.Verify(); err != nil {
			t.Fatal(err)
		}
		n := int(cut) % (len(written) + 2)
		if err := fl.Truncate(n); err != nil {
			t.Fatal(err)
		}
		read, err = each(fl)
		if want := written[:min(n, len(written))]; err != nil || !slices.Equal(read, want) || fl.Len() != len(want) {
			t.Fatalf("truncated to %d: %+v (Len %d), %v; want %+v", n, read, fl.Len(), err, want)
		}
	})
}

package undo

import (
	"bytes"
	"math"
	"testing"

	"github.com/go-json-experiment/json"
)

// A record's file lines are what json.Marshal writes for them, whatever the path holds
// (quotes, backslashes, control characters, HTML, line and paragraph separators, non-ASCII),
// an unknown time (0) written as 0 too; a path that is not UTF-8 fails as Marshal fails.
func TestAppendEntryIsMarshal(t *testing.T) {
	paths := []string{"a.parquet", `p="x"/f\g.parquet`, "tab\there\nnl\x00\x1f\x7f", "<b>&amp;</b>",
		"\u2028\u2029", "été/日本語/🙂.parquet", "%20 +", ""}
	for _, p := range paths {
		for _, e := range []Entry{{Path: p, Size: 12, ModTime: 1_700_000_000_123}, {Path: p, Size: -1}, {Path: p, Size: math.MaxInt64, ModTime: math.MinInt64}} {
			want, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendEntry(nil, e)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, append(want, '\n')) {
				t.Errorf("appendEntry(%+v) = %s, want %s", e, got, want)
			}
		}
	}
	bad := Entry{Path: "a\xffb", Size: 1}
	if _, err := json.Marshal(bad); err == nil {
		t.Fatal("json.Marshal accepts invalid UTF-8; the comparison is moot")
	}
	if _, err := appendEntry(nil, bad); err == nil {
		t.Error("invalid UTF-8 path: no error")
	}
}

package streaming

import (
	"context"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// FuzzRead: no offsets file makes Read panic, and a result is always one of the table's
// source offsets.
func FuzzRead(f *testing.F) {
	f.Add(offsets(offset(tableID, 5, 3, false)), true)
	f.Add(offsets("-", offset(otherID, 1, 0, true), offset(tableID, 2, -1, true)), false)
	f.Fuzz(func(t *testing.T, content string, committed bool) {
		s := mem.New("file:///q")
		s.PutAt("offsets/0", []byte(content), at)
		if committed {
			s.PutAt("commits/0", []byte("v1\n{}"), at)
		}
		cp, err := Read(context.Background(), s, tableID)
		if err == nil && (cp.Version < 0 || cp.Sources < 1 || cp.File != "offsets/0") {
			t.Fatalf("Read: %+v from %q", cp, content)
		}
	})
}

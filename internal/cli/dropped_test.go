package cli

import (
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestDroppedWhy: each reason the executor keeps a planned file for reads as a sentence; a
// file written again since the listing names no commit (it has none: version -1).
func TestDroppedWhy(t *testing.T) {
	for _, tc := range []struct {
		d    vacuum.Dropped
		want string
	}{
		{vacuum.Dropped{Reason: vacuum.DropReferenced, Version: 7}, "version 7 references it"},
		{vacuum.Dropped{Reason: vacuum.DropChanged, Version: -1}, "written again since it was listed"},
	} {
		got := droppedWhy(tc.d)
		if !strings.Contains(got, tc.want) || strings.Contains(got, "-1") {
			t.Errorf("droppedWhy(%+v) = %q, want it to say %q (and no version -1)", tc.d, got, tc.want)
		}
	}
}

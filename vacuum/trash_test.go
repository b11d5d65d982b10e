package vacuum

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// TestTrashFolder: the one rule of the folders that may hold a trash, with and without the
// table's snapshot (a partition column _p, UniForm Iceberg).
func TestTrashFolder(t *testing.T) {
	snap := &deltalog.Snapshot{Location: "mem://t", Metadata: deltalog.Metadata{PartitionColumns: []string{"_p", "p"},
		Configuration: map[string]string{deltalog.PropUniversalFormats: "iceberg"}}}
	for _, tc := range []struct {
		prefix   string
		want     string // "" refused
		withSnap string // the answer with the snapshot, when it differs ("-": refused)
	}{
		{"_trash", "_trash/", ""},
		{"_trash/", "_trash/", ""},
		{"./_trash", "_trash/", ""},
		{".trash/x", ".trash/x/", ""},
		{"_deltavacuum/trash", "_deltavacuum/trash/", ""},
		{"_p=1", "_p=1/", "-"},  // a partition folder of the table
		{"_p=1/", "_p=1/", "-"}, // the same
		{"_pp=1", "_pp=1/", ""}, // hidden: _pp is no partition column
		{"_t/_p=1", "_t/_p=1/", ""},
		{"trash", "", ""},
		{"p=1", "", ""},
		{"metadata", "", ""},
		{"../x", "", ""},
		{"/abs", "", ""},
		{"_delta_log", "", ""},
		{"_DELTA_LOG/t", "", ""},
		{"_delta_log/t", "", ""},
		{"_deltavacuum/runs", "", ""},
		{"_deltavacuum/runs/x", "", ""},
		{"_deltavacuum", "", ""}, // holds the runs folder
		{"_change_data/t", "", ""},
		{"_delta_index", "", ""},
		{"a/_t", "", ""},
		{"", "", ""},
		{".", "", ""},
		{"/", "", ""},
		{"_a//b", "", ""},
		{"_a/../b", "", ""},
		// Control characters, anywhere in the name: refused, whatever else the name is.
		{"_t\n", "", ""},
		{"_t\n/", "", ""},
		{"_t\r", "", ""},
		{"_t\tx", "", ""},
		{"_\x00t", "", ""},
		{"_t\x7f", "", ""},
		{"_t\u0085", "", ""},
		{"_t\u009b", "", ""},
		{"_a/\nb", "", ""},
		{"_t\xff", "", ""},
		{"_t\u200b", "_t\u200b/", ""}, // a format character, not a control: a name as any other
		{"_tr\u00e4sh", "_tr\u00e4sh/", ""},
	} {
		got, err := TrashFolder(nil, tc.prefix)
		if (err == nil) != (tc.want != "") || got != tc.want {
			t.Errorf("TrashFolder(nil, %q) = %q, %v; want %q", tc.prefix, got, err, tc.want)
		}
		if err != nil && !errors.Is(err, ErrTrashFolder) {
			t.Errorf("TrashFolder(nil, %q): %v does not match ErrTrashFolder", tc.prefix, err)
		}
		want := tc.want
		if tc.withSnap == "-" {
			want = ""
		}
		got, err = TrashFolder(snap, tc.prefix)
		if (err == nil) != (want != "") || got != want {
			t.Errorf("TrashFolder(snap, %q) = %q, %v; want %q", tc.prefix, got, err, want)
		}
	}
}

// TestCheckTrashPlace: a name on the way to the trash that is a file refuses the run before
// anything is moved; folders, and names not there yet, do not.
func TestCheckTrashPlace(t *testing.T) {
	ctx := context.Background()
	s := mem.New("mem://t")
	s.PutAt("_t", []byte("a file"), time.Now())
	s.PutAt("_d/", nil, time.Now())
	s.PutAt("_d/x", []byte("a file"), time.Now())
	for dir, refused := range map[string]bool{"_t/run/": true, "_d/x/run/": true, "_d/run/": false, "_new/run/": false} {
		err := CheckTrashPlace(ctx, s, dir)
		if (err != nil) != refused || refused && !strings.Contains(err.Error(), "is a file, not a folder") {
			t.Errorf("%s: %v, want refused %v", dir, err, refused)
		}
	}
}

// TestReferencedUnder: every key under a folder that an action names, whatever the action.
func TestReferencedUnder(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("_t/r/live.parquet"), add("x.parquet"), remove("_t/r/old.parquet", 300*day))
	snap, err := deltalog.Load(context.Background(), tb.store)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReferencedUnder(context.Background(), tb.store, snap, "_t/")
	if err != nil || len(got) != 2 || !got["_t/r/live.parquet"] || !got["_t/r/old.parquet"] {
		t.Fatalf("got %v, %v", got, err)
	}
}

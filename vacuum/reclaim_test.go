package vacuum

import (
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Only a store that keeps nothing frees the bytes at once; everything else, an unreadable
// setting included, counts them as reclaimed later and warns.
func TestReclaim(t *testing.T) {
	cases := []struct {
		rec   storage.Recovery
		trash string
		now   bool
		when  string
	}{
		{storage.Recovery{Kind: storage.RecoveryNone}, "", true, "now"},
		{storage.Recovery{Kind: storage.RecoveryNone}, "_t/r/", false, "trash is purged"},
		{storage.Recovery{Kind: storage.RecoverySoftDelete, Days: 7}, "", false, "after 7 days"},
		{storage.Recovery{Kind: storage.RecoverySoftDelete}, "", false, "soft-delete retention"},
		{storage.Recovery{Kind: storage.RecoveryVersioning}, "", false, "lifecycle rule"},
		{storage.Recovery{Kind: storage.RecoveryUnknown}, "", false, "unknown"},
		{storage.Recovery{Kind: "something new"}, "", false, "unknown"},
		{storage.Recovery{}, "", false, "unknown"},
	}
	for _, c := range cases {
		r := NewReclaim(c.rec, c.trash, 100)
		if got := r.BytesNow == 100 && r.BytesLater == 0; got != c.now || r.BytesNow+r.BytesLater != 100 {
			t.Errorf("%+v trash %q: now %d later %d", c.rec, c.trash, r.BytesNow, r.BytesLater)
		}
		if !strings.Contains(r.When, c.when) {
			t.Errorf("%+v: when %q, want %q", c.rec, r.When, c.when)
		}
		if (r.Warning() == "") != c.now {
			t.Errorf("%+v: warning %q", c.rec, r.Warning())
		}
	}
	if r := NewReclaim(storage.Recovery{Kind: storage.RecoveryVersioning}, "", 0); r.Warning() != "" {
		t.Errorf("a run that deleted nothing warns: %q", r.Warning())
	}
}

// TestUndoability: a run promises an undo only where something keeps what it deletes.
func TestUndoability(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rc       storage.Recovery
		trash    string
		recorded bool
		possible string
		via      string
		says     string
	}{
		{"local disk", storage.Recovery{Kind: storage.RecoveryNone, Detail: "local disk"}, "", true, UndoNo, "", "use --trash"},
		{"local disk, trash", storage.Recovery{Kind: storage.RecoveryNone}, "_t/", true, UndoYes, "trash", "trash purge"},
		{"versioning", storage.Recovery{Kind: storage.RecoveryVersioning}, "", true, UndoYes, "store recovery", "versioning"},
		{"soft delete", storage.Recovery{Kind: storage.RecoverySoftDelete, Days: 7}, "", true, UndoYes, "store recovery", "soft delete, 7 days"},
		{"unknown", storage.Recovery{Kind: storage.RecoveryUnknown, Detail: "403"}, "", true, UndoUnknown, "store recovery", "could not be read"},
		{"no record", storage.Recovery{Kind: storage.RecoveryVersioning}, "", false, UndoNo, "", "no run record"},
	} {
		u := NewUndoability(tc.rc, tc.trash, tc.recorded)
		if u.Possible != tc.possible || u.Via != tc.via || !strings.Contains(u.Why, tc.says) {
			t.Errorf("%s: %+v, want %s via %q saying %q", tc.name, u, tc.possible, tc.via, tc.says)
		}
	}
}

// TestRetentionNote: 2555 hours (the days of seven years, taken for hours) is named; nothing
// else is.
func TestRetentionNote(t *testing.T) {
	for d, want := range map[time.Duration]bool{2555 * time.Hour: true, 2554 * time.Hour: false, 2555 * 24 * time.Hour: false, 2556 * time.Hour: false, 0: false} {
		note := RetentionNote("RETAIN", d)
		if (note != "") != want || want && !strings.Contains(note, "106 days") {
			t.Errorf("%v: %q", d, note)
		}
	}
}

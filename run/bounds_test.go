package run

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// TestPinBoundaries: a pin of version 0 (the first commit) is a pin; a reason of 500 bytes is
// said in few enough, 501 are not; a pin that holds for exactly the maximum is obeyed, one a
// second longer is not.
func TestPinBoundaries(t *testing.T) {
	if err := CheckReason(strings.Repeat("r", 500)); err != nil {
		t.Errorf("a reason of 500 bytes: %v", err)
	}
	if err := CheckReason(strings.Repeat("r", 501)); err == nil {
		t.Error("a reason of 501 bytes was taken")
	}

	ctx := context.Background()
	store := mem.New("mem://t")
	now := time.Now().UTC()
	for _, tc := range []struct {
		name    string
		version int64
		holds   time.Duration
		want    string
	}{
		{"version-0", 0, time.Hour, PinActive},
		{"exactly-the-maximum", 3, DefaultMaxPin, PinActive},
		{"a-second-longer", 3, DefaultMaxPin + time.Second, PinInvalid},
	} {
		id := NewID(now)
		p := Pin{Format: pinFormat, ID: id, Table: "mem://t", Version: tc.version, Reason: "a report reads it",
			Created: now.Add(-time.Minute), Until: now.Add(-time.Minute).Add(tc.holds), By: Self()}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Put(ctx, pinKey(id), b); err != nil {
			t.Fatal(err)
		}
		st := readPin(ctx, store, pinKey(id), now, DefaultMaxPin)
		if st.State != tc.want {
			t.Errorf("%s: state %q (%s), want %q", tc.name, st.State, st.Why, tc.want)
		}
	}
}

// TestPurgeNoteOfNothing: a purge that deleted nothing (no file, no byte, none left) writes a
// note that reads back; a negative count is refused.
func TestPurgeNoteOfNothing(t *testing.T) {
	ctx := context.Background()
	store := mem.New("mem://t")
	id := NewID(time.Now())
	if err := WritePurgeNote(ctx, store, &PurgeNote{Run: id, At: time.Now().UTC(), Trash: "_trash/", Done: true}); err != nil {
		t.Fatal(err)
	}
	if n, err := ReadPurgeNote(ctx, store, id); err != nil || n.NumFiles != 0 || n.Bytes != 0 || n.NumLeft != 0 {
		t.Fatalf("a purge of nothing: %+v, %v", n, err)
	}
	if err := store.Put(ctx, purgeKey(id), []byte(`{"run":"`+id+`","at":"2026-12-06T00:00:00Z","trash":"_trash/","done":true,"numFiles":0,"bytes":-1,"numLeft":0}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPurgeNote(ctx, store, id); err == nil {
		t.Error("a note of -1 bytes was read")
	}
}

// lyingMover answers every move "not found", without moving.
type lyingMover struct{ *mem.Store }

func (s *lyingMover) Move(context.Context, string, string) error { return storage.ErrNotExist }

// TestTrashMoveNotFound: a move that says "not found" counts the file gone only when it is not
// at its path either; one still there is not moved, not gone, and says so. Conditional moves
// need a version for every key.
func TestTrashMoveNotFound(t *testing.T) {
	ctx := context.Background()
	store := &lyingMover{mem.New("mem://t")}
	if err := store.Put(ctx, "here.parquet", []byte("x")); err != nil {
		t.Fatal(err)
	}
	ts, err := NewTrashStore(store, "_trash/r/")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ts.Delete(ctx, []string{"here.parquet", "gone.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Gone || res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "is at its path: not moved") {
		t.Errorf("a file still at its path: gone %v, error %v", res[0].Gone, res[0].Err)
	}
	if !res[1].Gone || res[1].Err != nil {
		t.Errorf("a file at no path: gone %v, error %v", res[1].Gone, res[1].Err)
	}
	if _, err := ts.DeleteIfUnchanged(ctx, []string{"here.parquet"}, nil); err == nil {
		t.Error("a conditional move without versions was made")
	}
}

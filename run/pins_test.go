package run

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// TestCreatePin: a pin of a version, or of the version a timestamp falls in, written under the
// lock; every request that cannot be a pin refused, writing nothing; a held table refuses it.
func TestCreatePin(t *testing.T) {
	ctx := context.Background()
	store := readersFixture(t, false) // versions 0 to 5
	now := time.Now()
	for _, tc := range []struct {
		name string
		req  PinRequest
		want string
	}{
		{"neither version nor timestamp", PinRequest{For: time.Hour, Reason: "r"}, "not both"},
		{"both", PinRequest{Version: ptr64(1), Timestamp: &now, For: time.Hour, Reason: "r"}, "not both"},
		{"no duration", PinRequest{Version: ptr64(1), Reason: "r"}, "holds for a time"},
		{"a negative duration", PinRequest{Version: ptr64(1), For: -time.Hour, Reason: "r"}, "holds for a time"},
		{"longer than the maximum", PinRequest{Version: ptr64(1), For: DefaultMaxPin + time.Second, Reason: "r"}, "longer than the maximum"},
		{"longer than a maximum given", PinRequest{Version: ptr64(1), For: 2 * time.Hour, MaxPin: time.Hour, Reason: "r"}, "longer than the maximum"},
		{"no reason", PinRequest{Version: ptr64(1), For: time.Hour, Reason: "  "}, "needs a reason"},
		{"a reason of many lines", PinRequest{Version: ptr64(1), For: time.Hour, Reason: "a\nb"}, "control character"},
		{"a long reason", PinRequest{Version: ptr64(1), For: time.Hour, Reason: strings.Repeat("x", 501)}, "500 or fewer"},
		{"a reason that is not UTF-8", PinRequest{Version: ptr64(1), For: time.Hour, Reason: "\xff"}, "UTF-8"},
		{"a version beyond the log", PinRequest{Version: ptr64(6), For: time.Hour, Reason: "r"}, "does not exist"},
		{"a negative version", PinRequest{Version: ptr64(-1), For: time.Hour, Reason: "r"}, "does not exist"},
		{"a time before the table", PinRequest{Timestamp: ptrTime(time.Unix(0, 0)), For: time.Hour, Reason: "r"}, "no version at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CreatePin(ctx, store, tc.req)
			if !errors.Is(err, ErrInvalidPin) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a refusal saying %q", err, tc.want)
			}
			for _, k := range store.Keys() {
				if strings.HasPrefix(k, "_deltavacuum/") {
					t.Fatalf("the refusal wrote %s", k)
				}
			}
		})
	}
	at := time.Now().Add(time.Hour)
	pin, err := CreatePin(ctx, store, PinRequest{Timestamp: &at, For: time.Hour, Reason: "report", Now: now})
	if err != nil || pin.Version != 5 || !pin.Until.Equal(now.Add(time.Hour).UTC()) || pin.Table != readersTable {
		t.Fatalf("a pin at a time after the last commit: %+v, %v", pin, err)
	}
	held := plantLive(t, store, LockOptions{Purpose: PurposeVacuum})
	if _, err := CreatePin(ctx, store, PinRequest{Version: ptr64(1), For: time.Hour, Reason: "r"}); !errors.Is(err, ErrLocked) {
		t.Errorf("a pin beside a run: %v, want the table held", err)
	}
	held.Release(ctx)
}

func ptrTime(t time.Time) *time.Time { return &t }

// TestPinVersionTheLogCannotHonour: a version whose following commits a log cleanup removed
// is refused: VACUUM could not tell what a reader of it needs.
func TestPinVersionTheLogCannotHonour(t *testing.T) {
	ctx := context.Background()
	store := readersFixture(t, false)
	if _, err := store.Delete(ctx, []string{"_delta_log/00000000000000000002.json"}); err != nil {
		t.Fatal(err)
	}
	store.PutAt("_delta_log/00000000000000000002.checkpoint.parquet", nil, time.Now()) // not read: the gap is what matters
	if _, err := CreatePin(ctx, store, PinRequest{Version: ptr64(1), For: time.Hour, Reason: "r"}); err == nil {
		t.Fatal("a pin whose next commit is gone was written")
	}
}

// TestReadPin: every pin that cannot be trusted is invalid, with the reason; an expired one is
// expired; a good one active.
func TestReadPin(t *testing.T) {
	ctx := context.Background()
	const id = "0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21"
	now := time.Now().UTC()
	good := Pin{Format: pinFormat, ID: id, Table: "mem://t", Version: 3, Reason: "r", Created: now.Add(-time.Hour), Until: now.Add(time.Hour), By: Self()}
	body := func(edit func(p *Pin)) string {
		p := good
		edit(&p)
		b, _ := json.Marshal(p)
		return string(b)
	}
	for _, tc := range []struct {
		name, key, body, state, why string
	}{
		{"good", pinKey(id), body(func(*Pin) {}), PinActive, ""},
		{"expired", pinKey(id), body(func(p *Pin) { p.Until = now.Add(-time.Minute); p.Created = now.Add(-2 * time.Hour) }), PinExpired, ""},
		{"made in the future", pinKey(id), body(func(p *Pin) { p.Created = now.Add(time.Hour); p.Until = now.Add(2 * time.Hour) }), PinInvalid, "ahead of this clock"},
		{"longer than the maximum", pinKey(id), body(func(p *Pin) { p.Until = p.Created.Add(DefaultMaxPin + time.Hour) }), PinInvalid, "longer than the maximum"},
		{"ends before it starts", pinKey(id), body(func(p *Pin) { p.Until = p.Created.Add(-time.Hour) }), PinInvalid, "ends before"},
		{"another id", pinKey(id), body(func(p *Pin) { p.ID = "0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b22" }), PinInvalid, "names pin"},
		{"another format", pinKey(id), body(func(p *Pin) { p.Format = 2 }), PinInvalid, "format 2"},
		{"a negative version", pinKey(id), body(func(p *Pin) { p.Version = -1 }), PinInvalid, "version -1"},
		{"no reason", pinKey(id), body(func(p *Pin) { p.Reason = "" }), PinInvalid, "reason"},
		{"not JSON", pinKey(id), "{", PinInvalid, "not a pin"},
		{"an unknown member", pinKey(id), strings.Replace(body(func(*Pin) {}), "{", `{"forever":true,`, 1), PinInvalid, "forever"},
		{"a name that is no pin", PinsDir + PinPrefix + "x.json", body(func(*Pin) {}), PinInvalid, "not a pin deltavacuum writes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := mem.New("mem://t")
			store.PutAt(tc.key, []byte(tc.body), now)
			st := readPin(ctx, store, tc.key, now, DefaultMaxPin)
			if st.State != tc.state || !strings.Contains(st.Why, tc.why) {
				t.Errorf("%s: state %s (%s), want %s (%q)", tc.key, st.State, st.Why, tc.state, tc.why)
			}
		})
	}
	store := mem.New("mem://t")
	if st := readPin(ctx, store, pinKey(id), now, DefaultMaxPin); st.State != PinInvalid || !strings.Contains(st.Why, "cannot be read") {
		t.Errorf("a pin that is not there: %+v", st)
	}
}

// TestPinReaders: active pins are readers with their version and end; an expired one a note
// naming unpin; an invalid one refuses, naming the key and unpin.
func TestPinReaders(t *testing.T) {
	v := int64(3)
	until := time.Now().Add(time.Hour)
	rs, notes, err := pinReaders([]PinState{
		{Pin: Pin{ID: "a", Version: v, Reason: "audit", Until: until}, State: PinActive},
		{Pin: Pin{ID: "b", Version: 1, Reason: "old", Until: until.Add(-2 * time.Hour)}, State: PinExpired},
	}, "mem://t")
	if err != nil || len(rs) != 1 || *rs[0].Version != 3 || !rs[0].Until.Equal(until) || !strings.Contains(rs[0].Name, "audit") {
		t.Fatalf("readers %+v, %v", rs, err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "unpin mem://t b") {
		t.Errorf("notes: %v", notes)
	}
	_, _, err = pinReaders([]PinState{{Key: "k", State: PinInvalid, Why: "broken"}}, "mem://t")
	if !errors.Is(err, ErrInvalidPin) || !strings.Contains(err.Error(), "k") || !strings.Contains(err.Error(), "unpin") {
		t.Errorf("an invalid pin: %v", err)
	}
}

// TestUnpin: a pin removed; a bad id, and a pin that is not there, refused.
func TestUnpin(t *testing.T) {
	ctx := context.Background()
	store := readersFixture(t, false)
	pin, err := CreatePin(ctx, store, PinRequest{Version: ptr64(2), For: time.Hour, Reason: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if pins, err := ListPins(ctx, store, time.Now(), 0); err != nil || len(pins) != 1 || pins[0].ID != pin.ID {
		t.Fatalf("pins: %+v, %v", pins, err)
	}
	if err := Unpin(ctx, store, "x"); !errors.Is(err, ErrInvalidPin) {
		t.Errorf("a bad id: %v", err)
	}
	if err := Unpin(ctx, store, pin.ID); err != nil {
		t.Fatal(err)
	}
	if err := Unpin(ctx, store, pin.ID); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("a pin no longer there: %v", err)
	}
	if pins, err := ListPins(ctx, store, time.Now(), 0); err != nil || len(pins) != 0 {
		t.Errorf("pins after unpin: %+v, %v", pins, err)
	}
}

package run

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Pins: a reader registered by its owner (a notebook that will time-travel to last month's
// version, a report that must reproduce last quarter's figures, a job that started three hours
// ago). A pin is a small file LockDir/pin-<id>.json, in the lock's own folder, written with the
// store's put-if-absent while the table's lock is held (Start with PurposePin), so that a
// VACUUM, which takes the pins from the very listing that admits it to the lock, either sees a
// pin or runs entirely before it is written: a run pays nothing for pins it does not have. It names a version, a
// reason and an end: an expired pin is ignored and reported; one dated in the future, longer
// than the maximum, or unreadable refuses the run (never obeyed for ever, never ignored).

// PinsDir is the folder of a table's pins, relative to the table root: the lock's, whose
// listing every run makes anyway; a pin is PinsDir + PinPrefix + <id> + ".json".
const (
	PinsDir   = LockDir
	PinPrefix = pinPrefix
)

// DefaultMaxPin is the longest a pin may hold a version (the service's maxPin, the CLI's
// --max-pin change it).
const DefaultMaxPin = 30 * 24 * time.Hour

const pinFormat = 1

// Pin is one pin of a table.
type Pin struct {
	Format int    `json:"format"`
	ID     string `json:"id"`
	Table  string `json:"table"`
	// Version is the version pinned: every snapshot from it to the newest is kept.
	Version int64  `json:"version"`
	Reason  string `json:"reason"`
	// Created and Until: when it was written, when it lets go.
	Created time.Time `json:"created"`
	Until   time.Time `json:"until"`
	// By is the process that wrote it.
	By Process `json:"by"`
}

func pinKey(id string) string { return PinsDir + PinPrefix + id + ".json" }

// PinRequest is a pin to write.
type PinRequest struct {
	// Version, or else Timestamp: the version the table had then (the newest commit at or
	// before it, as time travel reads it).
	Version   *int64
	Timestamp *time.Time
	// For is how long the pin holds.
	For    time.Duration
	Reason string
	// MaxPin is the longest pin accepted (0: DefaultMaxPin).
	MaxPin time.Duration
	// Now is the clock (zero: the time now); StaleAfter the lock's stale limit.
	Now        time.Time
	StaleAfter time.Duration
}

// ErrInvalidPin is matched by the refusal of a pin request or of a pin found in the table.
var ErrInvalidPin = errors.New("invalid pin")

// CheckReason refuses a reason that says nothing, or more than a line of text.
func CheckReason(reason string) error {
	switch {
	case strings.TrimSpace(reason) == "":
		return fmt.Errorf("%w: a pin needs a reason (--reason): who needs the version, and why", ErrInvalidPin)
	case len(reason) > 500:
		return fmt.Errorf("%w: the reason is %d bytes; say it in 500 or fewer", ErrInvalidPin, len(reason))
	case !utf8.ValidString(reason):
		return fmt.Errorf("%w: the reason is not valid UTF-8", ErrInvalidPin)
	}
	for _, r := range reason {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: the reason holds the control character %U", ErrInvalidPin, r)
		}
	}
	return nil
}

func (r *PinRequest) maxPin() time.Duration {
	if r.MaxPin > 0 {
		return r.MaxPin
	}
	return DefaultMaxPin
}

// CreatePin pins a version of the table in store: the request is checked (one of a version and
// a timestamp, a duration within the maximum, a reason), the version must be one VACUUM can
// honour (in the log, with the commits after it), and the pin is written under the table's
// lock. A refusal writes nothing.
func CreatePin(ctx context.Context, store storage.Store, req PinRequest) (*Pin, error) {
	loc := store.Location()
	if (req.Version == nil) == (req.Timestamp == nil) {
		return nil, fmt.Errorf("%s: %w: give a version or a timestamp to pin, not both", loc, ErrInvalidPin)
	}
	if req.For <= 0 {
		return nil, fmt.Errorf("%s: %w: a pin holds for a time (--for 6h, 7d): %s is none", loc, ErrInvalidPin, req.For)
	}
	if req.For > req.maxPin() {
		return nil, fmt.Errorf("%s: %w: a pin of %s is longer than the maximum of %s; pin for less, and pin again when it ends", loc, ErrInvalidPin, req.For, req.maxPin())
	}
	if err := CheckReason(req.Reason); err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	snap, err := deltalog.Load(ctx, store)
	if err != nil {
		return nil, err
	}
	v, err := pinVersion(ctx, store, snap, req)
	if err != nil {
		return nil, err
	}
	if err := vacuumCanHonour(snap, v); err != nil {
		return nil, err
	}
	id, err := newTicketID()
	if err != nil {
		return nil, err
	}
	pin := &Pin{Format: pinFormat, ID: id, Table: loc, Version: v, Reason: req.Reason, Created: now.UTC(), Until: now.Add(req.For).UTC(), By: Self()}
	b, err := json.Marshal(pin)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	r, err := Start(ctx, store, Request{Purpose: PurposePin, StaleRunAfter: req.StaleAfter, Clock: func() time.Time { return now.Add(time.Since(began)) }})
	if err != nil {
		return nil, err
	}
	err = r.Do(ctx, func(ctx context.Context) (bool, error) {
		if err := store.PutIfAbsent(ctx, pinKey(id), b); err != nil {
			return false, fmt.Errorf("%s: writing the pin %s: %w", loc, pinKey(id), err)
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return pin, nil
}

// pinVersion is the version a request pins: the one given, or the version the table had at
// the timestamp.
func pinVersion(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, req PinRequest) (int64, error) {
	if req.Version != nil {
		if *req.Version < 0 || *req.Version > snap.Version {
			return 0, fmt.Errorf("%s: %w: version %d does not exist; the latest is %d", snap.Location, ErrInvalidPin, *req.Version, snap.Version)
		}
		return *req.Version, nil
	}
	times, err := snap.CommitTimestamps(ctx, store)
	if err != nil {
		return 0, err
	}
	v := int64(-1)
	for _, c := range times {
		if !c.Timestamp.After(*req.Timestamp) {
			v = c.Version
		}
	}
	if v < 0 {
		earliest := "none"
		if len(times) > 0 {
			earliest = times[0].Timestamp.UTC().Format(time.RFC3339)
		}
		return 0, fmt.Errorf("%s: %w: the table has no version at %s (its earliest commit still in the log is of %s)", snap.Location, ErrInvalidPin, req.Timestamp.UTC().Format(time.RFC3339), earliest)
	}
	return v, nil
}

// vacuumCanHonour refuses a version whose following commits the log no longer holds: VACUUM
// could not tell which files a reader of it needs, and would refuse every run.
func vacuumCanHonour(snap *deltalog.Snapshot, v int64) error {
	have := map[int64]bool{}
	for _, c := range snap.Segment.AllCommits {
		have[c.Version] = true
	}
	for next := v + 1; next <= snap.Version; next++ {
		if !have[next] && !snap.HoldsCommits(next) {
			return fmt.Errorf("%s: %w: version %d can no longer be pinned: the log no longer holds commit %d after it (cleaned up by the log retention), so what a reader of it needs cannot be known; pin a version from %d on",
				snap.Location, ErrInvalidPin, v, next, next)
		}
	}
	return nil
}

// PinState is a pin as a run reads it.
type PinState struct {
	Pin
	Key string `json:"key"`
	// State is "active", "expired" or "invalid" (Why says what is wrong: the run refuses).
	State string `json:"state"`
	Why   string `json:"why,omitempty"`
}

// Pin states.
const (
	PinActive  = "active"
	PinExpired = "expired"
	PinInvalid = "invalid"
)

// ListPins reads every pin of the table in store at now: one listing of the lock's folder, a
// read per pin. A pin that cannot be trusted (unreadable, of another table or id, dated ahead
// of now, or holding longer than maxPin) is PinInvalid.
func ListPins(ctx context.Context, store storage.Store, now time.Time, maxPin time.Duration) ([]PinState, error) {
	entries, err := listLock(ctx, store)
	if err != nil {
		return nil, err
	}
	return ReadPins(ctx, store, pinKeys(entries), now, maxPin), nil
}

// pinKeys are the keys of the pins among the entries of a listing of the lock's folder.
func pinKeys(entries []lockEntry) []string {
	var keys []string
	for _, e := range entries {
		// A directory or link named like a pin is one that cannot be trusted (readPin).
		if kind, _ := classify(lockEntry{Name: e.Name}); kind == namePin {
			keys = append(keys, foreignKey(e))
		}
	}
	sort.Strings(keys)
	return keys
}

// ReadPins reads the pins at keys at now (see ListPins).
func ReadPins(ctx context.Context, store storage.Store, keys []string, now time.Time, maxPin time.Duration) []PinState {
	if maxPin <= 0 {
		maxPin = DefaultMaxPin
	}
	out := make([]PinState, 0, len(keys))
	for _, key := range keys {
		out = append(out, readPin(ctx, store, key, now, maxPin))
	}
	return out
}

func readPin(ctx context.Context, store storage.Store, key string, now time.Time, maxPin time.Duration) PinState {
	st := PinState{Key: key, State: PinInvalid}
	name := strings.TrimSuffix(strings.TrimPrefix(key, PinsDir+PinPrefix), ".json")
	if strings.HasSuffix(key, "/") || !strings.HasSuffix(key, ".json") || !validTicketID(name) {
		st.Why = "it is not a pin deltavacuum writes (a pin is a file " + PinPrefix + "<id>.json)"
		return st
	}
	b, err := storage.ReadAll(ctx, store, key)
	if err != nil {
		st.Why = "it cannot be read: " + err.Error()
		return st
	}
	if err := json.Unmarshal(b, &st.Pin, json.RejectUnknownMembers(true)); err != nil {
		st.Why = "it is not a pin this deltavacuum reads: " + err.Error()
		return st
	}
	p := st.Pin
	switch {
	case p.Format != pinFormat:
		st.Why = fmt.Sprintf("format %d, this deltavacuum reads format %d", p.Format, pinFormat)
	case p.ID != name:
		st.Why = fmt.Sprintf("it names pin %q, its file name %q", p.ID, name)
	case p.Version < 0:
		st.Why = fmt.Sprintf("version %d", p.Version)
	case CheckReason(p.Reason) != nil:
		st.Why = CheckReason(p.Reason).Error()
	case p.Created.IsZero() || p.Until.IsZero() || !p.Until.After(p.Created):
		st.Why = "it names no time it was made, or ends before it"
	case p.Created.After(now.Add(MaxClockSkew)):
		st.Why = fmt.Sprintf("it was made %s, ahead of this clock (%s)", p.Created.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case p.Until.Sub(p.Created) > maxPin:
		st.Why = fmt.Sprintf("it holds for %s, longer than the maximum of %s: it would be obeyed too long", p.Until.Sub(p.Created), maxPin)
	case !p.Until.After(now):
		st.State = PinExpired
	default:
		st.State = PinActive
	}
	return st
}

// Unpin deletes pin id of the table (a run in progress keeps what it read; later ones no
// longer honour it). A pin that is not there is an error naming the table's pins.
func Unpin(ctx context.Context, store storage.Store, id string) error {
	if !validTicketID(id) {
		return fmt.Errorf("%s: %w: %q is not a pin id (deltavacuum pins TABLE lists them)", store.Location(), ErrInvalidPin, id)
	}
	res, err := store.Delete(ctx, []string{pinKey(id)})
	if err != nil {
		return err
	}
	switch {
	case res[0].Gone:
		return fmt.Errorf("%s has no pin %s (deltavacuum pins TABLE lists them): %w", store.Location(), id, storage.ErrNotExist)
	case res[0].Err != nil:
		return fmt.Errorf("%s: deleting the pin %s: %w", store.Location(), id, res[0].Err)
	}
	return nil
}

// pinReaders are the readers of a run from the table's pins at now: the active ones; an
// invalid pin refuses the run (fail closed), an expired one is reported in notes.
func pinReaders(pins []PinState, location string) (readers []vacuum.Reader, notes []string, err error) {
	for _, p := range pins {
		switch p.State {
		case PinInvalid:
			return nil, nil, fmt.Errorf("%s: %w: %s cannot be trusted (%s); nothing was done. deltavacuum pins %s shows the pins; deltavacuum unpin removes one",
				location, ErrInvalidPin, p.Key, p.Why, location)
		case PinExpired:
			notes = append(notes, fmt.Sprintf("the pin %s (%q, version %d) ended %s and is no longer honoured: deltavacuum unpin %s %s removes it",
				p.ID, p.Reason, p.Version, p.Until.UTC().Format(time.RFC3339), location, p.ID))
		default:
			v := p.Version
			readers = append(readers, vacuum.Reader{Kind: vacuum.ReaderPin, Name: fmt.Sprintf("%s (%s)", p.ID, p.Reason), Version: &v, Until: p.Until})
		}
	}
	return readers, notes, nil
}

package run

import (
	"maps"
	"slices"
	"sort"
	"strings"
)

// The steps of the table's lock, written once: Acquire, Unlock and a holder's checks perform
// them on a store (lock.go), and TestLockModel performs the very same machines on a model
// store, in every order of three processes and an unlock, with a crash before every step
// (lockmodel_test.go). What the machines decide is here; how a step touches a store, and how a
// ticket is judged live or dead, is the driver's.
//
// The protocol. A ticket is an object LockDir/<id>.json written with put-if-absent, its id a
// time-ordered UUID (version 7) that no other ticket ever has. To take the table a process:
//
//  1. looks: it lists LockDir and judges every ticket there (live, dead or unreadable); an
//     entry it cannot trust, or a live ticket of work it cannot run beside, refuses it at once,
//     having written nothing;
//  2. writes its ticket;
//  3. lists LockDir again, judges every other ticket listed and decides:
//     - an entry it cannot trust: it refuses;
//     - a live ticket of work it cannot run beside with a lower id (it came first), or one that
//       holds the table (its first heartbeat is listed): it refuses;
//     - such a ticket with a higher id that does not hold the table yet (it came while this
//       one was looking): it pauses and lists again (3), as the other refuses when it sees
//       this ticket; after maxWaits it refuses;
//     - otherwise it holds the table: it writes its first heartbeat (the mark by which others
//       refuse at once, rather than wait), then deletes the tickets of the dead processes it
//       judged (a takeover).
//
// A refused process deletes its own ticket and nothing else, and a refusal at the look writes
// nothing at all: a refusal leaves the folder as it found it (a takeover is done only by a
// process that holds the table).
//
// Why at most one of two processes that cannot run side by side holds the table (safety):
// each decides on a listing made after its own ticket was written. If A and B both held it,
// A's listing did not show B's ticket, so B wrote it after A listed, hence after A wrote its
// own; B listed after that and saw A's ticket, which A deletes only when it refuses or
// releases, and no one else deletes but as a takeover of a dead process or by unlock --force.
// So B did not hold the table: a contradiction. No number is chosen from a listing and no id
// is used twice, so no ticket freed by a cleanup can be taken again below a holder (the hole of
// the numbered queue of issue 25, which TestLockModel finds in a model of that rule). Which of
// two tickets is lower only decides who waits (liveness): the lowest live ticket never refuses
// for a higher one.
//
// A holder confirms, before every batch of deletes and before it reports success, that its
// ticket is still there (confirmStep): unlock --force, or a process that took it for dead,
// deletes it, and the holder then stops. Ticket ids are never reused, so a ticket found is
// this holder's own.
//
// A ticket is a lease. Others take it for stale once its last sign (its start, then its
// newest heartbeat) is older than the stale limit, so its own process trusts it only for the
// lease (the stale limit less a margin for clock skew) from the moment it began writing that
// sign, by every clock it has. A process that finds itself past its lease (it was stopped or
// suspended: another may have judged it stale and be about to delete its ticket, however soon
// it resumes) gives the ticket up: while taking the table it starts again with a new ticket
// (expire), while holding it stops. A confirmation alone would not do: the other's delete may
// come after it.

// stepKind is what a step asks of the driver.
type stepKind uint8

const (
	// stepPut writes a new ticket with put-if-absent; the driver names it (newID).
	stepPut stepKind = iota + 1
	// stepList lists LockDir.
	stepList
	// stepJudge reads the ticket key (and its heartbeat, when listed) and judges it.
	stepJudge
	// stepDelete deletes keys.
	stepDelete
	// stepBeat writes the first heartbeat: the mark of a ticket that holds the table.
	stepBeat
	// stepPause waits (attempt: how many pauses of its kind so far) before the next step.
	stepPause
	// stepStat looks for key: a holder's own ticket (confirmStep).
	stepStat
	// stepDone: the machine ended.
	stepDone
)

// lockStep is one step a machine asks for.
type lockStep struct {
	kind    stepKind
	key     string
	keys    []string
	hasBeat bool // stepJudge: the listing showed the ticket's heartbeat
	attempt int  // stepPause
}

// lockEntry is one entry of a listing of LockDir.
type lockEntry struct {
	// Name is the entry's name in LockDir (a directory's without its '/').
	Name string
	// Dir is set for a directory, Link for a symbolic link.
	Dir, Link bool
}

// Kinds of a name in LockDir.
const (
	nameIgnored        = iota // a local store's temporary file (".…"): not an entry of the lock
	nameTicket                // <id>.json
	nameBeat                  // <id>.heartbeat
	nameLegacyTicket          // <20 digits>.json: a ticket of a deltavacuum before issue 33
	nameLegacyBeat            // <20 digits>.heartbeat
	nameLegacyReleased        // <20 digits>.released
	namePin                   // pin-<id>.json: a pin (pins.go), which the lock leaves alone
	nameForeign               // anything else: nothing this deltavacuum writes
)

// classify says what a name in LockDir is, and the ticket id it belongs to.
func classify(e lockEntry) (kind int, id string) {
	name := e.Name
	if strings.HasPrefix(name, ".") && !e.Dir && !e.Link {
		return nameIgnored, ""
	}
	if e.Dir || e.Link {
		return nameForeign, ""
	}
	if id, ok := strings.CutPrefix(strings.TrimSuffix(name, ticketSuffix), pinPrefix); ok && strings.HasSuffix(name, ticketSuffix) && validTicketID(id) {
		return namePin, id
	}
	for _, s := range []struct {
		suffix       string
		kind, legacy int
	}{{ticketSuffix, nameTicket, nameLegacyTicket}, {beatSuffix, nameBeat, nameLegacyBeat}, {legacyReleasedSuffix, -1, nameLegacyReleased}} {
		id, ok := strings.CutSuffix(name, s.suffix)
		if !ok {
			continue
		}
		switch {
		case s.kind > 0 && validTicketID(id):
			return s.kind, id
		case legacyNumber(id):
			return s.legacy, id
		}
	}
	return nameForeign, ""
}

// pinPrefix begins the name of a pin in the lock's folder (pins.go: PinPrefix).
const pinPrefix = "pin-"

// legacyNumber reports whether s is the 20-digit number of a ticket of the numbered queue.
func legacyNumber(s string) bool {
	if len(s) != 20 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// lockListing is a listing of LockDir, sorted out.
type lockListing struct {
	tickets  []string        // ids of tickets, ascending (legacy ones included)
	legacy   map[string]bool // legacy ticket ids
	beats    map[string]bool // ids with a heartbeat listed
	released map[string]bool // legacy ids with a release marker
	foreign  []lockEntry     // entries this deltavacuum does not write
}

func sortOut(entries []lockEntry) lockListing {
	l := lockListing{legacy: map[string]bool{}, beats: map[string]bool{}, released: map[string]bool{}}
	for _, e := range entries {
		kind, id := classify(e)
		switch kind {
		case nameTicket:
			l.tickets = append(l.tickets, id)
		case nameLegacyTicket:
			l.tickets = append(l.tickets, id)
			l.legacy[id] = true
		case nameBeat, nameLegacyBeat:
			l.beats[id] = true
		case nameLegacyReleased:
			l.released[id] = true
		case nameForeign:
			l.foreign = append(l.foreign, e)
		}
	}
	sort.Strings(l.tickets)
	return l
}

// open are the tickets of the listing other than mine that hold or may hold the table: every
// ticket but a legacy one its own marker released.
func (l lockListing) open(mine string) []string {
	var out []string
	for _, id := range l.tickets {
		if id != mine && !(l.legacy[id] && l.released[id]) {
			out = append(out, id)
		}
	}
	return out
}

// keysOf are the objects of ticket id a cleanup deletes: the ticket, and its heartbeat and
// (legacy) release marker where listed.
func (l lockListing) keysOf(id string) []string {
	keys := []string{LockDir + id + ticketSuffix}
	if l.beats[id] {
		keys = append(keys, LockDir+id+beatSuffix)
	}
	if l.released[id] {
		keys = append(keys, LockDir+id+legacyReleasedSuffix)
	}
	return keys
}

// A judgement of a ticket, as the driver makes it.
type verdict struct {
	// State is StateLive, StateStale, StateGone or StateCorrupt; "" when the ticket was gone
	// by the time it was read (released since the listing).
	State string
	// Fits is true when the ticket's work may run beside the acquirer's (shards of one run).
	Fits bool
	// Holding describes the ticket for messages (set by the driver; the model leaves it zero).
	Holding Holding
}

// Machine parameters (the model test uses smaller bounds).
type lockBounds struct {
	maxPuts  int // puts that found their id taken (never, with random ids) before failing
	maxWaits int // listings waiting for a ticket above, still taking the table, to go
	maxStart int // new tickets after the process lost its own (expired, or deleted by another)
}

var defaultBounds = lockBounds{maxPuts: 3, maxWaits: 200, maxStart: 5}

// Outcomes of the acquirer.
const (
	acqRunning = iota
	acqAdmitted
	acqRefused // held, or unreadable: Refusal says by what
	acqFailed  // the machine gave up (ids taken, its ticket deleted again and again)
)

// acquirer is the machine that takes a ticket. The driver loops: step := a.next(); perform it;
// pass the result to the method of that step; until next returns stepDone.
type acquirer struct {
	bounds lockBounds

	// mine is the id of the ticket written at this attempt ("" before it is written).
	mine   string
	puts   int
	waits  int
	starts int

	phase    int
	listing  lockListing
	pending  []string // tickets of the listing still to judge
	verdicts map[string]verdict
	outcome  int
	// Refusal is the verdict of the ticket (or the foreign entry) that refused the table.
	Refusal  verdict
	Foreign  *lockEntry
	TakenOff []verdict // dead tickets deleted once the table is held
}

// Phases of the acquirer: the step it waits for the result of.
const (
	phLook = iota // the listing before the ticket is written
	phLookJudge
	phPut
	phList
	phJudge
	phBeat
	phTakeover
	phRestart // deleting mine (it expired), then a pause, then a new ticket
	phPause   // the pause after a restart
	phWait    // pausing before listing again
	phGiveUp  // deleting mine after a refusal
	phDone
)

func newAcquirer(b lockBounds) *acquirer { return &acquirer{bounds: b, phase: phLook} }

// next is the step the machine asks for now.
func (a *acquirer) next() lockStep {
	switch a.phase {
	case phLook, phList:
		return lockStep{kind: stepList}
	case phPut:
		return lockStep{kind: stepPut}
	case phLookJudge, phJudge:
		id := a.pending[0]
		return lockStep{kind: stepJudge, key: id, hasBeat: a.listing.beats[id]}
	case phBeat:
		return lockStep{kind: stepBeat, key: LockDir + a.mine + beatSuffix}
	case phTakeover:
		var keys []string
		for _, v := range a.TakenOff {
			keys = append(keys, a.listing.keysOf(v.Holding.ID)...)
		}
		return lockStep{kind: stepDelete, keys: keys}
	case phRestart, phGiveUp:
		return lockStep{kind: stepDelete, keys: []string{LockDir + a.mine + ticketSuffix, LockDir + a.mine + beatSuffix}}
	case phPause:
		return lockStep{kind: stepPause, attempt: a.starts}
	case phWait:
		return lockStep{kind: stepPause, attempt: a.waits}
	}
	return lockStep{kind: stepDone}
}

// put: the ticket id was written (ok), or was taken (exists).
func (a *acquirer) put(id string, exists bool) {
	a.puts++
	if exists {
		if a.puts >= a.bounds.maxPuts {
			a.outcome, a.phase = acqFailed, phDone
		}
		return // phPut again, with a new id
	}
	a.mine, a.phase = id, phList
}

// listed: a listing of LockDir (the look, or the listing after the put).
func (a *acquirer) listed(entries []lockEntry) {
	a.listing = sortOut(entries)
	a.verdicts = map[string]verdict{}
	if len(a.listing.foreign) > 0 {
		f := a.listing.foreign[0]
		a.Foreign = &f
		a.refuse(verdict{State: StateCorrupt})
		return
	}
	a.pending = a.listing.open(a.mine)
	if a.phase == phList && !contains(a.listing.tickets, a.mine) {
		// My own ticket is not listed: deleted by unlock --force or a takeover since it was
		// written. Start again with a new one.
		a.restart()
		return
	}
	a.judgeNext()
}

func contains(s []string, x string) bool {
	i := sort.SearchStrings(s, x)
	return i < len(s) && s[i] == x
}

// judged: the verdict of the ticket asked for.
func (a *acquirer) judged(v verdict) {
	id := a.pending[0]
	a.pending = a.pending[1:]
	if v.State != "" {
		v.Holding.ID = id
		a.verdicts[id] = v
	}
	a.judgeNext()
}

// judgeNext asks for the next verdict, or decides once every open ticket is judged.
func (a *acquirer) judgeNext() {
	if len(a.pending) > 0 {
		if a.phase == phLook {
			a.phase = phLookJudge
		} else if a.phase == phList {
			a.phase = phJudge
		}
		return
	}
	a.decide()
}

// decide is the rule of the protocol, on the verdicts of every other open ticket.
func (a *acquirer) decide() {
	ids := make([]string, 0, len(a.verdicts))
	for id := range a.verdicts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	look := a.mine == ""
	var above *verdict
	var dead []verdict
	for _, id := range ids {
		v := a.verdicts[id]
		switch {
		case v.State == StateCorrupt:
			a.refuse(v)
			return
		case v.State == StateStale || v.State == StateGone:
			dead = append(dead, v)
		case v.Fits:
		case look || id < a.mine || a.listing.beats[id] || a.listing.legacy[id]:
			a.refuse(v) // it came first, or holds the table
			return
		case above == nil:
			above = &v
		}
	}
	switch {
	case look:
		a.phase = phPut
	case above != nil:
		if a.waits >= a.bounds.maxWaits {
			a.refuse(*above)
			return
		}
		a.waits++
		a.phase = phWait
	default:
		a.TakenOff = dead
		a.phase = phBeat
	}
}

// beaten: the first heartbeat is written: the table is held, once the tickets of the dead are
// deleted.
func (a *acquirer) beaten() {
	if len(a.TakenOff) > 0 {
		a.phase = phTakeover
		return
	}
	a.outcome, a.phase = acqAdmitted, phDone
}

func (a *acquirer) refuse(v verdict) {
	a.Refusal, a.outcome = v, acqRefused
	if a.mine == "" {
		a.phase = phDone // nothing written
		return
	}
	a.phase = phGiveUp
}

// restart gives up the ticket of this attempt for a new one.
func (a *acquirer) restart() {
	if a.starts >= a.bounds.maxStart {
		a.outcome = acqFailed
		if a.mine == "" {
			a.phase = phDone
		} else {
			a.phase = phGiveUp
		}
		return
	}
	a.starts++
	a.TakenOff, a.pending = nil, nil
	if a.mine == "" {
		a.phase = phPause
		return
	}
	a.phase = phRestart
}

// deleted: the delete asked for is done.
func (a *acquirer) deleted() {
	switch a.phase {
	case phTakeover:
		a.outcome, a.phase = acqAdmitted, phDone
	case phRestart:
		a.mine, a.phase = "", phPause
	case phGiveUp:
		a.mine, a.phase = "", phDone
	}
}

// paused: the pause asked for is over.
func (a *acquirer) paused() {
	switch a.phase {
	case phPause:
		a.phase = phPut
	case phWait:
		a.phase = phList
	}
}

// expire: the process was away (stopped, suspended) for longer than its ticket's lease, so that
// another process may have taken the ticket for stale and be about to delete it: whatever was
// listed and judged since it was written is no evidence now. The ticket is given up and a new
// one taken after a pause; a takeover in progress is abandoned.
func (a *acquirer) expire() {
	switch a.phase {
	case phList, phJudge, phBeat, phTakeover, phWait:
		a.restart()
	}
}

// confirmStep is the step by which a holder shows it still holds the table: its ticket is
// there. (A ticket id is never used twice, so a ticket found is the holder's own.)
func confirmStep(id string) lockStep {
	return lockStep{kind: stepStat, key: LockDir + id + ticketSuffix}
}

// releaseStep deletes a holder's ticket and heartbeat: the ticket first, so that a release cut
// short leaves no ticket without the heartbeat that dates it.
func releaseStep(id string) lockStep {
	return lockStep{kind: stepDelete, keys: []string{LockDir + id + ticketSuffix, LockDir + id + beatSuffix}}
}

// unlocker is the machine of deltavacuum unlock: list, judge every ticket, then delete what no
// live process holds (everything with force) and every entry that would refuse a run.
type unlocker struct {
	force, dryRun bool

	phase    int
	listing  lockListing
	pending  []string
	Verdicts []verdict // every ticket judged, in id order
	// Delete are the keys the unlock deletes (or would, in a dry run).
	Delete []string
}

const (
	unList = iota
	unJudge
	unDelete
	unDone
)

func (u *unlocker) next() lockStep {
	switch u.phase {
	case unList:
		return lockStep{kind: stepList}
	case unJudge:
		id := u.pending[0]
		return lockStep{kind: stepJudge, key: id, hasBeat: u.listing.beats[id]}
	case unDelete:
		return lockStep{kind: stepDelete, keys: u.Delete}
	}
	return lockStep{kind: stepDone}
}

func (u *unlocker) listed(entries []lockEntry) {
	u.listing = sortOut(entries)
	u.pending = u.listing.open("")
	u.judgeNext()
}

func (u *unlocker) judged(v verdict) {
	id := u.pending[0]
	u.pending = u.pending[1:]
	v.Holding.ID = id
	if v.State == "" {
		v.State = stateReleased // gone since the listing: nothing to do
	}
	u.Verdicts = append(u.Verdicts, v)
	if v.State != stateReleased && (v.State != StateLive || u.force) {
		u.Delete = append(u.Delete, u.listing.keysOf(id)...)
	}
	u.judgeNext()
}

func (u *unlocker) judgeNext() {
	if len(u.pending) > 0 {
		u.phase = unJudge
		return
	}
	// What no ticket owns: legacy markers and heartbeats of tickets no longer there, and the
	// entries that refuse every run.
	have := map[string]bool{}
	for _, id := range u.listing.tickets {
		have[id] = true
	}
	for id := range u.listing.beats {
		if !have[id] {
			u.Delete = append(u.Delete, LockDir+id+beatSuffix)
		}
	}
	for id := range u.listing.released {
		if !have[id] {
			u.Delete = append(u.Delete, LockDir+id+legacyReleasedSuffix)
		}
	}
	for _, f := range u.listing.foreign {
		u.Delete = append(u.Delete, foreignKey(f))
	}
	sort.Strings(u.Delete)
	if len(u.Delete) == 0 || u.dryRun {
		u.phase = unDone
		return
	}
	u.phase = unDelete
}

func (u *unlocker) deleted() { u.phase = unDone }

// foreignKey is the key of an entry of LockDir (a directory's ends in '/').
func foreignKey(e lockEntry) string {
	if e.Dir {
		return LockDir + e.Name + "/"
	}
	return LockDir + e.Name
}

// stateReleased is the state of a ticket that was gone by the time it was read.
const stateReleased = "released"

// clone copies the machine, so that a model can follow it down two paths (lockmodel_test.go).
func (a *acquirer) clone() *acquirer {
	c := *a
	c.listing = a.listing.clone()
	c.pending = slices.Clone(a.pending)
	c.verdicts = maps.Clone(a.verdicts)
	if a.Foreign != nil {
		f := *a.Foreign
		c.Foreign = &f
	}
	c.TakenOff = slices.Clone(a.TakenOff)
	return &c
}

func (u *unlocker) clone() *unlocker {
	c := *u
	c.listing = u.listing.clone()
	c.pending = slices.Clone(u.pending)
	c.Verdicts = slices.Clone(u.Verdicts)
	c.Delete = slices.Clone(u.Delete)
	return &c
}

func (l lockListing) clone() lockListing {
	return lockListing{tickets: slices.Clone(l.tickets), legacy: maps.Clone(l.legacy), beats: maps.Clone(l.beats),
		released: maps.Clone(l.released), foreign: slices.Clone(l.foreign)}
}

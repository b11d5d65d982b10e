package run

import (
	"fmt"
	"hash/fnv"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The lock's protocol, explored exhaustively. TestLockModel runs the machines of lockproto.go
// (the acquirer and the unlocker that Acquire and Unlock drive on a real store) as processes
// over a model store with put-if-absent, put, list, stat and delete, and visits every state
// reachable by interleaving their steps, with every process free to crash before any step, to
// be suspended (a SIGSTOP, a frozen VM: others may then take it for stale) and to be judged
// dead or live when it crashed. A holder's program is the run's: confirm its ticket, delete a
// batch (the critical step), beat, confirm, delete, release; before a delete it confirms again
// when it was suspended since its last confirmation (Lock.Fresh).
//
// Checked in every state:
//   - no two processes that cannot run side by side delete at once: when one deletes, no
//     other holds the table whose ticket is still there, and none deletes after its ticket
//     was deleted by another (unless by unlock --force, whose victim may finish the batch it
//     confirmed: docs/lock.md);
//   - a refused process leaves nothing behind and deleted nothing but its own ticket;
//   - when every process has ended without crashing, the lock folder is empty.
//
// The same explorer runs a model of the numbered queue that issue 25 shipped (list, take the
// next number with put-if-absent, look only below it, release markers and a cleanup of the
// released numbers below the highest) and must find the violation issue 33 reported there.

// Model objects.
type mobj struct {
	owner int // the process that wrote it
	kind  byte
}

const (
	kTicket = 't'
	kBeat   = 'b'
	kMarker = 'm' // the numbered queue's release marker
)

// Process kinds.
const (
	pRunner = iota
	pUnlocker
	pUnlockerForce
	pOldRunner
)

// Holder program counters (after the acquirer admits).
const (
	pcAcquire = iota
	pcConfirm1
	pcDelete1
	pcBeatStat
	pcBeatWrite
	pcConfirm2
	pcDelete2
	pcRelease
	pcReleaseList  // numbered queue: the cleanup's listing
	pcReleaseClean // numbered queue: delete the released tickets, then their markers
	pcReleaseMarks
	pcDone
)

type mproc struct {
	kind  int
	class string // "whole", or "shard0"/"shard1": the two shards of one run, which fit

	acq *acquirer
	unl *unlocker
	old *oldQueue

	pc        int
	id        string
	admitted  bool
	crashed   bool
	done      bool
	refused   bool
	lost      bool
	suspended bool
	wasSusp   bool // suspended once already (at most once a process)
	expired   bool // resumed after a suspension: past its lease
	evicted   bool // its ticket was deleted by another process while it held the table
	forced    bool // ... by unlock --force while it was live
	released  bool // it let the table go (its release step)
	deletedOf bool // it deleted an object of another process during its acquisition
}

// oldQueue is the numbered queue's acquisition, as issue 25 shipped it (test only).
type oldQueue struct {
	phase   int
	n       int   // the number chosen
	pending []int // open tickets below n to judge
	dead    []int
	cleanup []int // numbers a cleanup deletes
}

type world struct {
	long    bool // the holder's long program (two batches and a heartbeat between)
	store   map[string]mobj
	procs   []*mproc
	clock   int // ids are made from it: later ids sort higher
	crashes int // crashes left
	susp    int // suspensions left
}

func (w *world) clone() *world {
	c := &world{long: w.long, store: make(map[string]mobj, len(w.store)), clock: w.clock, crashes: w.crashes, susp: w.susp}
	for k, v := range w.store {
		c.store[k] = v
	}
	for _, p := range w.procs {
		q := *p
		if p.acq != nil {
			q.acq = p.acq.clone()
		}
		if p.unl != nil {
			q.unl = p.unl.clone()
		}
		if p.old != nil {
			o := *p.old
			o.pending = append([]int(nil), p.old.pending...)
			o.dead = append([]int(nil), p.old.dead...)
			o.cleanup = append([]int(nil), p.old.cleanup...)
			q.old = &o
		}
		c.procs = append(c.procs, &q)
	}
	return c
}

// key is the state, canonical: two paths to the same state are explored once. Processes of one
// kind and class are interchangeable, so the key lists them in the order of their own states
// (and the store's owners by that order): the states that differ only by which of two equal
// processes did what are one.
func (w *world) key() string {
	locals := make([]string, len(w.procs))
	order := make([]int, len(w.procs))
	for i, p := range w.procs {
		locals[i] = p.localKey()
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		pa, pb := w.procs[order[a]], w.procs[order[b]]
		if pa.kind != pb.kind || pa.class != pb.class {
			return order[a] < order[b] // only equal processes trade places
		}
		return locals[order[a]] < locals[order[b]]
	})
	rank := make([]int, len(w.procs))
	for r, i := range order {
		rank[i] = r
	}
	var b strings.Builder
	keys := make([]string, 0, len(w.store))
	for k := range w.store {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o := w.store[k]
		fmt.Fprintf(&b, "%s=%d%c;", short(k), rank[o.owner], o.kind)
	}
	fmt.Fprintf(&b, "|%d|%d|%d|", w.clock, w.crashes, w.susp)
	for _, i := range order {
		b.WriteString(locals[i])
		b.WriteByte('|')
	}
	return b.String()
}

// short is an id or key without what every one has.
func short(k string) string {
	return strings.TrimPrefix(strings.TrimPrefix(k, LockDir), "00000000-0000-7000-8000-")
}

// localKey is the state of one process.
func (p *mproc) localKey() string {
	b := make([]byte, 0, 256)
	flags := 0
	for i, f := range []bool{p.admitted, p.crashed, p.done, p.refused, p.lost, p.suspended, p.wasSusp, p.expired,
		p.evicted, p.forced, p.deletedOf, p.released} {
		if f {
			flags |= 1 << i
		}
	}
	num := func(n int) { b = strconv.AppendInt(b, int64(n), 10); b = append(b, ',') }
	str := func(s string) { b = append(b, short(s)...); b = append(b, ',') }
	num(p.kind)
	str(p.class)
	num(p.pc)
	str(p.id)
	num(flags)
	if a := p.acq; a != nil {
		if a.Foreign != nil || len(a.listing.legacy)+len(a.listing.released)+len(a.listing.foreign) > 0 {
			panic("the model plants no foreign or legacy entry")
		}
		b = append(b, 'a')
		num(a.phase)
		str(a.mine)
		num(a.puts)
		num(a.starts)
		num(a.waits)
		num(a.outcome)
		for _, id := range a.listing.tickets {
			if a.listing.beats[id] {
				b = append(b, '*')
			}
			str(id)
		}
		b = append(b, ';')
		for _, id := range a.pending {
			str(id)
		}
		b = append(b, ';')
		ids := make([]string, 0, len(a.verdicts))
		for id := range a.verdicts {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			v := a.verdicts[id]
			str(id)
			str(v.State)
			if v.Fits {
				b = append(b, 'f')
			}
		}
		b = append(b, ';')
		str(a.Refusal.State)
		if a.Refusal.Fits {
			b = append(b, 'f')
		}
		b = append(b, ';')
		for _, v := range a.TakenOff {
			str(v.Holding.ID)
		}
	}
	if u := p.unl; u != nil {
		b = append(b, 'u')
		num(u.phase)
		if u.force {
			b = append(b, 'F')
		}
		if u.dryRun {
			b = append(b, 'D')
		}
		for _, id := range u.listing.tickets {
			if u.listing.beats[id] {
				b = append(b, '*')
			}
			str(id)
		}
		orphans := []string{}
		for id := range u.listing.beats {
			if !contains(u.listing.tickets, id) {
				orphans = append(orphans, id)
			}
		}
		sort.Strings(orphans)
		for _, id := range orphans {
			b = append(b, 'o')
			str(id)
		}
		b = append(b, ';')
		for _, id := range u.pending {
			str(id)
		}
		b = append(b, ';')
		for _, v := range u.Verdicts {
			str(v.Holding.ID)
			str(v.State)
		}
		b = append(b, ';')
		for _, k := range u.Delete {
			str(k)
		}
	}
	if o := p.old; o != nil {
		b = fmt.Appendf(b, "o%+v", *o)
	}
	return string(b)
}

func fits(a, b string) bool {
	return a != b && strings.HasPrefix(a, "shard") && strings.HasPrefix(b, "shard")
}

func modelID(clock int) string { return fmt.Sprintf("00000000-0000-7000-8000-%012d", clock) }

func oldName(n int) string { return fmt.Sprintf("%020d", n) }

// entries is the listing of LockDir.
func (w *world) entries() []lockEntry {
	var out []lockEntry
	for k := range w.store {
		out = append(out, lockEntry{Name: strings.TrimPrefix(k, LockDir)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// verdicts are what a judge of the ticket key (an id) may say: nothing when it is gone; live
// for a process that runs; live, or dead (gone or stale), for one that crashed or is suspended.
func (w *world) verdicts(judgeOf *mproc, id string) []verdict {
	o, ok := w.store[ticketKey(id)]
	if !ok {
		return []verdict{{}}
	}
	owner := w.procs[o.owner]
	v := verdict{State: StateLive, Fits: fits(judgeOf.class, owner.class)}
	if owner.crashed || owner.suspended {
		d := v
		d.State = StateStale
		return []verdict{v, d}
	}
	return []verdict{v}
}

// deleteKeys deletes keys for process i, noting whose objects went.
func (w *world) deleteKeys(i int, keys []string, force bool) {
	p := w.procs[i]
	for _, k := range keys {
		o, ok := w.store[k]
		if !ok {
			continue
		}
		delete(w.store, k)
		if o.owner == i {
			continue
		}
		q := w.procs[o.owner]
		if o.kind == kTicket && !q.released && k == LockDir+q.id+ticketSuffix { // its current ticket
			q.evicted = true
			// The victim of unlock --force may finish the batch it confirmed (docs/lock.md).
			if force && q.admitted && !q.crashed && !q.suspended {
				q.forced = true
			}
		}
		if p.pc == pcAcquire && p.kind != pUnlocker && p.kind != pUnlockerForce && !p.admitted {
			p.deletedOf = true
		}
	}
}

// violation is what is wrong in w after process i's step, or "".
func check(w *world, i int, deleting, exclusionOnly bool) string {
	p := w.procs[i]
	if deleting {
		if p.evicted && !p.forced {
			return fmt.Sprintf("process %d deletes after its ticket was taken over", i)
		}
		for j, q := range w.procs {
			if j == i || fits(p.class, q.class) || p.forced || q.forced {
				continue
			}
			if q.admitted && !q.released && !q.crashed && !q.lost && !q.evicted {
				return fmt.Sprintf("processes %d and %d hold the table together and %d deletes", i, j, i)
			}
		}
	}
	if p.refused && p.done && !exclusionOnly {
		for k, o := range w.store {
			if o.owner == i {
				return fmt.Sprintf("refused process %d left %s", i, k)
			}
		}
		if p.deletedOf {
			return fmt.Sprintf("refused process %d deleted another's object", i)
		}
	}
	return ""
}

// moves are the worlds one step of process i leads to.
func (w *world) moves(i int) []*world {
	p := w.procs[i]
	switch p.kind {
	case pRunner:
		return w.runnerMoves(i)
	case pUnlocker, pUnlockerForce:
		return w.unlockerMoves(i)
	case pOldRunner:
		return w.oldMoves(i)
	}
	return nil
}

// settle takes the steps of process i that no other process can see (a pause, the end of
// the acquisition) at once: they commute with every step of the others.
func (w *world) settle(i int) {
	q := w.procs[i]
	for q.pc == pcAcquire {
		switch st := q.acq.next(); st.kind {
		case stepPause:
			q.acq.paused()
		case stepDone:
			if q.acq.outcome == acqAdmitted {
				q.admitted, q.pc = true, pcConfirm1
			} else {
				q.refused, q.done, q.pc = true, true, pcDone
			}
		default:
			return
		}
	}
}

func (w *world) runnerMoves(i int) []*world {
	p := w.procs[i]
	if p.expired {
		// The driver's check of the lease before a step (Acquire, Lock.Fresh): past it, the
		// ticket is given up.
		c := w.clone()
		q := c.procs[i]
		q.expired = false
		if q.pc == pcAcquire {
			q.acq.expire()
			c.settle(i)
		} else if q.pc != pcRelease {
			q.lost, q.pc = true, pcRelease
		}
		return []*world{c}
	}
	if p.pc == pcAcquire {
		st := p.acq.next()
		if st.kind == stepJudge {
			var out []*world
			for _, v := range w.verdicts(p, st.key) {
				c := w.clone()
				c.procs[i].acq.judged(v)
				c.settle(i)
				out = append(out, c)
			}
			return out
		}
		c := w.clone()
		q := c.procs[i]
		switch st.kind {
		case stepPut:
			id := modelID(c.clock)
			c.clock++
			c.store[ticketKey(id)] = mobj{owner: i, kind: kTicket}
			q.id, q.evicted = id, false
			q.acq.put(id, false)
		case stepList:
			q.acq.listed(c.entries())
		case stepDelete:
			c.deleteKeys(i, st.keys, false)
			q.acq.deleted()
		case stepBeat:
			c.store[st.key] = mobj{owner: i, kind: kBeat}
			q.acq.beaten()
		}
		c.settle(i)
		return []*world{c}
	}
	c := w.clone()
	q := c.procs[i]
	present := func() bool { _, ok := c.store[ticketKey(q.id)]; return ok }
	switch q.pc {
	case pcConfirm1, pcConfirm2, pcBeatStat:
		if !present() {
			q.lost, q.pc = true, pcRelease
		} else {
			q.pc++
		}
	case pcDelete1, pcDelete2:
		q.pc++
		if q.pc == pcDelete2+1 || !c.long {
			q.pc = pcRelease
		}
	case pcBeatWrite:
		c.store[beatKey(q.id)] = mobj{owner: i, kind: kBeat}
		q.pc++
	case pcRelease:
		c.deleteKeys(i, releaseStep(q.id).keys, false)
		q.released, q.done, q.pc = true, true, pcDone
	}
	return []*world{c}
}

// deletes reports whether process i's next step (in w) is a batch of deletes.
func (w *world) deletes(i int) bool {
	p := w.procs[i]
	return (p.kind == pRunner || p.kind == pOldRunner) && (p.pc == pcDelete1 || p.pc == pcDelete2) && !p.expired
}

func (w *world) unlockerMoves(i int) []*world {
	p := w.procs[i]
	st := p.unl.next()
	if st.kind == stepJudge {
		var out []*world
		for _, v := range w.verdicts(p, st.key) {
			c := w.clone()
			c.procs[i].unl.judged(v)
			out = append(out, c)
		}
		return out
	}
	c := w.clone()
	q := c.procs[i]
	switch st.kind {
	case stepList:
		q.unl.listed(c.entries())
	case stepDelete:
		c.deleteKeys(i, st.keys, q.kind == pUnlockerForce)
		q.unl.deleted()
	case stepDone:
		q.done, q.pc = true, pcDone
	}
	return []*world{c}
}

// The numbered queue of issue 25: list, take max+1 with put-if-absent (listing again when it
// is taken), list, judge every open ticket below, release its own ticket when refused.
func (w *world) oldMoves(i int) []*world {
	p := w.procs[i]
	o := p.old
	numbers := func(c *world) (max int, open []int, released map[int]bool, tickets map[int]bool) {
		released, tickets = map[int]bool{}, map[int]bool{}
		for k, ob := range c.store {
			var n int
			fmt.Sscanf(strings.TrimPrefix(k, LockDir), "%d", &n)
			if n > max {
				max = n
			}
			switch ob.kind {
			case kMarker:
				released[n] = true
			case kTicket:
				tickets[n] = true
			}
		}
		for n := range tickets {
			if !released[n] {
				open = append(open, n)
			}
		}
		sort.Ints(open)
		return
	}
	if p.pc == pcAcquire {
		if o.phase == 3 && len(o.pending) > 0 {
			var out []*world
			for _, v := range w.verdicts(p, oldName(o.pending[0])) {
				c := w.clone()
				q := c.procs[i]
				n := q.old.pending[0]
				q.old.pending = q.old.pending[1:]
				switch {
				case v.State == StateLive && !v.Fits:
					q.old.phase = 5 // refused: release its own
				case v.State == StateStale:
					q.old.dead = append(q.old.dead, n)
				}
				out = append(out, c)
			}
			return out
		}
		c := w.clone()
		q := c.procs[i]
		switch q.old.phase {
		case 0: // list, choose
			max, _, _, _ := numbers(c)
			q.old.n, q.old.phase = max+1, 1
		case 1: // put-if-absent
			k := LockDir + oldName(q.old.n) + ticketSuffix
			if _, taken := c.store[k]; taken {
				q.old.phase = 0
				break
			}
			c.store[k] = mobj{owner: i, kind: kTicket}
			q.id, q.old.phase = oldName(q.old.n), 2
		case 2: // list, the open tickets below
			_, open, _, _ := numbers(c)
			for _, n := range open {
				if n < q.old.n {
					q.old.pending = append(q.old.pending, n)
				}
			}
			q.old.phase = 3
		case 3: // judged every one: release the dead, admitted
			for _, n := range q.old.dead {
				c.store[LockDir+oldName(n)+legacyReleasedSuffix] = mobj{owner: i, kind: kMarker}
			}
			q.admitted, q.pc = true, pcConfirm1
		case 5: // refused: its release marker
			c.store[LockDir+oldName(q.old.n)+legacyReleasedSuffix] = mobj{owner: i, kind: kMarker}
			q.refused, q.done, q.pc = true, true, pcDone
		}
		return []*world{c}
	}
	c := w.clone()
	q := c.procs[i]
	lost := func() bool {
		_, marked := c.store[LockDir+q.id+legacyReleasedSuffix]
		_, there := c.store[LockDir+q.id+ticketSuffix]
		return marked || !there
	}
	switch q.pc {
	case pcConfirm1, pcConfirm2, pcBeatStat:
		if lost() {
			q.lost, q.pc = true, pcRelease
		} else {
			q.pc++
		}
	case pcDelete1, pcDelete2:
		q.pc++
		if q.pc == pcDelete2+1 || !c.long {
			q.pc = pcRelease
		}
	case pcBeatWrite:
		c.store[LockDir+q.id+beatSuffix] = mobj{owner: i, kind: kBeat}
		q.pc++
	case pcRelease:
		c.store[LockDir+q.id+legacyReleasedSuffix] = mobj{owner: i, kind: kMarker}
		q.released, q.pc = true, pcReleaseList
	case pcReleaseList:
		max, _, released, tickets := numbers(c)
		q.old.cleanup = nil
		for n := range released {
			if n != max && tickets[n] {
				q.old.cleanup = append(q.old.cleanup, n)
			}
		}
		sort.Ints(q.old.cleanup)
		q.pc = pcReleaseClean
	case pcReleaseClean:
		var keys []string
		for _, n := range q.old.cleanup {
			keys = append(keys, LockDir+oldName(n)+ticketSuffix, LockDir+oldName(n)+beatSuffix)
		}
		c.deleteKeys(i, keys, false)
		q.pc = pcReleaseMarks
	case pcReleaseMarks:
		var keys []string
		for _, n := range q.old.cleanup {
			keys = append(keys, LockDir+oldName(n)+legacyReleasedSuffix)
		}
		c.deleteKeys(i, keys, false)
		q.done, q.pc = true, pcDone
	}
	return []*world{c}
}

// modelConfig is one exploration.
type modelConfig struct {
	procs    []mproc // kind and class of each
	crashes  int     // crashes in one execution
	suspends int     // suspensions in one execution (the suspended may be taken for stale)
	long     bool    // the holder's long program
	// exclusionOnly checks only that no two processes delete together (the numbered queue
	// fails the other checks too: a refusal there leaves its marker).
	exclusionOnly bool
	bounds        lockBounds
}

type modelResult struct {
	states, transitions, maxDepth int
	violation                     string
	trace                         []string
}

// explore visits every state reachable in cfg, depth first, and stops at the first violation
// with the trace of the steps that led to it.
func explore(cfg modelConfig) modelResult {
	w0 := &world{long: cfg.long, store: map[string]mobj{}, crashes: cfg.crashes, susp: cfg.suspends}
	for _, p := range cfg.procs {
		q := p
		switch q.kind {
		case pRunner:
			q.acq = newAcquirer(cfg.bounds)
		case pUnlocker:
			q.unl = &unlocker{}
		case pUnlockerForce:
			q.unl = &unlocker{force: true}
		case pOldRunner:
			q.old = &oldQueue{}
		}
		w0.procs = append(w0.procs, &q)
	}
	type frame struct {
		w     *world
		trace *traceNode
	}
	var res modelResult
	seen := map[[16]byte]bool{hashKey(w0.key()): true}
	stack := []frame{{w: w0}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		res.states++
		res.maxDepth = max(res.maxDepth, f.trace.depth())
		w := f.w
		var before string
		if res.states%64 == 1 {
			before = w.key() // a sample: moves must not change the state they start from
		}
		allDone := true
		for i, p := range w.procs {
			if p.done || p.crashed {
				continue
			}
			allDone = false
			type next struct {
				w        *world
				what     string
				deleting bool
			}
			var nexts []next
			if p.suspended {
				c := w.clone()
				c.procs[i].suspended = false
				c.procs[i].expired = c.procs[i].kind == pRunner
				nexts = append(nexts, next{c, fmt.Sprintf("%d resumes", i), false})
			} else {
				del := w.deletes(i)
				for _, c := range w.moves(i) {
					nexts = append(nexts, next{c, fmt.Sprintf("%d: %s", i, describeStep(w, i)), del})
				}
				if w.crashes > 0 {
					c := w.clone()
					c.crashes--
					c.procs[i].crashed = true
					nexts = append(nexts, next{c, fmt.Sprintf("%d crashes", i), false})
				}
				if w.susp > 0 && !p.wasSusp {
					c := w.clone()
					c.susp--
					c.procs[i].suspended, c.procs[i].wasSusp = true, true
					nexts = append(nexts, next{c, fmt.Sprintf("%d is suspended", i), false})
				}
			}
			for _, n := range nexts {
				res.transitions++
				trace := &traceNode{what: n.what, parent: f.trace}
				if v := check(n.w, i, n.deleting, cfg.exclusionOnly); v != "" {
					res.violation, res.trace = v, trace.steps()
					return res
				}
				if k := hashKey(n.w.key()); !seen[k] {
					seen[k] = true
					stack = append(stack, frame{n.w, trace})
				}
			}
		}
		if before != "" && w.key() != before {
			panic("a move changed the state it came from: a clone shares memory")
		}
		if allDone {
			clean := true
			for _, p := range w.procs {
				clean = clean && !p.crashed
			}
			if clean && len(w.store) > 0 && w.procs[0].kind != pOldRunner {
				res.violation, res.trace = fmt.Sprintf("every process ended, and the lock folder still holds %v", w.entries()), f.trace.steps()
				return res
			}
		}
	}
	return res
}

// traceNode is a step of the path to a state (shared by the states below it).
type traceNode struct {
	what   string
	parent *traceNode
}

func (t *traceNode) depth() int {
	n := 0
	for ; t != nil; t = t.parent {
		n++
	}
	return n
}

func (t *traceNode) steps() []string {
	var out []string
	for ; t != nil; t = t.parent {
		out = append(out, t.what)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// hashKey is a state's key in 128 bits (the states are many).
func hashKey(k string) [16]byte {
	h := fnv.New128a()
	h.Write([]byte(k))
	var out [16]byte
	h.Sum(out[:0])
	return out
}

func describeStep(w *world, i int) string {
	p := w.procs[i]
	if p.kind == pOldRunner && p.pc == pcAcquire {
		return fmt.Sprintf("numbered queue phase %d (ticket %d)", p.old.phase, p.old.n)
	}
	if p.pc == pcAcquire && p.acq != nil {
		st := p.acq.next()
		return fmt.Sprintf("acquire step %d %s%v", st.kind, st.key, st.keys)
	}
	if p.unl != nil {
		st := p.unl.next()
		return fmt.Sprintf("unlock step %d %s%v", st.kind, st.key, st.keys)
	}
	names := map[int]string{pcConfirm1: "confirm", pcDelete1: "delete a batch", pcBeatStat: "heartbeat: look at the ticket",
		pcBeatWrite: "heartbeat: write", pcConfirm2: "confirm", pcDelete2: "delete a batch", pcRelease: "release",
		pcReleaseList: "cleanup: list", pcReleaseClean: "cleanup: delete released tickets", pcReleaseMarks: "cleanup: delete markers"}
	return names[p.pc]
}

var modelBounds = lockBounds{maxPuts: 1, maxWaits: 1, maxStart: 1}

// TestLockModel explores the protocol: the numbered queue fails, the protocol of lockproto.go
// holds in every configuration. The sizes explored are in docs/lock.md.
func TestLockModel(t *testing.T) {
	t.Run("the numbered queue of issue 25 lets two runs hold the table", func(t *testing.T) {
		res := explore(modelConfig{procs: []mproc{{kind: pOldRunner, class: "whole"}, {kind: pOldRunner, class: "whole"}, {kind: pOldRunner, class: "whole"}}, exclusionOnly: true})
		if res.violation == "" {
			t.Fatalf("no violation found in %d states: the model of the numbered queue misses the hole issue 33 reported", res.states)
		}
		t.Logf("found after %d states: %s\n\t%s", res.states, res.violation, strings.Join(res.trace, "\n\t"))
	})
	whole := mproc{kind: pRunner, class: "whole"}
	full := os.Getenv("DELTAVACUUM_LOCK_MODEL") == "full"
	// Under make mutation every mutant of the package runs this test: the configurations of
	// more than 100 000 states (15 of its 19 seconds) are left to make test.
	mutation := os.Getenv("DELTAVACUUM_MUTATION") == "1"
	for _, tc := range []struct {
		name string
		cfg  modelConfig
		full bool // explored only with DELTAVACUUM_LOCK_MODEL=full, make lock-model (minutes; docs/lock.md)
		big  bool // more than 100 000 states: left out under make mutation
	}{
		{"three runs, a crash at any step", modelConfig{procs: []mproc{whole, whole, whole}, crashes: 1}, false, false},
		{"three runs, two crashes", modelConfig{procs: []mproc{whole, whole, whole}, crashes: 2}, false, false},
		{"two runs and unlock, two crashes", modelConfig{procs: []mproc{whole, whole, {kind: pUnlocker}}, crashes: 2}, false, false},
		{"two runs and unlock --force, a crash", modelConfig{procs: []mproc{whole, whole, {kind: pUnlockerForce}}, crashes: 1}, false, false},
		{"two runs and unlock, one suspended and taken for stale, a crash", modelConfig{procs: []mproc{whole, whole, {kind: pUnlocker}}, suspends: 1, crashes: 1}, false, true},
		{"two shards of one run and a whole run, a crash", modelConfig{procs: []mproc{{kind: pRunner, class: "shard0"}, {kind: pRunner, class: "shard1"}, whole}, crashes: 1}, false, true},
		{"two runs, long holders, a crash and a suspension", modelConfig{procs: []mproc{whole, whole}, crashes: 1, suspends: 1, long: true}, false, false},
		{"three runs, one suspended and taken for stale, a crash", modelConfig{procs: []mproc{whole, whole, whole}, suspends: 1, crashes: 1}, true, false},
		{"three runs, two suspended", modelConfig{procs: []mproc{whole, whole, whole}, suspends: 2}, true, false},
		{"three runs, long holders, a crash and a suspension", modelConfig{procs: []mproc{whole, whole, whole}, crashes: 1, suspends: 1, long: true}, true, false},
		{"three runs and unlock --force, a crash", modelConfig{procs: []mproc{whole, whole, whole, {kind: pUnlockerForce}}, crashes: 1}, true, false},
	} {
		if tc.full && !full || tc.big && mutation {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.bounds = modelBounds
			res := explore(tc.cfg)
			if res.violation != "" {
				t.Fatalf("%s after %d states:\n\t%s", res.violation, res.states, strings.Join(res.trace, "\n\t"))
			}
			t.Logf("%d states, %d transitions, longest path %d steps", res.states, res.transitions, res.maxDepth)
		})
	}
}

// TestLockModelKeysEveryField: the model's key of a process names every field of the machines
// (a field the key left out would merge states that differ, and the exploration would miss
// paths): when a machine gains a field, its count here fails until localKey names it.
func TestLockModelKeysEveryField(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields int
		got    int
	}{
		{"acquirer", 13, reflect.TypeOf(acquirer{}).NumField()},
		{"unlocker", 7, reflect.TypeOf(unlocker{}).NumField()},
		{"lockListing", 5, reflect.TypeOf(lockListing{}).NumField()},
		{"mproc", 19, reflect.TypeOf(mproc{}).NumField()},
	} {
		if tc.got != tc.fields {
			t.Errorf("%s has %d fields, the model's key was written for %d: name the new ones in localKey (and clone)", tc.name, tc.got, tc.fields)
		}
	}
}

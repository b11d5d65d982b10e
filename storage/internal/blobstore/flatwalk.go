package blobstore

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/internal/walkahead"
)

// A flat walk lists the whole tree below a prefix without a delimiter, a page holding the
// entries of many directories, and reports them in the order of storage.Store.Walk. Three
// pieces:
//
//   - listers list ranges of names, page by page, ahead of the merger (each range is one
//     listing; the first page of a large tree splits the rest into ranges listed in
//     parallel). A lister leaves out the contents of a directory the caller skips, and starts
//     its listing again after such a directory (From) rather than page through it.
//   - the merger turns the listing's order into the walk's: a listing in byte order puts
//     "a-b" and "a.c" before "a/x", where the walk puts the directory a/ and its contents
//     first. An entry waits until no name still to come can sort before it in the walk; what
//     may still come is told by the listing's position (names come in order), by the
//     directory's children (one delimited page of the walk's root), and, when many entries
//     wait, by asking whether the directory that would come first exists (one request).
//   - the emitter calls fn in walk order, checks the order of what it reports and carries
//     out SkipDir.

// errJump ends a listing page loop so that the lister starts again at a later name.
var errJump = errors.New("jump")

// probeBacklog is how many entries may wait in the merger before it asks whether the
// directory that holds them back exists (at least probePages pages of the listing): waiting
// costs memory, asking a request. (Variables for the tests.)
var (
	probeBacklog = 1 << 16
	probePages   = 4
)

// minPagesPerRange is the fewest pages a range of a split listing is expected to hold: a
// range costs one page more than listing its names in sequence (its last page is short).
const minPagesPerRange = 8

// splitAfter is how many pages the first range lists before the first level is read (one
// delimited page) to split the rest: a shorter listing costs its pages alone.
const splitAfter = minPagesPerRange

// currentLookahead is how many pages the lister of the range being walked lists ahead: the
// walk's callback may skip what they hold, and its listing then starts again past it.
const currentLookahead = 2

// OrderError is returned when a listing comes in no order a walk can merge.
type OrderError struct {
	Prev, Next string
}

func (e *OrderError) Error() string {
	return fmt.Sprintf("the store listed %q after %q, in no order the listing can be walked in", e.Next, e.Prev)
}

// flatWalk is one Walk: what its streams share.
type flatWalk struct {
	s    *Store
	skip func(dir string) bool // directories whose contents are left out, unlisted (nil: none)
	fn   func(storage.Object) error

	mu          sync.Mutex
	cond        *sync.Cond
	fl          FlatListing // guarded by mu
	buffered    int         // entries listed, not yet taken by a merger (mu)
	fromIgnored bool        // the service listed names before ListOptions.From (mu)

	// skipped are the directories fn skipped (and those a stream listed apart): listers leave
	// their contents out.
	skippedMu sync.RWMutex
	skipped   map[string]bool

	// The emitter's state (the merging goroutine only).
	skipPrefix string // the directory whose contents are being skipped
	lastKey    string // the last key reported
	reported   int
}

// flat is Walk over a listing without a delimiter.
func (s *Store) flat(ctx context.Context, prefix string, fl FlatListing, skip func(string) bool, fn func(storage.Object) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &flatWalk{s: s, skip: skip, fn: fn, fl: fl}
	w.cond = sync.NewCond(&w.mu)
	w.skipped = map[string]bool{}
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer stop()
	st := w.newStream(prefix, false, true)
	if err := st.run(ctx); err != nil {
		return err
	}
	if prefix != "" && st.entries == 0 {
		// Nothing below the prefix, not even its marker: where directories are only names
		// (S3), it is not there; elsewhere it may be an empty directory of its own.
		if _, prober := s.b.(DirEntityProber); !s.cfg.DirEntities && !prober {
			return fmt.Errorf("%w: directory %s", storage.ErrNotExist, prefix)
		}
		if _, err := s.Stat(ctx, prefix); err != nil {
			if errors.Is(err, storage.ErrNotExist) {
				return fmt.Errorf("%w: directory %s", storage.ErrNotExist, prefix)
			}
			return err
		}
	}
	return nil
}

// addSkipped tells the listers to leave out the contents of dir.
func (w *flatWalk) addSkipped(dir string) {
	w.skippedMu.Lock()
	w.skipped[dir] = true
	w.skippedMu.Unlock()
}

// emit reports o to fn, in walk order, and carries out SkipDir.
func (w *flatWalk) emit(o storage.Object) error {
	if w.skipPrefix != "" {
		if strings.HasPrefix(o.Key, w.skipPrefix) {
			return nil
		}
		w.skipPrefix = ""
	}
	if w.reported > 0 && !walkLess(w.lastKey, o.Key) {
		// A listing in an order the merger did not expect: refuse rather than report a
		// directory's entries apart.
		return &OrderError{Prev: w.lastKey, Next: o.Key}
	}
	w.lastKey = o.Key
	w.reported++
	err := w.fn(o)
	if o.IsDir {
		pruned := w.skip != nil && w.skip(o.Key)
		if pruned || errors.Is(err, storage.SkipDir) {
			w.skipPrefix = o.Key
			w.addSkipped(o.Key)
			if errors.Is(err, storage.SkipDir) {
				err = nil
			}
		}
	}
	if errors.Is(err, storage.SkipDir) {
		return nil // on a file: ignored
	}
	return err
}

// skippedDir returns the outermost directory (a key ending in '/' below prefix) that holds
// k, or is k, and whose contents are skipped, or "".
func (w *flatWalk) skippedDir(prefix, k string, skipped map[string]bool) string {
	for i := strings.IndexByte(k[len(prefix):], '/'); i >= 0; {
		d := k[:len(prefix)+i+1]
		if skipped[d] || (w.skip != nil && w.skip(d)) {
			return d
		}
		j := strings.IndexByte(k[len(d):], '/')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return ""
}

// inSkipped reports whether k lies below (or is) a directory of skipped.
func inSkipped(prefix, k string, skipped map[string]bool) bool {
	for i := len(prefix); i < len(k); i++ {
		if k[i] == '/' && skipped[k[:i+1]] {
			return true
		}
	}
	return false
}

// stream is the flat listing of one prefix, merged into walk order.
type stream struct {
	w          *flatWalk
	prefix     string
	reportRoot bool // report the prefix directory itself (a directory listed apart)
	top        bool // the walk's own prefix: may be split into ranges

	// Guarded by w.mu.
	ranges []*lister
	cur    int
	// head is the first name below the prefix, as a listing from its start had it (headSet):
	// where a service that ignores From starts again.
	head    string
	headSet bool

	kids        atomic.Pointer[children]
	kidsPending atomic.Bool    // the first level is being listed: it will tell what a probe would
	splitting   sync.WaitGroup // split, which the stream waits for before it ends

	// The merger's state.
	orders  Order
	pos     string // every name still to come is at or after pos (the end of the ranges walked)
	final   bool   // every range is walked
	last    string // the last name merged
	entries int    // names listed below the prefix
	q       itemQueue
	dirs    map[string]*item
	pruneAt int
	absent  map[string]bool // P whose P/ holds nothing (asked)
	covered []string        // directories listed apart (probeDir)
}

// children is one delimited page of a stream's prefix: its first-level names.
type children struct {
	dirs     map[string]bool // directory names (without '/')
	names    []string        // keys of the first-level entries, directories ending in '/', by bytes
	complete bool
	last     string // every first-level name up to this key was listed
}

type item struct {
	o       storage.Object
	emitted bool
}

// itemQueue holds the entries waiting, in walk order: most come in that order (appended to
// run), the rest (a directory seen after names that sort after it) wait in a heap.
type itemQueue struct {
	run  []*item
	head int
	h    itemHeap
}

func (q *itemQueue) len() int { return len(q.run) - q.head + len(q.h) }

func (q *itemQueue) push(it *item) {
	if q.head == len(q.run) || walkLess(q.run[len(q.run)-1].o.Key, it.o.Key) {
		q.run = append(q.run, it)
		return
	}
	heap.Push(&q.h, it)
}

// first returns the first entry in walk order (the queue is not empty).
func (q *itemQueue) first() *item {
	if q.head < len(q.run) && (len(q.h) == 0 || walkLess(q.run[q.head].o.Key, q.h[0].o.Key)) {
		return q.run[q.head]
	}
	return q.h[0]
}

// pop removes the entry first returned.
func (q *itemQueue) pop() {
	if q.head < len(q.run) && (len(q.h) == 0 || walkLess(q.run[q.head].o.Key, q.h[0].o.Key)) {
		q.run[q.head] = nil
		q.head++
		if q.head == len(q.run) {
			q.run, q.head = q.run[:0], 0
		} else if q.head > 4096 && q.head*2 > len(q.run) {
			n := copy(q.run, q.run[q.head:])
			clear(q.run[n:])
			q.run, q.head = q.run[:n], 0
		}
		return
	}
	heap.Pop(&q.h)
}

type itemHeap []*item

func (h itemHeap) Len() int           { return len(h) }
func (h itemHeap) Less(i, j int) bool { return walkLess(h[i].o.Key, h[j].o.Key) }
func (h itemHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)        { *h = append(*h, x.(*item)) }
func (h *itemHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}

func (w *flatWalk) newStream(prefix string, reportRoot, top bool) *stream {
	w.mu.Lock()
	orders := w.fl.Orders
	w.mu.Unlock()
	return &stream{w: w, prefix: prefix, reportRoot: reportRoot, top: top, orders: orders,
		dirs: map[string]*item{}, pruneAt: 64, absent: map[string]bool{}}
}

// run lists the stream's prefix and reports its entries.
func (st *stream) run(ctx context.Context) error {
	w := st.w
	first := &lister{w: w, st: st, current: true, first: st.top}
	w.mu.Lock()
	st.ranges = []*lister{first}
	w.mu.Unlock()
	go first.run(ctx)
	defer func() {
		// Stop the listers and give back what they hold; the split's requests, sent, end
		// before the walk does (so that what a walk costs is what it counts).
		defer st.splitting.Wait()
		w.mu.Lock()
		for _, l := range st.ranges {
			l.abandoned = true
			for _, p := range l.queue {
				w.buffered -= len(p.entries)
			}
			l.queue = nil
		}
		w.cond.Broadcast()
		w.mu.Unlock()
	}()
	for {
		p, err := st.next(ctx)
		if err != nil {
			return err
		}
		if p == nil {
			st.final = true
			return st.drain(ctx)
		}
		st.orders &= p.orders
		for _, e := range p.entries {
			st.feed(e)
		}
		if err := st.drain(ctx); err != nil {
			return err
		}
	}
}

// next takes the next page of the ranges, in order; nil at the end.
func (st *stream) next(ctx context.Context) (*listedPage, error) {
	w := st.w
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		l := st.ranges[st.cur]
		if len(l.queue) > 0 {
			p := l.queue[0]
			l.queue = l.queue[1:]
			w.buffered -= len(p.entries)
			w.cond.Broadcast()
			return p, nil
		}
		if l.done {
			if l.err != nil {
				return nil, l.err
			}
			if st.cur+1 == len(st.ranges) {
				return nil, nil
			}
			st.pos = l.hi
			st.cur++
			st.ranges[st.cur].current = true
			w.cond.Broadcast()
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w.cond.Wait()
	}
}

// feed merges one listed entry (its Name is its key).
func (st *stream) feed(e Entry) {
	key := e.Name
	st.entries++
	st.last = key
	for _, c := range st.covered {
		if strings.HasPrefix(key, c) {
			return
		}
	}
	st.w.skippedMu.RLock()
	below := len(st.w.skipped) > 0 && inSkipped(st.prefix, key, st.w.skipped)
	st.w.skippedMu.RUnlock()
	if below {
		return // below a directory already reported and skipped
	}
	if st.reportRoot {
		var mod time.Time
		if key == st.prefix {
			mod = e.ModTime
		}
		st.dir(st.prefix, mod)
	}
	rest := key[len(st.prefix):]
	if rest == "" {
		return // the prefix's own marker
	}
	start := 0
	for {
		j := strings.IndexByte(rest[start:], '/')
		if j < 0 {
			break
		}
		j += start
		if !validName(rest[start:j]) {
			return // not a valid key: never reported, never deleted
		}
		var mod time.Time
		if j == len(rest)-1 {
			mod = e.ModTime // a marker
		}
		st.dir(st.prefix+rest[:j+1], mod)
		start = j + 1
	}
	if start == len(rest) || !validName(rest[start:]) {
		return
	}
	if e.Dir {
		st.dir(key+"/", e.ModTime)
		return
	}
	o := storage.Object{Key: key, Size: e.Size, ModTime: e.ModTime}
	if st.w.s.cfg.ConditionalDeletes {
		o.Version = e.Version
	}
	st.q.push(&item{o: o})
}

func validName(name string) bool { return name != "" && name != "." && name != ".." }

// dir merges a directory: the first time it is seen, and its marker's time.
func (st *stream) dir(key string, mod time.Time) {
	if it := st.dirs[key]; it != nil {
		if !it.emitted && it.o.ModTime.IsZero() {
			it.o.ModTime = mod
		}
		return
	}
	it := &item{o: storage.Object{Key: key, IsDir: true, ModTime: mod}}
	st.dirs[key] = it
	st.q.push(it)
	if len(st.dirs) > st.pruneAt {
		st.pruneDirs()
	}
}

// pruneDirs forgets the directories reported whose names the listing has passed.
func (st *stream) pruneDirs() {
	for k, it := range st.dirs {
		if it.emitted && st.passed(k[:len(k)-1]+"0") {
			delete(st.dirs, k)
		}
	}
	st.pruneAt = 2*len(st.dirs) + 64
}

// passed reports whether every name still to come sorts at or after t, in every order the
// listing may be in.
func (st *stream) passed(t string) bool {
	if st.final {
		return true
	}
	for o := Order(1); o != 0 && o <= st.orders; o <<= 1 {
		if st.orders&o == 0 {
			continue
		}
		if compareIn(o, st.last, t) >= 0 {
			continue
		}
		if o&lexical != 0 && st.pos != "" && compareIn(o, st.pos, t) >= 0 {
			continue
		}
		return false
	}
	return true
}

// drain reports the entries no name still to come can precede.
func (st *stream) drain(ctx context.Context) error {
	w := st.w
	backlog := max(probeBacklog, probePages*w.fl.PageSize)
	for st.q.len() > 0 {
		it := st.q.first()
		if w.skipPrefix != "" && strings.HasPrefix(it.o.Key, w.skipPrefix) {
			st.q.pop()
			it.emitted = true
			continue
		}
		if p, blocked := st.blocked(it.o.Key); blocked {
			if p == "" || st.q.len() <= backlog || !before(st.orders&lexical, st.last, p+"/") {
				return nil
			}
			if st.kidsPending.Load() && strings.IndexByte(p[len(st.prefix):], '/') < 0 {
				return nil // the first level, being listed, will tell
			}
			if err := st.probeDir(ctx, p); err != nil {
				return err
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		st.q.pop()
		it.emitted = true
		if err := w.emit(it.o); err != nil {
			return err
		}
	}
	return nil
}

// blocked reports whether a name still to come may sort before k in the walk. p, when not
// empty, is the name whose directory p/ would: a listing in lexical order puts the
// contents of p/ after p-x (or any p followed by a byte before '/'), where the walk puts them
// first.
func (st *stream) blocked(k string) (p string, blocked bool) {
	if st.final {
		return "", false
	}
	base := len(st.prefix)
	if st.orders&lexical != 0 {
		for i := base + 1; i < len(k); i++ {
			if k[i] >= '/' || k[i-1] == '/' {
				continue // p/ would hold an empty name: never reported
			}
			if st.knownAbsent(k[:i]) {
				continue
			}
			// The thresholds of later i are smaller: past this one, past them all.
			if !st.passed(k[:i] + "0") {
				return k[:i], true
			}
			break
		}
	}
	if st.orders&utf16ish != 0 {
		// In UTF-16 order a name with a character above U+FFFF comes before one with
		// U+E000–U+FFFF in its place, where bytes put it after: wait until the listing has
		// left the names that begin as k does up to that character.
		for i := base; i < len(k); {
			r, n := utf8.DecodeRuneInString(k[i:])
			if r > 0xFFFF {
				if strings.HasPrefix(st.last, k[:i]) {
					return "", true
				}
				break
			}
			i += n
		}
	}
	return "", false
}

// knownAbsent reports whether no directory p/ exists (or it was listed apart).
func (st *stream) knownAbsent(p string) bool {
	if st.absent[p] {
		return true
	}
	if strings.IndexByte(p[len(st.prefix):], '/') >= 0 {
		return false
	}
	k := st.kids.Load()
	if k == nil {
		return false
	}
	name := p[len(st.prefix):]
	if k.dirs[name] {
		return false
	}
	return k.complete || before(st.orders, p+"/", k.last)
}

// probeDir asks whether p/ holds anything; when it does, it is listed and reported now (it
// comes before every entry waiting, after every entry reported), and left out of this
// stream.
func (st *stream) probeDir(ctx context.Context, p string) error {
	w := st.w
	found := false
	err := w.s.b.List(ctx, w.s.cfg.Root+p+"/", ListOptions{Limit: 1}, func(pg Page) error {
		found = len(pg.Entries) > 0 || len(pg.Prefixes) > 0
		return ErrStop
	})
	if err != nil && !errors.Is(err, ErrStop) {
		return err
	}
	st.absent[p] = true
	if !found {
		return nil
	}
	dir := p + "/"
	w.addSkipped(dir)
	st.covered = append(st.covered, dir)
	seen := st.dirs[dir] != nil
	sub := w.newStream(dir, !seen, false)
	return sub.run(ctx)
}

// listedPage is a page of a range, pruned, with its names relative to the root.
type listedPage struct {
	entries []Entry
	orders  Order // the orders the range's names are still in, after this page
}

// lister lists one range of names, [lo, hi), ahead of the merger.
type lister struct {
	w     *flatWalk
	st    *stream
	first bool // the stream's first range: its first page may split the rest

	// Guarded by w.mu.
	lo, hi    string // keys; "" is the start, or the end, of the prefix
	queue     []*listedPage
	done      bool
	err       error
	current   bool   // the merger takes this range's pages now
	abandoned bool   // the walk ended
	last      string // the last key listed

	// For splitting (first range only; guarded by w.mu).
	keys, children int
}

func (l *lister) run(ctx context.Context) {
	err := l.list(ctx)
	w := l.w
	w.mu.Lock()
	l.done = true
	if err != nil && !errors.Is(err, ErrStop) {
		l.err = err
	}
	w.cond.Broadcast()
	w.mu.Unlock()
}

// room reports whether the lister may list another page (w.mu held).
func (l *lister) room() bool {
	if l.abandoned {
		return true
	}
	if l.current {
		return len(l.queue) < currentLookahead
	}
	return l.w.buffered < walkahead.MaxBuffered
}

func (l *lister) list(ctx context.Context) error {
	w, st := l.w, l.st
	root := w.s.cfg.Root
	full := root + st.prefix
	w.mu.Lock()
	from := l.lo
	orders := w.fl.Orders
	w.mu.Unlock()
	prev, prevK := "", "" // the last key listed (for the order), and as a directory key
	rep := ""             // the skipped directory whose first key was passed on
	lastComp := ""        // the first-level name of the last key passed on (splitting)
	planned := !l.first
	pages := 0
	for {
		w.mu.Lock()
		hi, fl, ignored := l.hi, w.fl, w.fromIgnored
		head, headSet := st.head, st.headSet
		w.mu.Unlock()
		if orders &= fl.Orders; orders == 0 {
			return fmt.Errorf("listing %s: the store's listing is in no order it can be walked in", full)
		}
		if hi != "" && from != "" && !before(orders, from, hi) {
			return nil
		}
		jumps := fl.From && !ignored && orders&^lexical == 0
		o := ListOptions{}
		if from != "" && jumps {
			o.From = root + from
		}
		if hi != "" && fl.To {
			o.To = root + hi
		}
		jump := ""
		// A listing asked to start at From that hands back names before it (but S3's few
		// between StartAfter and From) is taken for one that started at the first name
		// instead (a service that ignores From): it must begin with head and come in order
		// until it reaches From. Anything else is a start in another order than the walk's,
		// whose names before From were never listed.
		restarted, pastFrom, prevDrop := false, false, ""
		err := w.s.b.List(ctx, full, o, func(p Page) error {
			out := make([]Entry, 0, len(p.Entries))
			stop, ignoredFrom := false, false
			w.skippedMu.RLock()
			skipped := w.skipped
			cacheDir, cacheSkip := "\x00", ""
			keys, kids := 0, 0
			for _, e := range p.Entries {
				if !strings.HasPrefix(e.Name, full) {
					continue
				}
				key := e.Name[len(root):]
				if !headSet && o.From == "" {
					head, headSet = key, true
				}
				if from != "" && before(orders, key, from) {
					// S3 starts after a name just before From: what lies between is dropped;
					// anything earlier says the service did not start at From at all.
					if o.From != "" && key <= Before(from) {
						switch {
						case pastFrom, !restarted && (!headSet || key != head):
							w.skippedMu.RUnlock()
							return &OrderError{Prev: from, Next: key}
						case restarted:
							if orders = ascending(orders, prevDrop, key); orders == 0 {
								w.skippedMu.RUnlock()
								return &OrderError{Prev: prevDrop, Next: key}
							}
						}
						restarted, prevDrop, ignoredFrom = true, key, true
					}
					continue
				}
				pastFrom = true
				if hi != "" && !before(orders, key, hi) {
					stop = true
					break
				}
				if prev != "" {
					if key == prev {
						continue
					}
					if orders = ascending(orders, prev, key); orders == 0 {
						w.skippedMu.RUnlock()
						return &OrderError{Prev: prev, Next: key}
					}
				}
				k := key
				if e.Dir {
					k += "/"
				}
				prev, prevK = key, k
				d := k
				if !strings.HasSuffix(k, "/") {
					d = storage.Dir(k)
				}
				if d != cacheDir {
					cacheDir, cacheSkip = d, ""
					if len(d) > len(st.prefix) {
						cacheSkip = w.skippedDir(st.prefix, d, skipped)
					}
				}
				if cacheSkip != "" {
					if cacheSkip == rep || skipped[cacheSkip] {
						continue
					}
					rep = cacheSkip // its first entry tells the merger it is there
				} else {
					keys++
					if comp, _, _ := strings.Cut(key[len(st.prefix):], "/"); comp != lastComp {
						lastComp = comp
						kids++
					}
				}
				e.Name = key
				out = append(out, e)
			}
			w.skippedMu.RUnlock()
			w.mu.Lock()
			if headSet && !st.headSet {
				st.head, st.headSet = head, true
			}
			if l.hi != hi && l.hi != "" {
				// The range was split while this page was on its way (the split saw the names
				// listed before it): what lies past its new end is the next range's.
				for i, e := range out {
					if !before(orders, e.Name, l.hi) {
						out, stop = out[:i], true
						break
					}
				}
			}
			if ignoredFrom && o.From != "" {
				w.fromIgnored = true
			}
			l.last = prev
			l.keys += keys
			l.children += kids
			if len(out) > 0 || stop || !p.Truncated {
				l.queue = append(l.queue, &listedPage{entries: out, orders: orders})
				w.buffered += len(out)
			}
			w.cond.Broadcast()
			for !stop && p.Truncated && !l.room() && ctx.Err() == nil {
				w.cond.Wait()
			}
			abandoned := l.abandoned
			hi = l.hi
			w.mu.Unlock()
			if abandoned || stop || !p.Truncated {
				return ErrStop
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if pages++; !planned && pages >= splitAfter {
				planned = true
				st.kidsPending.Store(true)
				st.splitting.Add(1)
				go func() {
					defer st.splitting.Done()
					st.split(ctx, l)
				}()
			}
			if jumps && prevK != "" {
				// The page ends inside a directory whose contents are left out: start again
				// after it rather than page through it. Not when it ends on the directory's
				// own entity (a folder blob "d", no '/'): "d-x", "d.json" come after it and
				// before the contents.
				w.skippedMu.RLock()
				d := w.skippedDir(st.prefix, prevK, w.skipped)
				w.skippedMu.RUnlock()
				// Nor when the listing already starts there: the page held only names S3
				// hands back between StartAfter and From, and the next page moves on.
				if d != "" && strings.HasPrefix(prev, d) && d[:len(d)-1]+"0" != from {
					jump = d[:len(d)-1] + "0"
					return errJump
				}
			}
			return nil
		})
		switch {
		case errors.Is(err, errJump):
			from = jump
		case errors.Is(err, ErrStop):
			return nil
		default:
			return err
		}
	}
}

// split reads the first level of the stream's prefix (one delimited page), which tells the
// merger which first-level directories exist, and, when the rest of the listing is expected
// to be long and the service starts listings at a name, splits it into ranges listed in
// parallel, at first-level names. The first range calls it after splitAfter pages.
func (st *stream) split(ctx context.Context, first *lister) {
	w := st.w
	fl, _ := w.s.b.(FlatLister)
	if fl == nil {
		return
	}
	defer st.kidsPending.Store(false)
	known := fl.FlatListing(ctx, true)
	w.mu.Lock()
	if known.Orders != 0 {
		w.fl.Orders &= known.Orders
		if w.fl.Orders == 0 {
			w.fl.Orders = known.Orders
		}
		w.fl.From, w.fl.To = known.From, known.To
	}
	fls := w.fl
	w.mu.Unlock()
	kids, err := st.listChildren(ctx)
	if err != nil || kids == nil {
		return
	}
	st.kids.Store(kids)
	if !fls.From || fls.Orders&^lexical != 0 {
		return
	}
	conc := w.s.cfg.Concurrency
	if conc < 2 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// The density of the listing is known from a page with names the walk reports (the
	// first may hold nothing but a skipped _delta_log/).
	for first.children == 0 && !first.done && !first.abandoned && ctx.Err() == nil {
		w.cond.Wait()
	}
	if first.done || first.abandoned || w.fromIgnored || first.children == 0 {
		return
	}
	var cands []string
	rem := 0
	for _, k := range kids.names {
		if k <= first.last {
			continue
		}
		if strings.HasSuffix(k, "/") && w.skip != nil && w.skip(k) {
			continue
		}
		rem++
		if fls.Orders&OrderUTF16 == 0 || asciiName(k) {
			cands = append(cands, k)
		}
	}
	pages := float64(rem) * float64(first.keys) / float64(first.children) / float64(max(fls.PageSize, 1))
	n := min(conc-1, int(pages/minPagesPerRange), len(cands)-1)
	if n < 1 {
		return
	}
	var bounds []string
	for i := 1; i <= n; i++ {
		b := cands[i*len(cands)/(n+1)]
		if len(bounds) == 0 || b > bounds[len(bounds)-1] {
			bounds = append(bounds, b)
		}
	}
	hi := first.hi
	first.hi = bounds[0]
	for i, b := range bounds {
		l := &lister{w: w, st: st, lo: b, hi: hi}
		if i+1 < len(bounds) {
			l.hi = bounds[i+1]
		}
		st.ranges = append(st.ranges, l)
		go l.run(ctx)
	}
}

// listChildren lists the first level of the stream's prefix: one delimited page.
func (st *stream) listChildren(ctx context.Context) (*children, error) {
	w := st.w
	root := w.s.cfg.Root
	full := root + st.prefix
	k := &children{dirs: map[string]bool{}}
	err := w.s.b.List(ctx, full, ListOptions{Delim: true}, func(p Page) error {
		add := func(name string, dir bool) {
			if !strings.HasPrefix(name, full) {
				return
			}
			rest := strings.TrimSuffix(name[len(full):], "/")
			if !validName(rest) || strings.Contains(rest, "/") {
				return
			}
			key := st.prefix + rest
			if dir {
				k.dirs[rest] = true
				key += "/"
			}
			k.names = append(k.names, key)
			if name[len(root):] > k.last {
				k.last = name[len(root):]
			}
		}
		for _, e := range p.Entries {
			add(e.Name, e.Dir || strings.HasSuffix(e.Name, "/"))
		}
		for _, pr := range p.Prefixes {
			add(pr, true)
		}
		k.complete = !p.Truncated
		return ErrStop
	})
	if err != nil && !errors.Is(err, ErrStop) {
		return nil, err
	}
	sort.Strings(k.names)
	return k, nil
}

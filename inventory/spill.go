package inventory

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/deltavacuum/deltavacuum/internal/tempfile"
)

// defaultRowsInMemory is the number of entries a Listing keeps in memory before it writes them,
// sorted, as a run to its temporary file (Options.RowsInMemory). Tests lower it.
var defaultRowsInMemory = 2_000_000

// blockSize is the payload size after which a run's block is closed and checksummed.
const blockSize = 64 << 10

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// spill is the temporary file of a Listing: sorted runs, each a sequence of blocks
// [uvarint payload length][4-byte CRC-32C of the payload][payload]. A payload holds entries
// [uvarint shared prefix with the previous key][uvarint suffix length][suffix][flags byte]
// [uvarint size][varint mtime]; the first entry of a block shares nothing, so every block is
// read on its own.
type spill struct {
	inventory string
	mu        sync.Mutex
	f         *tempfile.File
	end       int64 // bytes written
	maxBlock  int   // the largest payload written: a longer one read back is damage
	runs      []run
	closed    bool
}

// run is one sorted run of the file.
type run struct {
	off, size int64
	entries   int64
}

const (
	flagDir   = 1
	flagTimed = 2
)

func newSpill(inventory, dir string) (*spill, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := tempfile.Create(dir, "deltavacuum-inventory-*.spill")
	if err != nil {
		return nil, fmt.Errorf("inventory %s: it holds more rows than fit in memory and its temporary file cannot be created in %s: %w; set TMPDIR (or, in the library, Options.SpillDir) to a folder that can be written and has room", inventory, dir, err)
	}
	return &spill{inventory: inventory, f: f}, nil
}

// write appends the sorted, merged entries as a run.
func (sp *spill) write(entries []entry) error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	w := bufio.NewWriterSize(io.NewOffsetWriter(sp.f, sp.end), 256<<10)
	r := run{off: sp.end, entries: int64(len(entries))}
	var payload, hdr []byte
	prev := ""
	flush := func() error {
		if len(payload) == 0 {
			return nil
		}
		hdr = binary.AppendUvarint(hdr[:0], uint64(len(payload)))
		hdr = binary.LittleEndian.AppendUint32(hdr, crc32.Checksum(payload, castagnoli))
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		if _, err := w.Write(payload); err != nil {
			return err
		}
		r.size += int64(len(hdr) + len(payload))
		sp.maxBlock = max(sp.maxBlock, len(payload))
		payload, prev = payload[:0], ""
		return nil
	}
	for i := range entries {
		e := &entries[i]
		n := 0
		for n < len(prev) && n < len(e.key) && prev[n] == e.key[n] {
			n++
		}
		payload = binary.AppendUvarint(payload, uint64(n))
		payload = binary.AppendUvarint(payload, uint64(len(e.key)-n))
		payload = append(payload, e.key[n:]...)
		var fl byte
		if e.dir {
			fl |= flagDir
		}
		if e.timed {
			fl |= flagTimed
		}
		payload = append(payload, fl)
		payload = binary.AppendUvarint(payload, uint64(e.size))
		payload = binary.AppendVarint(payload, e.mtime)
		prev = e.key
		if len(payload) >= blockSize {
			if err := flush(); err != nil {
				return sp.writeErr(err)
			}
		}
	}
	if err := flush(); err != nil {
		return sp.writeErr(err)
	}
	if err := w.Flush(); err != nil {
		return sp.writeErr(err)
	}
	sp.end += r.size
	sp.runs = append(sp.runs, r)
	return nil
}

func (sp *spill) writeErr(err error) error {
	return fmt.Errorf("inventory %s: writing its temporary file: %w; set TMPDIR (or, in the library, Options.SpillDir) to a folder with room", sp.inventory, err)
}

func (sp *spill) close() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.closed {
		return nil
	}
	sp.closed = true
	return sp.f.Close()
}

// iterator yields entries in order; nil at the end.
type iterator interface {
	next() (*entry, error)
}

// sliceIter walks sorted, merged entries in memory.
type sliceIter struct {
	entries []entry
	i       int
}

func (s *sliceIter) next() (*entry, error) {
	if s.i >= len(s.entries) {
		return nil, nil
	}
	s.i++
	return &s.entries[s.i-1], nil
}

// runIter reads one run of the temporary file back, checking every block's CRC and the run's
// entry count: a damaged or truncated file is an error, never other rows.
type runIter struct {
	sp      *spill
	r       run
	br      *bufio.Reader
	payload []byte
	pos     int
	key     []byte
	read    int64
	cur     entry
}

func (sp *spill) iter(r run) *runIter {
	return &runIter{sp: sp, r: r, br: bufio.NewReaderSize(io.NewSectionReader(sp.f, r.off, r.size), 128<<10)}
}

func (it *runIter) damaged(what string) error {
	return fmt.Errorf("inventory %s: its temporary file is damaged (%s); nothing was deleted; run again", it.sp.inventory, what)
}

func (it *runIter) next() (*entry, error) {
	if it.pos >= len(it.payload) {
		if it.read == it.r.entries {
			return nil, nil
		}
		n, err := binary.ReadUvarint(it.br)
		if err != nil || n == 0 || n > uint64(it.sp.maxBlock) {
			return nil, it.damaged(fmt.Sprintf("a block header after %d of %d entries of a run", it.read, it.r.entries))
		}
		buf := make([]byte, 4+n)
		if _, err := io.ReadFull(it.br, buf); err != nil {
			return nil, it.damaged(fmt.Sprintf("truncated after %d of %d entries of a run", it.read, it.r.entries))
		}
		if crc32.Checksum(buf[4:], castagnoli) != binary.LittleEndian.Uint32(buf) {
			return nil, it.damaged("a block's CRC-32C does not match")
		}
		it.payload, it.pos, it.key = buf[4:], 0, it.key[:0]
	}
	p := it.payload
	bad := func() (*entry, error) { return nil, it.damaged("an entry does not decode") }
	shared, n := binary.Uvarint(p[it.pos:])
	if n <= 0 || shared > uint64(len(it.key)) {
		return bad()
	}
	it.pos += n
	suffix, n := binary.Uvarint(p[it.pos:])
	if n <= 0 || suffix > uint64(len(p)-it.pos-n) {
		return bad()
	}
	it.pos += n
	it.key = append(it.key[:shared], p[it.pos:it.pos+int(suffix)]...)
	it.pos += int(suffix)
	if it.pos >= len(p) {
		return bad()
	}
	fl := p[it.pos]
	it.pos++
	size, n := binary.Uvarint(p[it.pos:])
	if n <= 0 {
		return bad()
	}
	it.pos += n
	mtime, n := binary.Varint(p[it.pos:])
	if n <= 0 {
		return bad()
	}
	it.pos += n
	it.read++
	if it.read > it.r.entries {
		return nil, it.damaged("more entries than were written")
	}
	it.cur = entry{key: string(it.key), size: int64(size), mtime: mtime, dir: fl&flagDir != 0, timed: fl&flagTimed != 0}
	return &it.cur, nil
}

// mergeIter merges sorted iterators k-way and keeps, of the rows of one key, the latest
// (compareEntries), as Listing.sort does within one run.
type mergeIter struct {
	h    iterHeap
	init bool
	out  entry
}

type iterHead struct {
	e  *entry
	it iterator
}

type iterHeap []iterHead

func (h iterHeap) Len() int           { return len(h) }
func (h iterHeap) Less(i, j int) bool { return compareEntries(*h[i].e, *h[j].e) < 0 }
func (h iterHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *iterHeap) Push(x any)        { *h = append(*h, x.(iterHead)) }
func (h *iterHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newMerge(its []iterator) *mergeIter {
	m := &mergeIter{}
	for _, it := range its {
		m.h = append(m.h, iterHead{it: it})
	}
	return m
}

func (m *mergeIter) next() (*entry, error) {
	if !m.init {
		m.init = true
		hs := m.h[:0]
		for _, h := range m.h {
			e, err := h.it.next()
			if err != nil {
				return nil, err
			}
			if e != nil {
				h.e = e
				hs = append(hs, h)
			}
		}
		m.h = hs
		heap.Init(&m.h)
	}
	if len(m.h) == 0 {
		return nil, nil
	}
	m.out = *m.h[0].e
	for len(m.h) > 0 {
		top := &m.h[0]
		if top.e.key != m.out.key {
			break
		}
		if compareEntries(*top.e, m.out) > 0 {
			m.out = *top.e
		}
		e, err := top.it.next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			heap.Pop(&m.h)
			continue
		}
		top.e = e
		heap.Fix(&m.h, 0)
	}
	return &m.out, nil
}

// spillBuffer sorts and merges the entries in memory and writes them as a run.
func (l *Listing) spillBuffer() error {
	if l.spill == nil {
		sp, err := newSpill(l.inventory, l.spillDir)
		if err != nil {
			return err
		}
		l.spill = sp
		runtime.AddCleanup(l, func(sp *spill) { sp.close() }, sp)
	}
	l.sort()
	if err := l.spill.write(l.entries); err != nil {
		return err
	}
	clear(l.entries)
	l.entries = l.entries[:0]
	return nil
}

// iter returns the listing's entries in order, merged across runs.
func (l *Listing) iter() (iterator, error) {
	if l.spill == nil {
		return &sliceIter{entries: l.entries}, nil
	}
	l.spill.mu.Lock()
	closed := l.spill.closed
	l.spill.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("inventory %s: the listing was closed", l.inventory)
	}
	its := []iterator{&sliceIter{entries: l.entries}}
	for _, r := range l.spill.runs {
		its = append(its, l.spill.iter(r))
	}
	return newMerge(its), nil
}

// count returns the number of entries after merging the runs, counted once: one pass over the
// file; -1 when it cannot be read.
func (l *Listing) count() int {
	l.countMu.Lock()
	defer l.countMu.Unlock()
	if l.counted {
		return l.n
	}
	it, err := l.iter()
	if err != nil {
		return -1
	}
	n := 0
	for {
		e, err := it.next()
		if err != nil {
			return -1
		}
		if e == nil {
			break
		}
		n++
	}
	l.n, l.counted = n, true
	return n
}

// Spilled says whether the listing holds rows in its temporary file.
func (l *Listing) Spilled() bool { return l.spill != nil }

// Close releases the listing's temporary file, if it has one; a Walk after it is an error. It
// may be called more than once.
func (l *Listing) Close() error {
	if l.spill == nil {
		return nil
	}
	return l.spill.close()
}

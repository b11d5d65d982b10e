package spill

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// BlockSize is the payload after which a block is closed. A block is read and checked whole,
// so it is also about what one reader holds (a record longer than that makes a longer block).
const BlockSize = 64 << 10

// How many bytes of blocks are written at once, read at once by Each and Verify, and read at
// once by each run of a Merge (which reads k runs side by side).
const (
	writeAhead = 1 << 20
	readAhead  = 1 << 20
	mergeAhead = 256 << 10
)

// Storage is the temporary file a File writes to: an *os.File or an internal/tempfile.File
// (tests wrap it to make it fail).
type Storage interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
	Close() error
}

// Codec encodes the records of a File. The File writes each record's key itself, compressed
// against the key of the previous record of its block; the codec writes and reads the rest.
type Codec[T any] interface {
	// Key returns the record's key.
	Key(r *T) string
	// Append appends the rest of r to b.
	Append(b []byte, r *T) []byte
	// Decode decodes the record whose key is key from the start of b and returns the bytes
	// after it. An error (ErrShort when b ends too soon) is a damaged block.
	Decode(key string, b []byte) (T, []byte, error)
}

// The errors of a record that does not decode.
var (
	// ErrShort: the record's bytes end too soon.
	ErrShort = errors.New("a record is cut short")
	// ErrPrefix: a key says it shares more with the previous key than that one has.
	ErrPrefix = errors.New("a key shares more with the previous one than it has")
)

// Kind is what went wrong with a File.
type Kind int

// The kinds of Fault.
const (
	// WriteFailed: the system refused a write (Fault.Err): a full disk, a quota.
	WriteFailed Kind = iota + 1
	// TruncateFailed: the system refused to cut the file short (Fault.Err).
	TruncateFailed
	// ReadFailed: the system refused a read (Fault.Err): an I/O error, a closed file.
	ReadFailed
	// CutShort: the file ends, at Fault.Offset, before a block written ends.
	CutShort
	// Changed: the bytes of the block at Fault.Offset no longer match its CRC-32C.
	Changed
	// Undecodable: a record of a checked block, at Fault.Offset, does not decode (Fault.Err).
	Undecodable
	// Trailing: a checked block has bytes after its last record, from Fault.Offset.
	Trailing
)

// Fault is a failure of a File. The function given to New phrases it as the error the user
// sees (naming what the records are and what to do next), and the File returns that error.
type Fault struct {
	Kind Kind
	// Err is the system's error, or the decoder's (Undecodable); nil otherwise.
	Err error
	// Offset is the byte of the file where a read found the fault.
	Offset int64
	// Read is how many records of the run being read came before the fault, Of how many the
	// run has.
	Read, Of int
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// File is the records spilled to one temporary file: runs (the records of one Append each) of
// checked blocks. Append, Truncate and Close must not run concurrently with anything else;
// reads (Each, Verify, Merge) may run side by side. The garbage collector closes the file
// once the File is unreachable, if Close was not called.
type File[T any] struct {
	h      *handle
	codec  Codec[T]
	fault  func(Fault) error
	blocks []block
	runs   []int // the index in blocks of each run's first block
	n      int   // records
	size   int64 // bytes
	wbuf   []byte
}

// block is where a block is, how many records it holds and its CRC-32C: kept in memory, so
// that nothing the file says is needed to check it.
type block struct {
	off int64
	len int
	n   int
	crc uint32
}

// handle is what closes the file, once; the File's cleanup holds it, not the File.
type handle struct {
	s      Storage
	once   sync.Once
	closed atomic.Bool
	err    error
}

func (h *handle) close() error {
	h.once.Do(func() {
		h.closed.Store(true)
		h.err = h.s.Close()
	})
	return h.err
}

// New returns an empty File writing to s, which it owns from then on: Close closes it.
// fault phrases every failure of the file as the error its methods return.
func New[T any](s Storage, codec Codec[T], fault func(Fault) error) *File[T] {
	h := &handle{s: s}
	f := &File[T]{h: h, codec: codec, fault: fault}
	runtime.AddCleanup(f, func(h *handle) { _ = h.close() }, h)
	return f
}

// Len is the number of records written.
func (f *File[T]) Len() int { return f.n }

// Size is the number of bytes written.
func (f *File[T]) Size() int64 { return f.size }

// Runs is the number of runs written.
func (f *File[T]) Runs() int { return len(f.runs) }

// Storage is the file written to (for tests that damage it).
func (f *File[T]) Storage() Storage { return f.h.s }

// Closed says whether Close was called.
func (f *File[T]) Closed() bool { return f.h.closed.Load() }

// Close closes the file; it may be called more than once. Reads after it fail (ReadFailed).
func (f *File[T]) Close() error { return f.h.close() }

// Append writes rs as a new run (to be merged, sort and fold them first: Sort). It writes all
// of them or, failing (WriteFailed), none: the File is then as it was.
func (f *File[T]) Append(rs []T) error {
	if len(rs) == 0 {
		return nil
	}
	first := len(f.blocks)
	off := f.size // of w[0]
	w := f.wbuf[:0]
	start, n := 0, 0 // the open block: where it starts in w, its records
	prev := ""
	for i := range rs {
		key := f.codec.Key(&rs[i])
		shared := 0
		for shared < len(prev) && shared < len(key) && prev[shared] == key[shared] {
			shared++
		}
		w = binary.AppendUvarint(w, uint64(shared))
		w = binary.AppendUvarint(w, uint64(len(key)-shared))
		w = append(w, key[shared:]...)
		w = f.codec.Append(w, &rs[i])
		n++
		prev = key
		if len(w)-start < BlockSize && i+1 < len(rs) {
			continue
		}
		f.blocks = append(f.blocks, block{off: off + int64(start), len: len(w) - start, n: n, crc: crc32.Checksum(w[start:], castagnoli)})
		start, n, prev = len(w), 0, ""
		if len(w) >= writeAhead || i+1 == len(rs) {
			if _, err := f.h.s.WriteAt(w, off); err != nil {
				f.blocks, f.wbuf = f.blocks[:first], w[:0]
				return f.fault(Fault{Kind: WriteFailed, Err: err})
			}
			off += int64(len(w))
			w, start = w[:0], 0
		}
	}
	f.wbuf = w
	f.runs = append(f.runs, first)
	f.n += len(rs)
	f.size = off
	return nil
}

// Each calls fn with every record, in the order written, and stops at the first error, which
// it returns. A block that does not read back as written is an error before any of its
// records is given to fn.
func (f *File[T]) Each(fn func(T) error) error {
	c := f.cursor(0, len(f.blocks), readAhead)
	for {
		ok, err := c.next()
		if err != nil || !ok {
			return err
		}
		if err := fn(c.rec); err != nil {
			return err
		}
	}
}

// Verify reads the whole file back and checks that every block is as written.
func (f *File[T]) Verify() error {
	r := reader[T]{f: f, i: 0, end: len(f.blocks), ahead: readAhead}
	for r.i < r.end {
		if _, err := r.load(); err != nil {
			return err
		}
	}
	return nil
}

// Truncate drops the records from the n-th on (nothing when n ≥ Len).
func (f *File[T]) Truncate(n int) error {
	if n >= f.n {
		return nil
	}
	n = max(n, 0)
	start := 0 // the records before block k
	k := 0
	for n >= start+f.blocks[k].n {
		start += f.blocks[k].n
		k++
	}
	b := f.blocks[k]
	cut := 0
	if keep := n - start; keep > 0 {
		c := f.cursor(k, k+1, b.len)
		for range keep {
			if _, err := c.next(); err != nil {
				return err
			}
		}
		cut = b.len - len(c.rest)
		f.blocks[k] = block{off: b.off, len: cut, n: keep, crc: crc32.Checksum(c.block[:cut], castagnoli)}
		k++
	}
	f.blocks = f.blocks[:k]
	for len(f.runs) > 0 && f.runs[len(f.runs)-1] >= k {
		f.runs = f.runs[:len(f.runs)-1]
	}
	f.size, f.n = b.off+int64(cut), n
	if err := f.h.s.Truncate(f.size); err != nil {
		return f.fault(Fault{Kind: TruncateFailed, Err: err})
	}
	return nil
}

// faultAt is a Fault found reading: in block bi, after decoding done of its records.
func (f *File[T]) faultAt(kind Kind, err error, off int64, bi, done int) error {
	run := sort.Search(len(f.runs), func(i int) bool { return f.runs[i] > bi }) - 1
	first, end := 0, len(f.blocks)
	if run >= 0 {
		first = f.runs[run]
		if run+1 < len(f.runs) {
			end = f.runs[run+1]
		}
	}
	read, of := done, 0
	for i := first; i < end; i++ {
		if i < bi {
			read += f.blocks[i].n
		}
		of += f.blocks[i].n
	}
	return f.fault(Fault{Kind: kind, Err: err, Offset: off, Read: read, Of: of})
}

// reader reads the blocks [i, end) of a File in order, ahead bytes at a time when they
// follow each other, and checks each before giving it.
type reader[T any] struct {
	f         *File[T]
	i, end    int // the next block to load, and the one after the last
	ahead     int
	buf       []byte
	bufOff    int64 // where buf[0] is in the file
	want, got int   // the bytes the last read asked for, and those it read
	err       error // its error
}

// load returns the bytes of block r.i, checked, and moves on to the next.
func (r *reader[T]) load() ([]byte, error) {
	bs := r.f.blocks
	b := bs[r.i]
	if b.off < r.bufOff || b.off+int64(b.len) > r.bufOff+int64(r.want) {
		want, j := b.len, r.i+1
		for j < r.end && bs[j].off == bs[j-1].off+int64(bs[j-1].len) && want+bs[j].len <= r.ahead {
			want += bs[j].len
			j++
		}
		r.buf = slices.Grow(r.buf[:0], want)[:want]
		r.got, r.err = r.f.h.s.ReadAt(r.buf, b.off)
		r.bufOff, r.want = b.off, want
	}
	lo := int(b.off - r.bufOff)
	if lo+b.len > r.got {
		if r.err != nil && !errors.Is(r.err, io.EOF) {
			return nil, r.f.faultAt(ReadFailed, r.err, b.off, r.i, 0)
		}
		return nil, r.f.faultAt(CutShort, nil, r.bufOff+int64(r.got), r.i, 0)
	}
	data := r.buf[lo : lo+b.len]
	if crc32.Checksum(data, castagnoli) != b.crc {
		return nil, r.f.faultAt(Changed, nil, b.off, r.i, 0)
	}
	r.i++
	return data, nil
}

// cursor decodes the records of blocks [first, end) one at a time.
type cursor[T any] struct {
	reader[T]
	bi    int    // the block being decoded
	block []byte // its bytes
	rest  []byte // those not decoded yet
	left  int    // its records not decoded yet
	key   []byte // the key of the record decoded last
	rec   T      // the record decoded last
}

func (f *File[T]) cursor(first, end, ahead int) *cursor[T] {
	return &cursor[T]{reader: reader[T]{f: f, i: first, end: end, ahead: ahead}}
}

// next decodes the next record into c.rec; false after the last.
func (c *cursor[T]) next() (bool, error) {
	if c.left == 0 {
		if c.i >= c.end {
			return false, nil
		}
		bi := c.i
		data, err := c.load()
		if err != nil {
			return false, err
		}
		c.bi, c.block, c.rest, c.left, c.key = bi, data, data, c.f.blocks[bi].n, c.key[:0]
	}
	b := c.rest
	shared, k := binary.Uvarint(b)
	if k <= 0 {
		return false, c.undecodable(ErrShort)
	}
	b = b[k:]
	if shared > uint64(len(c.key)) {
		return false, c.undecodable(ErrPrefix)
	}
	suffix, k := binary.Uvarint(b)
	if k <= 0 || suffix > uint64(len(b)-k) {
		return false, c.undecodable(ErrShort)
	}
	b = b[k:]
	c.key = append(c.key[:shared], b[:suffix]...)
	rec, b, err := c.f.codec.Decode(string(c.key), b[suffix:])
	if err != nil {
		return false, c.undecodable(err)
	}
	c.rec, c.rest = rec, b
	c.left--
	if c.left == 0 && len(b) != 0 {
		return false, c.f.faultAt(Trailing, nil, c.offset(), c.bi, c.f.blocks[c.bi].n)
	}
	return true, nil
}

// offset is where in the file the bytes not decoded yet start.
func (c *cursor[T]) offset() int64 {
	return c.f.blocks[c.bi].off + int64(len(c.block)-len(c.rest))
}

func (c *cursor[T]) undecodable(err error) error {
	return c.f.faultAt(Undecodable, err, c.offset(), c.bi, c.f.blocks[c.bi].n-c.left)
}

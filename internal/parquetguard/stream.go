package parquetguard

import (
	"io"
	"sync/atomic"

	"github.com/deltavacuum/deltavacuum/storage"
)

// streamAbove and streamWindow: LoadChunks reads a column chunk larger than streamAbove bytes a
// window at a time (pageStream) rather than whole, in reads of about streamWindow bytes. A
// report written as one row group of gigabytes then costs a few windows per column instead of
// its chunks; smaller chunks keep the single read, which is one request on an object store.
// Atomic so that a test of another package may lower them (StreamForTest) while others run.
var (
	streamAbove  atomic.Int64
	streamWindow atomic.Int64
)

func init() {
	streamAbove.Store(64 << 20)
	streamWindow.Store(4 << 20)
}

// StreamForTest makes LoadChunks stream every chunk larger than above bytes, in windows of
// window bytes, until restore is called: tests use it to read small files the way a report of
// gigabytes is read.
func StreamForTest(above, window int64) (restore func()) {
	oldAbove, oldWindow := streamAbove.Swap(above), streamWindow.Swap(window)
	return func() {
		streamAbove.Store(oldAbove)
		streamWindow.Store(oldWindow)
	}
}

// pageStream serves parquet-go's reads of one column chunk from a window of the file that moves
// forward through the chunk. parquet-go reads a chunk from start to end through a buffered
// section reader: a read asks for the next bytes of the chunk, which may end inside a page not
// yet seen. Before any byte of a page is served, the page's header and the whole page are read
// into the window and checked exactly as checkPages checks a chunk held whole (pageChecker);
// bytes before the read being served are forgotten. The window therefore holds about one read
// of streamWindow bytes and the page being checked, whatever the size of the chunk.
//
// The only read behind the window is parquet-go reading a dictionary page again from the
// chunk's start (when a data page needs a dictionary it has not seen, in a damaged file): the
// stream then starts over and checks the pages again, rather than trust bytes read twice.
type pageStream struct {
	check      pageChecker
	column     int   // leaf column index
	start, end int64 // the chunk's range in the file
	window     int64 // the least a read from the store asks for

	buf     []byte // bytes of the file from bufOff
	bufOff  int64
	checked int64 // the pages before this offset are checked; a page boundary
	keep    int64 // the bytes before this offset have been served and may be forgotten
	err     error // the first failure: every later read fails with it too

	// For tests: the largest buffer held, and the bytes read from the store.
	peak, read int64
}

func newPageStream(c Chunk, off, n int64) *pageStream {
	return &pageStream{
		check:  pageChecker{name: c.Name, codec: c.Codec},
		column: c.Column,
		start:  off,
		end:    off + n,
		window: max(streamWindow.Load(), 1),
		bufOff: off, checked: off, keep: off,
	}
}

// readAt serves p at off, which lies in the chunk, reading from r.
func (st *pageStream) readAt(r *storage.BoundedReader, p []byte, off int64) (int, error) {
	if st.err != nil {
		return 0, st.err
	}
	var eof error
	if rest := st.end - off; int64(len(p)) > rest {
		p, eof = p[:rest], io.EOF // the chunk ends here, as far as parquet-go's section reader goes
	}
	if off < st.bufOff {
		st.buf, st.bufOff, st.checked = st.buf[:0], st.start, st.start
	}
	st.keep = off
	end := off + int64(len(p))
	for st.checked < end {
		if err := st.next(r); err != nil {
			st.err = err
			return 0, err
		}
	}
	// The window still starts at or before off: fill forgets nothing after st.keep.
	return copy(p, st.buf[off-st.bufOff:end-st.bufOff]), eof
}

// rest checks the pages parquet-go has not reached, to the end of the chunk, forgetting each
// once checked.
func (st *pageStream) rest(r *storage.BoundedReader) error {
	for st.err == nil && st.checked < st.end {
		st.keep = st.checked
		st.err = st.next(r)
	}
	return st.err
}

// next reads the page at st.checked into the window and checks it.
func (st *pageStream) next(r *storage.BoundedReader) error {
	pos := st.checked
	probe := min(int64(64<<10), st.end-pos)
	for {
		if err := st.fill(r, pos+probe); err != nil {
			return err
		}
		b := st.buf[pos-st.bufOff:]
		b = b[:min(len(b), MaxPageBytes)]
		h, n, short, err := st.check.header(b, pos-st.start)
		if err == nil {
			pos += int64(n)
			size, err := st.check.size(&h, st.end-pos)
			if err != nil {
				return err
			}
			if err := st.fill(r, pos+int64(size)); err != nil {
				return err
			}
			if _, err := st.check.page(&h, st.buf[pos-st.bufOff:], st.end-pos); err != nil {
				return err
			}
			st.checked = pos + int64(size)
			return nil
		}
		// A header cut by the end of the window is walked again with more of the chunk; it is
		// judged on the same bytes as checkPages judges it.
		if !short || int64(len(b)) >= st.end-pos || len(b) >= MaxPageBytes {
			return err
		}
		probe = min(2*int64(len(b)), st.end-pos)
	}
}

// fill makes the window reach upTo (at most st.end), forgetting the bytes served and checked
// before it, and reading at least st.window bytes at a time.
func (st *pageStream) fill(r *storage.BoundedReader, upTo int64) error {
	have := st.bufOff + int64(len(st.buf))
	if upTo <= have {
		return nil
	}
	if drop := min(st.keep, st.checked) - st.bufOff; drop > 0 {
		drop = min(drop, int64(len(st.buf)))
		st.buf = st.buf[:copy(st.buf, st.buf[drop:])]
		st.bufOff += drop
	}
	to := min(max(upTo, have+st.window), st.end)
	n := to - st.bufOff
	if int64(cap(st.buf)) < n {
		grown := make([]byte, len(st.buf), max(n, min(2*st.window, st.end-st.bufOff)))
		copy(grown, st.buf)
		st.buf = grown
		st.peak = max(st.peak, int64(cap(grown)))
	}
	from := len(st.buf)
	st.buf = st.buf[:n]
	k, err := r.ReadAt(st.buf[from:], have)
	st.read += int64(k)
	if err != nil {
		st.buf = st.buf[:from]
		return err
	}
	return nil
}

package vacuum

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/tempfile"
	"github.com/deltavacuum/deltavacuum/storage"
)

// spillSegment is how many files one segment of the temporary file holds: a segment is
// written, checked and read back whole (≈ 1 MB).
const spillSegment = 16384

// spillFile is what the temporary file is used through (an *os.File; tests wrap it).
type spillFile interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
	Close() error
}

// createSpillFile creates the temporary file in dir (tests replace it to make writes fail).
var createSpillFile = func(dir string) (spillFile, error) {
	return tempfile.Create(dir, "deltavacuum-plan-*.spill")
}

// spill is the temporary file of a FileList: the files that do not stay in memory, in
// segments of spillSegment files. Each segment is checked (its length and CRC-32C, kept in
// memory) before any of its files is read back, so a file changed or cut short between
// planning and deleting is refused, not misread.
//
// A file is encoded as: the length of the prefix its path shares with the previous path of
// the segment and the rest of the path (uvarints and bytes), its size (varint), a flags byte,
// its reason (a byte; 0 is followed by the reason spelled out), its modification time
// (seconds varint, nanoseconds uvarint) when it has one, its checksum companion when not the
// usual ".<name>.crc" beside it, its version when it has one, and its eligible time (varint).
type spill struct {
	h     *spillHandle
	name  string // for errors: the file's name, or where it was created
	table string
	segs  []spillSeg
	size  int64 // bytes written
	n     int   // files written
	buf   []byte
}

type spillSeg struct {
	off, len int64
	n        int
	crc      uint32
}

// spillHandle is what closes the file; the garbage collector closes it too, once the list is
// unreachable.
type spillHandle struct {
	once sync.Once
	f    spillFile
	err  error
}

func (h *spillHandle) close() error {
	h.once.Do(func() { h.err = h.f.Close() })
	return h.err
}

func newSpill(dir, table string) (*spill, error) {
	where := dir
	if where == "" {
		where = os.TempDir()
	}
	f, err := createSpillFile(dir)
	if err != nil {
		return nil, fmt.Errorf("table %s: the plan has more files to delete than stay in memory, and its temporary file cannot be created in %s: %w; "+
			"set TMPDIR (or, in the library, Options.SpillDir) to a folder that can be written and has room; nothing was deleted", table, where, err)
	}
	h := &spillHandle{f: f}
	sp := &spill{h: h, name: where + string(os.PathSeparator) + "deltavacuum-plan-*.spill", table: table}
	if tf, ok := f.(*tempfile.File); ok && tf.Path() != "" {
		sp.name = tf.Path()
	}
	runtime.AddCleanup(sp, func(h *spillHandle) { _ = h.close() }, h)
	return sp, nil
}

func (sp *spill) close() error { return sp.h.close() }

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// write appends files, in segments.
func (sp *spill) write(files []File) error {
	for len(files) > 0 {
		n := min(len(files), spillSegment)
		b := sp.buf[:0]
		prev := ""
		for _, f := range files[:n] {
			b = appendSpilled(b, prev, f)
			prev = f.Path
		}
		sp.buf = b
		if _, err := sp.h.f.WriteAt(b, sp.size); err != nil {
			return fmt.Errorf("table %s: writing the plan's temporary file %s: %w; set TMPDIR (or, in the library, Options.SpillDir) to a folder with room; nothing was deleted", sp.table, sp.name, err)
		}
		sp.segs = append(sp.segs, spillSeg{off: sp.size, len: int64(len(b)), n: n, crc: crc32.Checksum(b, crcTable)})
		sp.size += int64(len(b))
		sp.n += n
		files = files[n:]
	}
	return nil
}

// read returns the bytes of a segment, checked.
func (sp *spill) read(s spillSeg, buf []byte) ([]byte, error) {
	buf = slices.Grow(buf[:0], int(s.len))[:s.len]
	if n, err := sp.h.f.ReadAt(buf, s.off); n < len(buf) {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, spillTampered(sp.table, sp.name, s.off+int64(n), "cut short")
		}
		return nil, fmt.Errorf("table %s: reading the plan's temporary file %s: %w; nothing more was deleted", sp.table, sp.name, err)
	}
	if crc32.Checksum(buf, crcTable) != s.crc {
		return nil, spillTampered(sp.table, sp.name, s.off, "its checksum does not match")
	}
	return buf, nil
}

// decode calls fn with the files of a checked segment.
func (sp *spill) decode(s spillSeg, b []byte, fn func(File) error) error {
	prev := ""
	for i := 0; i < s.n; i++ {
		f, rest, err := decodeSpilled(b, prev)
		if err != nil {
			return spillTampered(sp.table, sp.name, s.off+s.len-int64(len(b)), err.Error())
		}
		b, prev = rest, f.Path
		if err := fn(f); err != nil {
			return err
		}
	}
	if len(b) != 0 {
		return spillTampered(sp.table, sp.name, s.off+s.len-int64(len(b)), "bytes after the last file")
	}
	return nil
}

func (sp *spill) each(fn func(File) error) error {
	var buf []byte
	for _, s := range sp.segs {
		b, err := sp.read(s, buf)
		if err != nil {
			return err
		}
		buf = b
		if err := sp.decode(s, b, fn); err != nil {
			return err
		}
	}
	return nil
}

func (sp *spill) verify() error {
	var buf []byte
	for _, s := range sp.segs {
		b, err := sp.read(s, buf)
		if err != nil {
			return err
		}
		buf = b
	}
	return nil
}

// truncate drops the files from the n-th on (n < sp.n).
func (sp *spill) truncate(n int) error {
	start := 0
	for k, s := range sp.segs {
		if n >= start+s.n {
			start += s.n
			continue
		}
		keep := n - start
		var cut int64
		if keep > 0 {
			b, err := sp.read(s, nil)
			if err != nil {
				return err
			}
			rest, prev := b, ""
			for range keep {
				f, r, err := decodeSpilled(rest, prev)
				if err != nil {
					return spillTampered(sp.table, sp.name, s.off, err.Error())
				}
				rest, prev = r, f.Path
			}
			cut = int64(len(b) - len(rest))
			sp.segs[k] = spillSeg{off: s.off, len: cut, n: keep, crc: crc32.Checksum(b[:cut], crcTable)}
			k++
		}
		sp.segs = sp.segs[:k]
		sp.size, sp.n = s.off+cut, n
		if err := sp.h.f.Truncate(sp.size); err != nil {
			return fmt.Errorf("table %s: cutting the plan's temporary file %s: %w; nothing was deleted", sp.table, sp.name, err)
		}
		return nil
	}
	return nil
}

var reasonCodes = []Reason{"", ReasonTombstone, ReasonChangeData, ReasonDeletionVector, ReasonUntracked}

const (
	spillModTime       = 1 << iota // a modification time follows
	spillUsualChecksum             // the checksum companion is ".<name>.crc" beside the file
	spillOtherChecksum             // a checksum companion follows
	spillVersion                   // a version follows
)

func usualChecksum(path string) string {
	return storage.Dir(path) + "." + storage.Base(path) + ".crc"
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendSpilled(b []byte, prev string, f File) []byte {
	shared := 0
	for shared < len(prev) && shared < len(f.Path) && prev[shared] == f.Path[shared] {
		shared++
	}
	b = binary.AppendUvarint(b, uint64(shared))
	b = appendString(b, f.Path[shared:])
	b = binary.AppendVarint(b, f.Size)
	var flags byte
	if !f.ModificationTime.IsZero() {
		flags |= spillModTime
	}
	switch {
	case f.Checksum == "":
	case f.Checksum == usualChecksum(f.Path):
		flags |= spillUsualChecksum
	default:
		flags |= spillOtherChecksum
	}
	if f.Version != "" {
		flags |= spillVersion
	}
	b = append(b, flags)
	if code := slices.Index(reasonCodes, f.Reason); code > 0 {
		b = append(b, byte(code))
	} else {
		b = append(b, 0)
		b = appendString(b, string(f.Reason))
	}
	if flags&spillModTime != 0 {
		b = binary.AppendVarint(b, f.ModificationTime.Unix())
		b = binary.AppendUvarint(b, uint64(f.ModificationTime.Nanosecond()))
	}
	if flags&spillOtherChecksum != 0 {
		b = appendString(b, f.Checksum)
	}
	if flags&spillVersion != 0 {
		b = appendString(b, f.Version)
	}
	return binary.AppendVarint(b, int64(f.eligible))
}

var errSpillShort = errors.New("a file's record is cut short")

func readUvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, errSpillShort
	}
	return v, b[n:], nil
}

func readVarint(b []byte) (int64, []byte, error) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, nil, errSpillShort
	}
	return v, b[n:], nil
}

func readString(b []byte) (string, []byte, error) {
	n, b, err := readUvarint(b)
	if err != nil || n > uint64(len(b)) {
		return "", nil, errSpillShort
	}
	return string(b[:n]), b[n:], nil
}

func decodeSpilled(b []byte, prev string) (File, []byte, error) {
	var f File
	shared, b, err := readUvarint(b)
	if err != nil {
		return f, nil, err
	}
	if shared > uint64(len(prev)) {
		return f, nil, errors.New("a path shares more with the previous one than it has")
	}
	suffix, b, err := readString(b)
	if err != nil {
		return f, nil, err
	}
	var sb strings.Builder
	sb.Grow(int(shared) + len(suffix))
	sb.WriteString(prev[:shared])
	sb.WriteString(suffix)
	f.Path = sb.String()
	if f.Size, b, err = readVarint(b); err != nil {
		return f, nil, err
	}
	if len(b) < 2 {
		return f, nil, errSpillShort
	}
	flags, code := b[0], b[1]
	b = b[2:]
	switch {
	case code == 0:
		var r string
		if r, b, err = readString(b); err != nil {
			return f, nil, err
		}
		f.Reason = Reason(r)
	case int(code) < len(reasonCodes):
		f.Reason = reasonCodes[code]
	default:
		return f, nil, fmt.Errorf("unknown reason %d", code)
	}
	if flags&spillModTime != 0 {
		sec, rest, err := readVarint(b)
		if err != nil {
			return f, nil, err
		}
		nsec, rest, err := readUvarint(rest)
		if err != nil {
			return f, nil, err
		}
		b = rest
		f.ModificationTime = time.Unix(sec, int64(nsec)).UTC()
	}
	if flags&spillUsualChecksum != 0 {
		f.Checksum = usualChecksum(f.Path)
	}
	if flags&spillOtherChecksum != 0 {
		if f.Checksum, b, err = readString(b); err != nil {
			return f, nil, err
		}
	}
	if flags&spillVersion != 0 {
		if f.Version, b, err = readString(b); err != nil {
			return f, nil, err
		}
	}
	e, b, err := readVarint(b)
	if err != nil {
		return f, nil, err
	}
	f.eligible = since(e)
	return f, b, nil
}

// sortedRuns calls fn with the files of a list that spilled in the order of their paths: it
// sorts them in runs of the list's budget, writes the runs to a second temporary file, and
// merges them.
func sortedRuns(l FileList, fn func(File) error) error {
	runs, err := newSpill(l.dir, l.table)
	if err != nil {
		return err
	}
	defer func() { _ = runs.close() }()
	limit := l.limit
	if limit <= 0 {
		limit = DefaultFilesInMemory
	}
	chunk := make([]File, 0, min(limit, l.Len()))
	var bounds []int // run i is runs.segs[bounds[i]:bounds[i+1]]
	cut := func() error {
		slices.SortFunc(chunk, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
		bounds = append(bounds, len(runs.segs))
		err := runs.write(chunk)
		clear(chunk)
		chunk = chunk[:0]
		return err
	}
	err = l.Each(func(f File) error {
		chunk = append(chunk, f)
		if len(chunk) == limit {
			return cut()
		}
		return nil
	})
	if err == nil && len(chunk) > 0 {
		err = cut()
	}
	if err != nil {
		return err
	}
	bounds = append(bounds, len(runs.segs))
	chunk = nil // the runs are merged a segment of each at a time
	h := &runHeap{}
	for i := 0; i+1 < len(bounds); i++ {
		c := &runCursor{sp: runs, segs: runs.segs[bounds[i]:bounds[i+1]]}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			h.cs = append(h.cs, c)
		}
	}
	heap.Init(h)
	for len(h.cs) > 0 {
		c := h.cs[0]
		if err := fn(c.files[c.pos]); err != nil {
			return err
		}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return nil
}

// runCursor reads one sorted run, a segment at a time.
type runCursor struct {
	sp    *spill
	segs  []spillSeg
	buf   []byte
	files []File
	pos   int
}

// next moves to the next file of the run; false at its end.
func (c *runCursor) next() (bool, error) {
	c.pos++
	for c.pos >= len(c.files) {
		if len(c.segs) == 0 {
			return false, nil
		}
		s := c.segs[0]
		c.segs = c.segs[1:]
		b, err := c.sp.read(s, c.buf)
		if err != nil {
			return false, err
		}
		c.buf = b
		clear(c.files)
		c.files = c.files[:0]
		if err := c.sp.decode(s, b, func(f File) error { c.files = append(c.files, f); return nil }); err != nil {
			return false, err
		}
		c.pos = 0
	}
	return true, nil
}

type runHeap struct{ cs []*runCursor }

func (h *runHeap) Len() int { return len(h.cs) }
func (h *runHeap) Less(i, j int) bool {
	return h.cs[i].files[h.cs[i].pos].Path < h.cs[j].files[h.cs[j].pos].Path
}
func (h *runHeap) Swap(i, j int) { h.cs[i], h.cs[j] = h.cs[j], h.cs[i] }
func (h *runHeap) Push(x any)    { h.cs = append(h.cs, x.(*runCursor)) }
func (h *runHeap) Pop() any {
	x := h.cs[len(h.cs)-1]
	h.cs = h.cs[:len(h.cs)-1]
	return x
}

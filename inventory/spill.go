package inventory

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/deltavacuum/deltavacuum/internal/spill"
	"github.com/deltavacuum/deltavacuum/internal/tempfile"
)

// defaultRowsInMemory is the number of entries a Listing keeps in memory before it writes them,
// sorted, as a run to its temporary file (Options.RowsInMemory). Tests lower it.
var defaultRowsInMemory = 2_000_000

// entryOrder sorts entries by compareEntries and keeps, of the rows of one key, the latest.
var entryOrder = spill.Order[entry]{
	Compare: compareEntries,
	Same:    func(a, b entry) bool { return a.key == b.key },
}

// newSpill creates the temporary file of a Listing: sorted runs written by internal/spill in
// checked blocks of prefix-compressed keys; entryCodec is the rest of an entry.
func newSpill(inventory, dir string) (*spill.File[entry], error) {
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := tempfile.Create(dir, "deltavacuum-inventory-*.spill")
	if err != nil {
		return nil, fmt.Errorf("inventory %s: it holds more rows than fit in memory and its temporary file cannot be created in %s: %w; set TMPDIR (or, in the library, Options.SpillDir) to a folder that can be written and has room", inventory, dir, err)
	}
	return spill.New(f, entryCodec{}, func(ft spill.Fault) error { return spillFault(inventory, ft) }), nil
}

// spillFault is the error a user sees when the listing's temporary file fails: a damaged or
// truncated file is an error, never other rows.
func spillFault(inventory string, ft spill.Fault) error {
	var what string
	switch ft.Kind {
	case spill.WriteFailed:
		return fmt.Errorf("inventory %s: writing its temporary file: %w; set TMPDIR (or, in the library, Options.SpillDir) to a folder with room", inventory, ft.Err)
	case spill.TruncateFailed: // a listing never cuts its file
		return fmt.Errorf("inventory %s: cutting its temporary file: %w", inventory, ft.Err)
	case spill.ReadFailed, spill.CutShort:
		what = fmt.Sprintf("truncated after %d of %d entries of a run", ft.Read, ft.Of)
	case spill.Changed:
		what = "a block's CRC-32C does not match"
	case spill.Trailing:
		what = "more entries than were written"
	default:
		what = "an entry does not decode"
	}
	return fmt.Errorf("inventory %s: its temporary file is damaged (%s); nothing was deleted; run again", inventory, what)
}

// entryCodec encodes an entry after its key: [flags byte][uvarint size][varint mtime].
type entryCodec struct{}

const (
	flagDir   = 1
	flagTimed = 2
)

func (entryCodec) Key(e *entry) string { return e.key }

func (entryCodec) Append(b []byte, e *entry) []byte {
	var fl byte
	if e.dir {
		fl |= flagDir
	}
	if e.timed {
		fl |= flagTimed
	}
	b = append(b, fl)
	b = binary.AppendUvarint(b, uint64(e.size))
	return binary.AppendVarint(b, e.mtime)
}

func (entryCodec) Decode(key string, b []byte) (entry, []byte, error) {
	if len(b) == 0 {
		return entry{}, nil, spill.ErrShort
	}
	fl := b[0]
	size, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return entry{}, nil, spill.ErrShort
	}
	b = b[1+n:]
	mtime, n := binary.Varint(b)
	if n <= 0 {
		return entry{}, nil, spill.ErrShort
	}
	return entry{key: key, size: int64(size), mtime: mtime, dir: fl&flagDir != 0, timed: fl&flagTimed != 0}, b[n:], nil
}

// iterator yields entries in order; nil at the end.
type iterator interface {
	Next() (*entry, error)
}

// sliceIter walks sorted, merged entries in memory.
type sliceIter struct {
	entries []entry
	i       int
}

func (s *sliceIter) Next() (*entry, error) {
	if s.i >= len(s.entries) {
		return nil, nil
	}
	s.i++
	return &s.entries[s.i-1], nil
}

// spillBuffer sorts and merges the entries in memory and writes them as a run.
func (l *Listing) spillBuffer() error {
	if l.spill == nil {
		sp, err := newSpill(l.inventory, l.spillDir)
		if err != nil {
			return err
		}
		l.spill = sp
	}
	l.sort()
	if err := l.spill.Append(l.entries); err != nil {
		return err
	}
	clear(l.entries)
	l.entries = l.entries[:0]
	return nil
}

// iter returns the listing's entries in order: with runs, those merged k-way with the entries
// in memory, keeping the latest row of a key across them (as sort does within one run).
func (l *Listing) iter() (iterator, error) {
	if l.spill == nil {
		return &sliceIter{entries: l.entries}, nil
	}
	if l.spill.Closed() {
		return nil, fmt.Errorf("inventory %s: the listing was closed", l.inventory)
	}
	return l.spill.Merge(l.entries, entryOrder), nil
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
		e, err := it.Next()
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
	return l.spill.Close()
}

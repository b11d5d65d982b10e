package vacuum

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/spill"
	"github.com/deltavacuum/deltavacuum/internal/tempfile"
)

// spillFile is what the temporary file is used through (an *os.File; tests wrap it).
type spillFile = spill.Storage

// createSpillFile creates the temporary file in dir (tests replace it to make writes fail).
var createSpillFile = func(dir string) (spillFile, error) {
	return tempfile.Create(dir, "deltavacuum-plan-*.spill")
}

// newSpill creates the temporary file of a FileList: the files that do not stay in memory,
// written by internal/spill in checked blocks (each block's length and CRC-32C kept in
// memory), so that a file changed or cut short between planning and deleting is refused, not
// misread. fileCodec is how a file is encoded there.
func newSpill(dir, table string) (*spill.File[memFile], error) {
	where := dir
	if where == "" {
		where = os.TempDir()
	}
	f, err := createSpillFile(dir)
	if err != nil {
		return nil, fmt.Errorf("table %s: the plan has more files to delete than stay in memory, and its temporary file cannot be created in %s: %w; "+
			"set TMPDIR (or, in the library, Options.SpillDir) to a folder that can be written and has room; nothing was deleted", table, where, err)
	}
	name := where + string(os.PathSeparator) + "deltavacuum-plan-*.spill" // for errors
	if tf, ok := f.(*tempfile.File); ok && tf.Path() != "" {
		name = tf.Path()
	}
	return spill.New(f, fileCodec{}, func(ft spill.Fault) error { return spillFault(table, name, ft) }), nil
}

// spillFault is the error a user sees when the plan's temporary file fails.
func spillFault(table, name string, ft spill.Fault) error {
	switch ft.Kind {
	case spill.WriteFailed:
		return fmt.Errorf("table %s: writing the plan's temporary file %s: %w; set TMPDIR (or, in the library, Options.SpillDir) to a folder with room; nothing was deleted", table, name, ft.Err)
	case spill.TruncateFailed:
		return fmt.Errorf("table %s: cutting the plan's temporary file %s: %w; nothing was deleted", table, name, ft.Err)
	case spill.ReadFailed:
		return fmt.Errorf("table %s: reading the plan's temporary file %s: %w; nothing more was deleted", table, name, ft.Err)
	case spill.CutShort:
		return spillTampered(table, name, ft.Offset, "cut short")
	case spill.Changed:
		return spillTampered(table, name, ft.Offset, "its checksum does not match")
	case spill.Trailing:
		return spillTampered(table, name, ft.Offset, "bytes after the last file")
	}
	why := "a file's record does not decode"
	switch {
	case errors.Is(ft.Err, spill.ErrShort):
		why = "a file's record is cut short"
	case errors.Is(ft.Err, spill.ErrPrefix):
		why = "a path shares more with the previous one than it has"
	case ft.Err != nil:
		why = ft.Err.Error()
	}
	return spillTampered(table, name, ft.Offset, why)
}

// fileCodec encodes a file (as a FileList holds it, memFile) after its path (which
// internal/spill compresses against the previous path of its block): its size (varint), a
// flags byte, its reason (a byte; 0 is followed by the reason spelled out), its modification
// time (seconds varint, nanoseconds uvarint) when it has one, its checksum companion when not
// the usual ".<name>.crc" beside it, its version when it has one, its checksum companion's
// size when known (varint), and its eligible time (varint).
type fileCodec struct{}

var reasonCodes = []Reason{"", ReasonTombstone, ReasonChangeData, ReasonDeletionVector, ReasonUntracked}

const (
	spillModTime       = 1 << iota // a modification time follows
	spillUsualChecksum             // the checksum companion is ".<name>.crc" beside the file
	spillOtherChecksum             // a checksum companion follows
	spillVersion                   // a version follows
	spillChecksumSize              // the checksum companion's size follows (varint)
)

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (fileCodec) Key(m *memFile) string { return m.path }

func (fileCodec) Append(b []byte, m *memFile) []byte {
	b = binary.AppendVarint(b, m.size)
	b = append(b, m.flags)
	if m.reason > 0 {
		b = append(b, m.reason)
	} else {
		b = append(b, 0)
		var r Reason
		if m.rare != nil {
			r = m.rare.reason
		}
		b = appendString(b, string(r))
	}
	if m.flags&spillModTime != 0 {
		b = binary.AppendVarint(b, m.sec)
		b = binary.AppendUvarint(b, uint64(m.nsec))
	}
	if m.flags&spillOtherChecksum != 0 {
		b = appendString(b, m.rare.checksum)
	}
	if m.flags&spillVersion != 0 {
		b = appendString(b, m.rare.version)
	}
	if m.flags&spillChecksumSize != 0 {
		b = binary.AppendVarint(b, m.checksumSize)
	}
	return binary.AppendVarint(b, int64(m.eligible))
}

func readUvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, spill.ErrShort
	}
	return v, b[n:], nil
}

func readVarint(b []byte) (int64, []byte, error) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, nil, spill.ErrShort
	}
	return v, b[n:], nil
}

func readString(b []byte) (string, []byte, error) {
	n, b, err := readUvarint(b)
	if err != nil || n > uint64(len(b)) {
		return "", nil, spill.ErrShort
	}
	return string(b[:n]), b[n:], nil
}

func (fileCodec) Decode(path string, b []byte) (memFile, []byte, error) {
	m := memFile{path: path}
	var err error
	if m.size, b, err = readVarint(b); err != nil {
		return m, nil, err
	}
	if len(b) < 2 {
		return m, nil, spill.ErrShort
	}
	flags, code := b[0], b[1]
	b = b[2:]
	m.flags = flags & (spillModTime | spillUsualChecksum | spillOtherChecksum | spillVersion)
	if flags&spillOtherChecksum != 0 {
		m.flags &^= spillUsualChecksum // the companion that follows is the file's
	}
	switch {
	case code == 0:
		var r string
		if r, b, err = readString(b); err != nil {
			return m, nil, err
		}
		if r != "" {
			m.rareOf().reason = Reason(r)
		}
	case int(code) < len(reasonCodes):
		m.reason = code
	default:
		return m, nil, fmt.Errorf("unknown reason %d", code)
	}
	if flags&spillModTime != 0 {
		sec, rest, err := readVarint(b)
		if err != nil {
			return m, nil, err
		}
		nsec, rest, err := readUvarint(rest)
		if err != nil {
			return m, nil, err
		}
		b = rest
		t := time.Unix(sec, int64(nsec)) // as it was written: nsec < 1e9, but normalized should it not be
		m.sec, m.nsec = t.Unix(), int32(t.Nanosecond())
	}
	if flags&spillOtherChecksum != 0 {
		if m.rareOf().checksum, b, err = readString(b); err != nil {
			return m, nil, err
		}
	}
	if flags&spillVersion != 0 {
		if m.rareOf().version, b, err = readString(b); err != nil {
			return m, nil, err
		}
	}
	if flags&spillChecksumSize != 0 {
		if m.checksumSize, b, err = readVarint(b); err != nil {
			return m, nil, err
		}
		m.flags |= spillChecksumSize
	}
	e, b, err := readVarint(b)
	if err != nil {
		return m, nil, err
	}
	m.eligible = since(e)
	return m, b, nil
}

// byPath is the order of Sorted.
var byPath = spill.Order[memFile]{Compare: func(a, b memFile) int { return strings.Compare(a.path, b.path) }}

// sortedRuns calls fn with the files of a list that spilled in the order of their paths: it
// sorts them in runs of the list's budget, writes the runs to a second temporary file, and
// merges them with the last, shorter one, kept in memory.
func sortedRuns(l FileList, fn func(File) error) error {
	runs, err := newSpill(l.dir, l.table)
	if err != nil {
		return err
	}
	defer func() { _ = runs.Close() }()
	limit := l.limit
	if limit <= 0 {
		limit = DefaultFilesInMemory
	}
	chunk := make([]memFile, 0, min(limit, l.Len()))
	err = l.Each(func(f File) error {
		chunk = append(chunk, memOf(f))
		if len(chunk) < limit {
			return nil
		}
		err := runs.Append(spill.Sort(chunk, byPath))
		clear(chunk)
		chunk = chunk[:0]
		return err
	})
	if err != nil {
		return err
	}
	m := runs.Merge(spill.Sort(chunk, byPath), byPath)
	for {
		f, err := m.Next()
		if err != nil || f == nil {
			return err
		}
		if err := fn(f.file()); err != nil {
			return err
		}
	}
}

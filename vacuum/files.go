package vacuum

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/spill"
)

// DefaultFilesInMemory is how many of a plan's files stay in memory before the rest is written
// to a temporary file (Options.FilesInMemory): about 56 MB, and their paths.
const DefaultFilesInMemory = 1 << 20

// FileList is the files a plan deletes, in the order they were planned (the listing's). Up to
// a budget of files it is a slice; the files beyond it are written, in that order, to a
// temporary file (spill.go, through internal/spill) and read back whenever the list is iterated, so that a plan of
// 20 M files does not hold 20 M File values. It is read with Len, Each and Sorted; Collect
// makes a slice of all of it, for small plans and tests.
//
// The temporary file is created in Options.SpillDir (default: $TMPDIR) and, where the system
// allows (not on Windows), removed from its folder as soon as it is open, so that nothing is
// left behind even by a crash; Close (or the garbage collector, once the list is unreachable)
// releases it. Copies of a FileList share its files.
type FileList struct {
	mem []memFile            // the files after those spilled
	sp  *spill.File[memFile] // nil until the first file is written out
	// patches are changes to spilled files made after they were written: a checksum
	// companion listed after its file, a LITE candidate named again. Applied as they are
	// read back.
	patches map[int]patch
	// skip, in a list that is what a run acted on, are the paths it left out (skipped of
	// them are in the list).
	skip    map[string]bool
	skipped int
	limit   int    // files held in memory at most; 0 or less: never spill (the zero FileList)
	dir     string // where the temporary file goes; "" is os.TempDir()
	table   string // for errors
}

type patch struct {
	checksum     string
	checksumSize int64
	eligible     since
}

// memFile is a File as a FileList holds it: 64 bytes where a File takes 112, for up to a
// million files in memory. It keeps a file as its temporary file does (fileCodec): the
// modification time as a Unix time (read back in UTC, as the listing's are planned), a
// checksum companion of the usual name (".<name>.crc" beside it) as a flag, and what is rare
// (another companion's name, a version, a reason not in reasonCodes) behind one pointer.
type memFile struct {
	path     string
	size     int64
	sec      int64 // the modification time, when flags has spillModTime
	eligible since
	rare     *memRare
	// checksumSize is the checksum companion's size when known (flags has spillChecksumSize).
	checksumSize int64
	nsec         int32
	flags        uint8 // spillModTime, spillUsualChecksum, spillOtherChecksum, spillVersion, spillChecksumSize
	reason       uint8 // its index in reasonCodes; 0: rare's (none: "")
}

type memRare struct {
	reason            Reason
	checksum, version string
}

func memOf(f File) memFile {
	m := memFile{path: f.Path, size: f.Size, eligible: f.eligible}
	if !f.ModificationTime.IsZero() {
		m.flags |= spillModTime
		m.sec, m.nsec = f.ModificationTime.Unix(), int32(f.ModificationTime.Nanosecond())
	}
	m.setChecksum(f.Checksum, f.ChecksumSize)
	if f.Version != "" {
		m.flags |= spillVersion
		m.rareOf().version = f.Version
	}
	if code := slices.Index(reasonCodes, f.Reason); code > 0 {
		m.reason = uint8(code)
	} else if f.Reason != "" {
		m.rareOf().reason = f.Reason
	}
	return m
}

func (m *memFile) rareOf() *memRare {
	if m.rare == nil {
		m.rare = &memRare{}
	}
	return m.rare
}

func (m *memFile) setChecksum(key string, size int64) {
	m.flags &^= spillUsualChecksum | spillOtherChecksum | spillChecksumSize
	m.checksumSize = 0
	if key != "" && size != 0 {
		m.flags |= spillChecksumSize
		m.checksumSize = size
	}
	switch {
	case key == "":
	case key == checksumCompanion(m.path):
		m.flags |= spillUsualChecksum
	default:
		m.flags |= spillOtherChecksum
		m.rareOf().checksum = key
	}
}

func (m *memFile) file() File {
	f := File{Path: m.path, Size: m.size, eligible: m.eligible}
	if m.flags&spillModTime != 0 {
		f.ModificationTime = time.Unix(m.sec, int64(m.nsec)).UTC()
	}
	switch {
	case m.flags&spillUsualChecksum != 0:
		f.Checksum = checksumCompanion(m.path)
	case m.flags&spillOtherChecksum != 0:
		f.Checksum = m.rare.checksum
	}
	if m.flags&spillVersion != 0 {
		f.Version = m.rare.version
	}
	f.ChecksumSize = m.checksumSize
	if m.reason > 0 {
		f.Reason = reasonCodes[m.reason]
	} else if m.rare != nil {
		f.Reason = m.rare.reason
	}
	return f
}

// memFiles converts files to the list's form.
func memFiles(files []File) []memFile {
	out := make([]memFile, len(files))
	for i, f := range files {
		out[i] = memOf(f)
	}
	return out
}

// NewFileList returns a list of files held in memory (it never spills).
func NewFileList(files ...File) FileList {
	return FileList{mem: memFiles(files), limit: -1}
}

// defaultFilesInMemory is the budget of Options.FilesInMemory 0; tests lower it to run every
// test with plans that spill.
var defaultFilesInMemory = DefaultFilesInMemory

func newSpillingList(limit int, dir, table string) FileList {
	if limit == 0 {
		limit = defaultFilesInMemory
	}
	return FileList{mem: []memFile{}, limit: limit, dir: dir, table: table}
}

// Len is the number of files.
func (l FileList) Len() int { return l.spilled() + len(l.mem) - l.skipped }

// without returns the list less the files at the paths in drop (skipped of them are in it),
// sharing its storage: it is only read.
func (l FileList) without(drop map[string]bool, skipped int) FileList {
	l.skip = drop
	l.skipped = skipped
	l.mem = slices.Clip(l.mem)
	return l
}

// Spilled reports whether some files are in the temporary file.
func (l FileList) Spilled() bool { return l.sp != nil && l.sp.Len() > 0 }

// SpillBytes is the size of the temporary file (0 when nothing spilled).
func (l FileList) SpillBytes() int64 {
	if l.sp == nil {
		return 0
	}
	return l.sp.Size()
}

func (l FileList) spilled() int {
	if l.sp == nil {
		return 0
	}
	return l.sp.Len()
}

// Append adds f at the end, writing the files held in memory to the temporary file when
// there are more than the budget.
func (l *FileList) Append(f File) error {
	if l.limit > 0 && len(l.mem) >= l.limit {
		if err := l.flush(); err != nil {
			return err
		}
	}
	l.mem = append(l.mem, memOf(f))
	return nil
}

func (l *FileList) flush() error {
	if l.sp == nil {
		sp, err := newSpill(l.dir, l.table)
		if err != nil {
			return err
		}
		l.sp = sp
	}
	if err := l.sp.Append(l.mem); err != nil {
		return err
	}
	clear(l.mem)
	l.mem = l.mem[:0]
	return nil
}

// setChecksum records the checksum companion of the i-th file, and its size.
func (l *FileList) setChecksum(i int, key string, size int64) {
	if n := l.spilled(); i >= n {
		l.mem[i-n].setChecksum(key, size)
		return
	}
	p := l.patchOf(i)
	p.checksum, p.checksumSize = key, size
	l.patches[i] = p
}

// raiseEligible makes the i-th file eligible no sooner than s.
func (l *FileList) raiseEligible(i int, s since) {
	if n := l.spilled(); i >= n {
		l.mem[i-n].eligible = max(l.mem[i-n].eligible, s)
		return
	}
	p := l.patchOf(i)
	p.eligible = max(p.eligible, s)
	l.patches[i] = p
}

func (l *FileList) patchOf(i int) patch {
	if l.patches == nil {
		l.patches = map[int]patch{}
	}
	return l.patches[i]
}

// truncate drops the files from the n-th on.
func (l *FileList) truncate(n int) error {
	s := l.spilled()
	if n >= s {
		clear(l.mem[n-s:])
		l.mem = l.mem[:n-s]
		return nil
	}
	clear(l.mem)
	l.mem = l.mem[:0]
	for i := range l.patches {
		if i >= n {
			delete(l.patches, i)
		}
	}
	return l.sp.Truncate(n)
}

func (l FileList) apply(i int, f *File) {
	if p, ok := l.patches[i]; ok {
		if p.checksum != "" {
			f.Checksum, f.ChecksumSize = p.checksum, p.checksumSize
		}
		f.eligible = max(f.eligible, p.eligible)
	}
}

// Each calls fn with every file, in order, and stops at the first error, which it returns. A
// temporary file that no longer reads back as written (changed or cut short) is an error
// before any of its files is given to fn.
func (l FileList) Each(fn func(File) error) error {
	if l.Spilled() {
		i := 0
		err := l.sp.Each(func(m memFile) error {
			f := m.file()
			l.apply(i, &f)
			i++
			if l.skip[f.Path] {
				return nil
			}
			return fn(f)
		})
		if err != nil {
			return err
		}
	}
	for i := range l.mem {
		if l.skip[l.mem[i].path] {
			continue
		}
		if err := fn(l.mem[i].file()); err != nil {
			return err
		}
	}
	return nil
}

// Sorted calls fn with every file in the order of their paths. A list that spilled is sorted
// in runs of the in-memory budget written to a second temporary file and merged.
func (l FileList) Sorted(fn func(File) error) error {
	if !l.Spilled() {
		files := make([]memFile, 0, l.Len())
		for _, m := range l.mem {
			if !l.skip[m.path] {
				files = append(files, m)
			}
		}
		for _, m := range spill.Sort(files, byPath) {
			if err := fn(m.file()); err != nil {
				return err
			}
		}
		return nil
	}
	return sortedRuns(l, fn)
}

// Collect returns all the files as one slice: for small plans and tests (a plan that spilled
// holds them all in memory again).
func (l FileList) Collect() ([]File, error) {
	out := make([]File, 0, l.Len())
	err := l.Each(func(f File) error { out = append(out, f); return nil })
	return out, err
}

// Verify reads the temporary file, if any, back and checks that it is as written; Execute
// calls it before deleting anything.
func (l FileList) Verify() error {
	if !l.Spilled() {
		return nil
	}
	return l.sp.Verify()
}

// Close releases the temporary file; the list is then empty if it had spilled. It may be
// called more than once.
func (l *FileList) Close() error {
	if l.sp == nil {
		return nil
	}
	return l.sp.Close()
}

// filter returns a new list (with the same budget and folder) of the files keep accepts.
func (l FileList) filter(keep func(File) bool) (FileList, error) {
	out := newSpillingList(l.limit, l.dir, l.table)
	err := l.Each(func(f File) error {
		if keep(f) {
			return out.Append(f)
		}
		return nil
	})
	if err != nil {
		_ = out.Close()
		return FileList{}, err
	}
	return out, nil
}

// MarshalJSON writes the files as a JSON array, as a []File would be.
func (l FileList) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the caller's encoder escapes, if it does
	b.WriteByte('[')
	first := true
	err := l.Each(func(f File) error {
		if !first {
			b.WriteByte(',')
		}
		first = false
		if err := enc.Encode(f); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON array of files into a list held in memory.
func (l *FileList) UnmarshalJSON(b []byte) error {
	var files []File
	if err := json.Unmarshal(b, &files); err != nil {
		return err
	}
	if files == nil {
		files = []File{}
	}
	*l = FileList{mem: memFiles(files), limit: -1}
	return nil
}

// errSpillTampered is wrapped by the error of a temporary file that does not read back.
var errSpillTampered = errors.New("the plan's temporary file changed since planning")

func spillTampered(table, path string, off int64, why string) error {
	return fmt.Errorf("table %s: %w (%s, at byte %d: %s): nothing more was deleted from it; plan again", table, errSpillTampered, path, off, why)
}

// errStop ends an Each early.
var errStop = errors.New("stop")

// Range returns at most limit files from the offset-th on (a page of the list).
func (l FileList) Range(offset, limit int) ([]File, error) {
	out := []File{}
	if limit <= 0 || offset >= l.Len() {
		return out, nil
	}
	i := 0
	err := l.Each(func(f File) error {
		if i >= offset {
			out = append(out, f)
			if len(out) == limit {
				return errStop
			}
		}
		i++
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	return out, nil
}

// MustCollect is Collect for tests and examples: it panics when the temporary file does not
// read back.
func (l FileList) MustCollect() []File {
	files, err := l.Collect()
	if err != nil {
		panic(err)
	}
	return files
}

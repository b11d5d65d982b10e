package spill

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// rec is the records of the tests: a key and a value, the latest of a key the largest value.
type rec struct {
	key string
	val int64
}

type recCodec struct{}

func (recCodec) Key(r *rec) string { return r.key }

func (recCodec) Append(b []byte, r *rec) []byte { return binary.AppendVarint(b, r.val) }

func (recCodec) Decode(key string, b []byte) (rec, []byte, error) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return rec{}, nil, ErrShort
	}
	return rec{key: key, val: v}, b[n:], nil
}

// latest sorts by key, then value, and keeps the largest value of a key.
var latest = Order[rec]{
	Compare: func(a, b rec) int { return cmp.Or(strings.Compare(a.key, b.key), cmp.Compare(a.val, b.val)) },
	Same:    func(a, b rec) bool { return a.key == b.key },
}

// every sorts likewise and keeps every record.
var every = Order[rec]{Compare: latest.Compare}

// faultError is the error of the tests' files: the Fault as it was given.
type faultError struct{ Fault }

func (e *faultError) Error() string {
	return fmt.Sprintf("fault %d at byte %d (%d of %d records of the run read): %v", e.Kind, e.Offset, e.Read, e.Of, e.Err)
}

func (e *faultError) Unwrap() error { return e.Err }

func faultOf(t testing.TB, err error) Fault {
	t.Helper()
	var fe *faultError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v: want a Fault", err)
	}
	return fe.Fault
}

func newStorage(t testing.TB) *os.File {
	t.Helper()
	s, err := os.CreateTemp(t.TempDir(), "spill-*")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newFile(t testing.TB, s Storage) *File[rec] {
	t.Helper()
	if s == nil {
		s = newStorage(t)
	}
	f := New(s, recCodec{}, func(ft Fault) error { return &faultError{ft} })
	t.Cleanup(func() { f.Close() })
	return f
}

// spillSorted keeps recs as the engine's users do: budget of them in memory, beyond it sorted
// and folded by o and appended as a run. It returns the file and the records left in memory,
// sorted and folded.
func spillSorted(t testing.TB, recs []rec, budget int, o Order[rec]) (*File[rec], []rec) {
	t.Helper()
	f := newFile(t, nil)
	var mem []rec
	for _, r := range recs {
		mem = append(mem, r)
		if len(mem) >= budget {
			if err := f.Append(Sort(mem, o)); err != nil {
				t.Fatal(err)
			}
			mem = mem[:0]
		}
	}
	return f, Sort(mem, o)
}

func merged(f *File[rec], mem []rec, o Order[rec]) ([]rec, error) {
	var out []rec
	m := f.Merge(mem, o)
	for {
		r, err := m.Next()
		if err != nil || r == nil {
			return out, err
		}
		out = append(out, *r)
	}
}

func each(f *File[rec]) ([]rec, error) {
	var out []rec
	err := f.Each(func(r rec) error { out = append(out, r); return nil })
	return out, err
}

// inMemory is what a merge must give: all the records sorted by o, the records of one key
// folded into the last.
func inMemory(recs []rec, o Order[rec]) []rec {
	out := slices.Clone(recs)
	slices.SortStableFunc(out, o.Compare)
	if o.Same == nil {
		return out
	}
	kept := []rec{}
	for i, r := range out {
		if i+1 < len(out) && o.Same(r, out[i+1]) {
			continue
		}
		kept = append(kept, r)
	}
	return kept
}

// randomRecs is n records with keys of a few names joined by '/', so that keys repeat and
// share prefixes, in random order.
func randomRecs(r *rand.Rand, n int) []rec {
	names := []string{"", "a", "b", "ab", "p=1", "p=2", "é", "\x00", "\xff", "part-00001.parquet"}
	out := make([]rec, n)
	for i := range out {
		var parts []string
		for range r.IntN(4) {
			parts = append(parts, names[r.IntN(len(names))])
		}
		out[i] = rec{key: strings.Join(parts, "/"), val: r.Int64N(7) - 3}
	}
	return out
}

// checkRoundTrip writes recs with the budget and checks every way of reading them back.
func checkRoundTrip(t *testing.T, recs []rec, budget int, o Order[rec]) {
	t.Helper()
	f, mem := spillSorted(t, recs, budget, o)
	if runs := len(recs) / budget; f.Runs() != runs {
		t.Errorf("%d runs, want %d", f.Runs(), runs)
	}
	got, err := merged(f, mem, o)
	if err != nil {
		t.Fatal(err)
	}
	if want := inMemory(recs, o); !slices.Equal(got, want) {
		t.Errorf("merged:\n%v\nwant, as sorted in memory:\n%v", got, want)
	}
	// The file holds the runs as appended, one after the other.
	var written []rec
	for i := 0; i+budget <= len(recs); i += budget {
		written = append(written, Sort(slices.Clone(recs[i:i+budget]), o)...)
	}
	if f.Len() != len(written) {
		t.Errorf("Len %d, want %d", f.Len(), len(written))
	}
	read, err := each(f)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(read, written) {
		t.Errorf("Each:\n%v\nwant:\n%v", read, written)
	}
	if err := f.Verify(); err != nil {
		t.Error(err)
	}
}

// TestMergeIsTheInMemorySort: whatever the records and the budget, the runs merged with the
// records in memory are the records sorted and folded in memory, and the file reads back as
// written.
func TestMergeIsTheInMemorySort(t *testing.T) {
	long := strings.Repeat("k", 3*BlockSize)
	many := make([]rec, 50_000) // runs of several blocks
	for i := range many {
		many[i] = rec{key: fmt.Sprintf("p=%d/part-%05d.parquet", i%7, (i*7919)%50_000), val: int64(i % 3)}
	}
	r := rand.New(rand.NewPCG(26, 4))
	tests := []struct {
		name   string
		recs   []rec
		budget int
	}{
		{"nothing", nil, 1},
		{"one record in memory", []rec{{"a", 1}}, 2},
		{"one record in a run", []rec{{"a", 1}}, 1},
		{"all in memory", randomRecs(r, 30), 100},
		{"a run per record", randomRecs(r, 30), 1},
		{"runs and records in memory", randomRecs(r, 31), 4},
		{"one key in every run", []rec{{"k", 3}, {"k", 1}, {"k", 9}, {"k", 2}, {"k", 9}, {"k", -1}, {"k", 0}}, 2},
		{"empty keys", []rec{{"", 2}, {"", 1}, {"a", 1}, {"", 3}}, 1},
		{"keys longer than a block", []rec{{long + "/a", 1}, {"b", 1}, {long + "/b", 2}, {long, 3}, {long + "/a", 0}, {long + "x", 1}}, 2},
		{"runs of many blocks", many, 20_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Run("folded", func(t *testing.T) { checkRoundTrip(t, tc.recs, tc.budget, latest) })
			t.Run("every record", func(t *testing.T) { checkRoundTrip(t, tc.recs, tc.budget, every) })
		})
	}
}

// TestConcurrentMerges: merges of one file read side by side, each on its own.
func TestConcurrentMerges(t *testing.T) {
	recs := randomRecs(rand.New(rand.NewPCG(26, 5)), 3000)
	f, mem := spillSorted(t, recs, 100, latest)
	want := inMemory(recs, latest)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			got, err := merged(f, mem, latest)
			if err == nil && !slices.Equal(got, want) {
				err = errors.New("a concurrent merge gave other records")
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// damaged is a file of three runs, some of several blocks, and its bytes.
func damaged(t *testing.T, perRun int) (*File[rec], []byte) {
	t.Helper()
	var recs []rec
	for i := range 3 * perRun {
		recs = append(recs, rec{key: fmt.Sprintf("p=%d/part-%06d", i%5, i*7), val: int64(i)})
	}
	f, _ := spillSorted(t, recs, perRun, latest)
	b := make([]byte, f.Size())
	if _, err := f.Storage().ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return f, b
}

// TestChangedByte: a byte changed anywhere in the file is an error of every read (Each,
// Verify, Merge), never other records: Changed, at the offset of its block.
func TestChangedByte(t *testing.T) {
	for _, perRun := range []int{40, 20000} {
		f, orig := damaged(t, perRun)
		var bytes []int // every byte of the small file; of the large one, each block's first, middle and last
		if perRun == 40 {
			for i := range orig {
				bytes = append(bytes, i)
			}
		} else {
			if len(f.blocks) < 9 {
				t.Fatalf("%d blocks: the test wants runs of several blocks", len(f.blocks))
			}
			for _, b := range f.blocks {
				bytes = append(bytes, int(b.off), int(b.off)+b.len/2, int(b.off)+b.len-1)
			}
		}
		s := f.Storage()
		for _, i := range bytes {
			if _, err := s.WriteAt([]byte{orig[i] ^ 0x5a}, int64(i)); err != nil {
				t.Fatal(err)
			}
			k := blockAt(f, int64(i))
			reads := map[string]func() error{
				"Each":   func() error { _, err := each(f); return err },
				"Verify": f.Verify,
				"Merge":  func() error { _, err := merged(f, nil, latest); return err },
			}
			for name, read := range reads {
				ft := faultOf(t, read())
				if ft.Kind != Changed || ft.Offset != f.blocks[k].off {
					t.Fatalf("byte %d changed, %s: %+v, want Changed at %d", i, name, ft, f.blocks[k].off)
				}
			}
			if _, err := s.WriteAt(orig[i:i+1], int64(i)); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := merged(f, nil, latest); err != nil || len(got) != 3*perRun {
			t.Fatalf("restored: %d records, %v", len(got), err)
		}
	}
}

// blockAt is the index of the block holding byte off.
func blockAt(f *File[rec], off int64) int {
	for k, b := range f.blocks {
		if off < b.off+int64(b.len) {
			return k
		}
	}
	return -1
}

// TestCutShort: a file cut to any length is an error (CutShort at the cut), never fewer
// records; the Fault says how many records of the run came before the damaged block.
func TestCutShort(t *testing.T) {
	f, orig := damaged(t, 40)
	s := f.Storage()
	for n := range len(orig) {
		if err := s.Truncate(int64(n)); err != nil {
			t.Fatal(err)
		}
		ft := faultOf(t, f.Verify())
		if ft.Kind != CutShort || ft.Offset != int64(n) || ft.Of != 40 || ft.Read != 0 {
			t.Fatalf("cut to %d: %+v, want CutShort at %d, 0 of 40 records read", n, ft, n)
		}
		if _, err := each(f); err == nil {
			t.Fatalf("cut to %d: Each succeeded", n)
		}
		if _, err := merged(f, nil, latest); faultOf(t, err).Kind != CutShort {
			t.Fatalf("cut to %d: Merge: %v", n, err)
		}
		if _, err := s.WriteAt(orig[n:], int64(n)); err != nil {
			t.Fatal(err)
		}
	}
	// In a run of several blocks, the records before the damaged block are counted.
	f, _ = damaged(t, 20000)
	last := f.blocks[f.runs[1]-1]
	if err := f.Storage().Truncate(last.off + 1); err != nil {
		t.Fatal(err)
	}
	ft := faultOf(t, f.Verify())
	if ft.Kind != CutShort || ft.Of != 20000 || ft.Read != 20000-last.n || last.n == 20000 {
		t.Fatalf("the first run's last block cut: %+v, want %d of 20000 read", ft, 20000-last.n)
	}
}

// TestUndecodable: a block that checks but does not decode (a codec's bug, or a CRC-32C
// collision) is an error with the decoder's reason; so are bytes after its last record.
func TestUndecodable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		block []byte
		n     int
		kind  Kind
		err   error
	}{
		{"empty", nil, 1, Undecodable, ErrShort},
		{"shares too much", []byte{1, 0, 0}, 1, Undecodable, ErrPrefix},
		{"key cut short", []byte{0, 5, 'a'}, 1, Undecodable, ErrShort},
		{"value cut short", []byte{0, 1, 'a'}, 1, Undecodable, ErrShort},
		{"bytes after the last record", []byte{0, 1, 'a', 2, 9}, 1, Trailing, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFile(t, nil)
			if _, err := f.Storage().WriteAt(tc.block, 0); err != nil {
				t.Fatal(err)
			}
			f.blocks = []block{{off: 0, len: len(tc.block), n: tc.n, crc: crc32.Checksum(tc.block, castagnoli)}}
			f.runs, f.n, f.size = []int{0}, tc.n, int64(len(tc.block))
			ft := faultOf(t, f.Each(func(rec) error { t.Fatal("a record was given"); return nil }))
			if ft.Kind != tc.kind || !errors.Is(ft.Err, tc.err) || (ft.Err == nil) != (tc.err == nil) {
				t.Fatalf("%+v, want kind %d, error %v", ft, tc.kind, tc.err)
			}
		})
	}
}

// TestTruncate: Truncate drops the records from the n-th on, the file's bytes with them, and
// Append goes on after them.
func TestTruncate(t *testing.T) {
	recs := make([]rec, 9000)
	for i := range recs {
		recs[i] = rec{key: fmt.Sprintf("d/%08d", i), val: int64(i)}
	}
	more := []rec{{"x", 1}, {"y", 2}}
	for _, n := range []int{0, 1, 2999, 3000, 3001, 4500, 8999, 9000, 12000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			f := newFile(t, nil)
			for i := 0; i < len(recs); i += 3000 {
				if err := f.Append(recs[i : i+3000]); err != nil {
					t.Fatal(err)
				}
			}
			size := f.Size()
			if err := f.Truncate(n); err != nil {
				t.Fatal(err)
			}
			kept := min(n, len(recs))
			if f.Len() != kept || f.Runs() != (kept+2999)/3000 {
				t.Errorf("Len %d, %d runs; want %d, %d", f.Len(), f.Runs(), kept, (kept+2999)/3000)
			}
			if fi, err := f.Storage().(*os.File).Stat(); err != nil || fi.Size() != f.Size() || (n < len(recs)) != (f.Size() < size) {
				t.Errorf("%d bytes on disk, Size %d, %d before: %v", fi.Size(), f.Size(), size, err)
			}
			if err := f.Append(more); err != nil {
				t.Fatal(err)
			}
			got, err := each(f)
			if want := append(slices.Clone(recs[:kept]), more...); err != nil || !slices.Equal(got, want) {
				t.Errorf("read back %d records (%v), want %d", len(got), err, len(want))
			}
		})
	}
}

// failing is a temporary file that refuses writes beyond room bytes, and truncation.
type failing struct {
	*os.File
	room   int64
	closed atomic.Bool
}

func (f *failing) WriteAt(b []byte, off int64) (int, error) {
	if off+int64(len(b)) > f.room {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.WriteAt(b, off)
}

func (f *failing) Truncate(int64) error {
	return &os.PathError{Op: "truncate", Path: f.Name(), Err: syscall.EIO}
}

func (f *failing) Close() error {
	f.closed.Store(true)
	return f.File.Close()
}

// TestWriteFailed: a write the system refuses is WriteFailed with its error, and the File is
// as before the Append; a refused truncation is TruncateFailed.
func TestWriteFailed(t *testing.T) {
	s := &failing{File: newStorage(t), room: 100}
	f := newFile(t, s)
	if err := f.Append([]rec{{"a", 1}, {"b", 2}}); err != nil {
		t.Fatal(err)
	}
	len0, size0, runs0 := f.Len(), f.Size(), f.Runs()
	big := make([]rec, 100)
	for i := range big {
		big[i] = rec{key: fmt.Sprint(i), val: 1}
	}
	ft := faultOf(t, f.Append(big))
	if ft.Kind != WriteFailed || !errors.Is(ft.Err, syscall.ENOSPC) {
		t.Fatalf("%+v, want WriteFailed, ENOSPC", ft)
	}
	if f.Len() != len0 || f.Size() != size0 || f.Runs() != runs0 {
		t.Errorf("after the failure: Len %d, Size %d, %d runs; want %d, %d, %d", f.Len(), f.Size(), f.Runs(), len0, size0, runs0)
	}
	if got, err := each(f); err != nil || !slices.Equal(got, []rec{{"a", 1}, {"b", 2}}) {
		t.Errorf("after the failure: %v, %v", got, err)
	}
	if ft := faultOf(t, f.Truncate(1)); ft.Kind != TruncateFailed || !errors.Is(ft.Err, syscall.EIO) {
		t.Errorf("%+v, want TruncateFailed, EIO", ft)
	}
}

// TestClose: reads after Close are ReadFailed; Close may be called twice.
func TestClose(t *testing.T) {
	f, mem := spillSorted(t, randomRecs(rand.New(rand.NewPCG(26, 6)), 20), 5, latest)
	if f.Closed() {
		t.Fatal("closed before Close")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if !f.Closed() {
		t.Error("not closed after Close")
	}
	if ft := faultOf(t, f.Verify()); ft.Kind != ReadFailed || !errors.Is(ft.Err, os.ErrClosed) {
		t.Errorf("Verify: %+v, want ReadFailed, os.ErrClosed", ft)
	}
	if _, err := merged(f, mem, latest); faultOf(t, err).Kind != ReadFailed {
		t.Errorf("Merge: %v, want ReadFailed", err)
	}
}

// TestCleanupClosesTheFile: the file of a File no longer reachable is closed.
func TestCleanupClosesTheFile(t *testing.T) {
	s := &failing{File: newStorage(t), room: 1 << 20}
	func() {
		f := New(s, recCodec{}, func(ft Fault) error { return &faultError{ft} })
		if err := f.Append([]rec{{"a", 1}}); err != nil {
			t.Fatal(err)
		}
	}()
	for range 500 { // up to 5 s: cleanups run on their own goroutine, late on a loaded machine
		runtime.GC()
		if s.closed.Load() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the file of an unreachable File is still open")
}

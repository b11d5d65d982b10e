package inventory

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/internal/spill"
	"github.com/deltavacuum/deltavacuum/internal/tempfile"
	"github.com/deltavacuum/deltavacuum/storage"
)

// spillEnv, when set, is the number of rows every Listing of the package keeps in memory: the
// suite runs a second time with listings that spill (TestSuiteWithSpilledListings).
const spillEnv = "DELTAVACUUM_TEST_INVENTORY_ROWS_IN_MEMORY"

func TestMain(m *testing.M) {
	if v := os.Getenv(spillEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "%s=%q: want a number of rows, 1 or more\n", spillEnv, v)
			os.Exit(2)
		}
		defaultRowsInMemory = n
	}
	os.Exit(m.Run())
}

// TestSuiteWithSpilledListings runs every test of the package again, in child processes, with
// listings that keep 1, 2 and 3 rows in memory and write the rest as runs to their temporary
// file: every listing, prefix and SkipDir test then passes through spill.go.
func TestSuiteWithSpilledListings(t *testing.T) {
	if os.Getenv(spillEnv) != "" {
		t.Skip("this is the run with spilled listings")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	for _, n := range []string{"1", "2", "3"} {
		cmd := osexec.Command(os.Args[0], "-test.count=1", "-test.skip=^(TestSuiteWithSpilledListings|Fuzz.*)$")
		cmd.Env = append(os.Environ(), spillEnv+"="+n)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the suite with %s rows in memory failed: %v\n%s", n, err, out)
		}
	}
}

// TestSpilledRunSpills: in the run with spilled listings, a listing of more rows than the
// budget really has spilled (so the suite above is not the in-memory one again).
func TestSpilledRunSpills(t *testing.T) {
	if os.Getenv(spillEnv) == "" {
		t.Skip("only in the run with spilled listings")
	}
	dir, root := tableRoot(t)
	var rows []row
	for i := range 5 {
		rows = append(rows, row{Path: dir + fmt.Sprintf("/f%d", i), Length: 1, ModificationTime: 1})
	}
	inv := filepath.Join(t.TempDir(), "inv.parquet")
	writeParquet(t, inv, rows)
	l := open(t, Source{Location: inv}, root)
	defer l.Close()
	if l.Len() != 5 || !l.Spilled() {
		t.Fatalf("%d entries, spilled %v: want 5, spilled", l.Len(), l.Spilled())
	}
}

// objects walks l recording every object in full, returning SkipDir for the keys in skip.
func objects(l *Listing, prefix string, skip map[string]bool) ([]string, error) {
	var out []string
	err := l.Walk(context.Background(), prefix, func(o storage.Object) error {
		out = append(out, fmt.Sprintf("%q dir=%v size=%d mtime=%d", o.Key, o.IsDir, o.Size, o.ModTime.UnixMilli()))
		if skip[o.Key] {
			return storage.SkipDir
		}
		return nil
	})
	return out, err
}

// build is a listing of the entries (in that order) that keeps budget of them in memory.
func build(t testing.TB, entries []entry, budget int) *Listing {
	t.Helper()
	l := &Listing{inventory: "test inventory", root: "file:///t", budget: budget, spillDir: t.TempDir()}
	for _, e := range entries {
		if err := l.add(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.finish(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// randomEntries is rows with few names, so that keys repeat (with different times, sizes and
// kinds) and directories nest, shuffled so the duplicates of a key land in different runs.
func randomEntries(r *rand.Rand, n int) []entry {
	names := []string{"a", "b", "a-b", "a.b", "p=1", "p=2", "_x", "\xff", "é"}
	var out []entry
	for range n {
		var parts []string
		for range 1 + r.IntN(4) {
			parts = append(parts, names[r.IntN(len(names))])
		}
		e := entry{key: strings.Join(parts, "/"), size: int64(r.IntN(5)), mtime: int64(r.IntN(4)) - 1, timed: r.IntN(5) > 0}
		if r.IntN(4) == 0 {
			e.dir, e.key, e.size = true, e.key+"/", 0
		} else if !e.timed {
			e.timed = true
		}
		out = append(out, e)
	}
	return out
}

// TestSpilledWalksAsInMemory: a listing that spilled walks exactly as the one in memory, with
// any budget: the same objects in the same order, the same latest row of a key whose rows lie
// in different runs, the same prefixes (and ErrNotExist) and the same SkipDir.
func TestSpilledWalksAsInMemory(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 1))
	for iter := range 200 {
		entries := randomEntries(r, 1+r.IntN(60))
		mem := build(t, entries, 1<<30)
		budget := 1 + r.IntN(7)
		sp := build(t, entries, budget)
		if !sp.Spilled() && len(entries) >= budget {
			t.Fatalf("%d entries with a budget of %d did not spill", len(entries), budget)
		}
		if mem.Len() != sp.Len() {
			t.Fatalf("iteration %d: Len %d in memory, %d spilled", iter, mem.Len(), sp.Len())
		}
		all, err := objects(mem, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		skip := map[string]bool{}
		prefixes := []string{"", "zz/", "a/zz/"}
		for _, e := range mem.entries {
			if e.dir && r.IntN(3) == 0 {
				skip[e.key] = true
			}
			if i := strings.LastIndexByte(strings.TrimSuffix(e.key, "/"), '/'); i >= 0 && r.IntN(3) == 0 {
				prefixes = append(prefixes, e.key[:i+1])
				skip[e.key[:i+1]] = r.IntN(2) == 0
			}
		}
		for _, prefix := range prefixes {
			for _, sk := range []map[string]bool{nil, skip} {
				want, werr := objects(mem, prefix, sk)
				got, gerr := objects(sp, prefix, sk)
				if (werr == nil) != (gerr == nil) || (werr != nil && errors.Is(werr, storage.ErrNotExist) != errors.Is(gerr, storage.ErrNotExist)) {
					t.Fatalf("iteration %d, prefix %q: error %v in memory, %v spilled", iter, prefix, werr, gerr)
				}
				diff(t, got, want)
			}
		}
		if len(all) < mem.Len() {
			t.Fatalf("iteration %d: %d objects walked, %d entries", iter, len(all), mem.Len())
		}
	}
}

// TestLatestRowAcrossRuns: of the rows of one key in different runs, the latest is kept; a
// row without modificationTime loses to one with it.
func TestLatestRowAcrossRuns(t *testing.T) {
	entries := []entry{
		{key: "f", size: 3, mtime: 30, timed: true},
		{key: "g", size: 1, mtime: 5, timed: true},
		{key: "f", size: 1, mtime: 10, timed: true},
		{key: "d/", dir: true, mtime: 50, timed: true},
		{key: "f", size: 2, mtime: 20, timed: true},
		{key: "d/", dir: true},
	}
	l := build(t, entries, 1)
	got, err := objects(l, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, got, []string{`"d/" dir=true size=0 mtime=50`, `"f" dir=false size=3 mtime=30`, `"g" dir=false size=1 mtime=5`})
	if l.Len() != 3 || l.spill.Runs() != 6 {
		t.Fatalf("Len %d, %d runs: want 3, 6", l.Len(), l.spill.Runs())
	}
}

// TestSpillDirNotWritable: a temporary file that cannot be created is an error naming the
// inventory and saying to set TMPDIR.
func TestSpillDirNotWritable(t *testing.T) {
	dir, root := tableRoot(t)
	inv := filepath.Join(t.TempDir(), "inv.parquet")
	writeParquet(t, inv, []row{{Path: dir + "/a", Length: 1, ModificationTime: 1}, {Path: dir + "/b", Length: 1, ModificationTime: 1}})
	notDir := filepath.Join(t.TempDir(), "file")
	writeFile(t, notDir, []byte("x"))
	_, err := Open(context.Background(), Source{Location: inv}, root, Options{RowsInMemory: 1, SpillDir: notDir})
	if err == nil || !strings.Contains(err.Error(), "inv.parquet") || !strings.Contains(err.Error(), "TMPDIR") {
		t.Fatalf("err %v: want one naming the inventory and TMPDIR", err)
	}
}

// TestSpilledFileLeavesNoName: on Unix the temporary file has no name once it is open; Close
// releases it and a Walk after Close is an error.
func TestSpilledFileLeavesNoName(t *testing.T) {
	dir, root := tableRoot(t)
	inv := filepath.Join(t.TempDir(), "inv.parquet")
	writeParquet(t, inv, []row{{Path: dir + "/a", Length: 1, ModificationTime: 1}, {Path: dir + "/b", Length: 2, ModificationTime: 1}, {Path: dir + "/a", Length: 3, ModificationTime: 2}})
	spillDir := t.TempDir()
	l, err := Open(context.Background(), Source{Location: inv}, root, Options{RowsInMemory: 1, SpillDir: spillDir})
	if err != nil {
		t.Fatal(err)
	}
	if names, _ := os.ReadDir(spillDir); len(names) != 0 && l.spill.Storage().(*tempfile.File).Path() == "" {
		t.Fatalf("%d names left in the spill folder", len(names))
	}
	got, err := objects(l, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, got, []string{`"a" dir=false size=3 mtime=2`, `"b" dir=false size=2 mtime=1`})
	if l.Len() != 2 {
		t.Fatalf("Len %d, want 2", l.Len())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := objects(l, "", nil); err == nil {
		t.Fatal("a Walk after Close succeeded")
	}
	if names, _ := os.ReadDir(spillDir); len(names) != 0 {
		t.Fatalf("%d names left in the spill folder after Close", len(names))
	}
}

// TestDamagedSpillFile: every byte of the temporary file changed, and the file cut at every
// length, makes Walk fail: never other rows.
func TestDamagedSpillFile(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 2))
	entries := randomEntries(r, 40)
	l := build(t, entries, 7)
	want, err := objects(l, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	orig := make([]byte, l.spill.Size())
	if _, err := l.spill.Storage().ReadAt(orig, 0); err != nil {
		t.Fatal(err)
	}
	f := l.spill.Storage()
	restore := func() {
		if err := f.Truncate(0); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(orig, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := range orig {
		b := []byte{orig[i] ^ byte(1+r.IntN(255))}
		if _, err := f.WriteAt(b, int64(i)); err != nil {
			t.Fatal(err)
		}
		got, err := objects(l, "", nil)
		if err == nil {
			t.Fatalf("byte %d of %d changed: the walk succeeded (same rows: %v)", i, len(orig), strings.Join(got, ",") == strings.Join(want, ","))
		}
		if !strings.Contains(err.Error(), "test inventory") || !strings.Contains(err.Error(), "damaged") {
			t.Fatalf("byte %d changed: %v, want an error naming the inventory and the damage", i, err)
		}
		restore()
	}
	for n := range len(orig) {
		if err := f.Truncate(int64(n)); err != nil {
			t.Fatal(err)
		}
		if _, err := objects(l, "", nil); err == nil {
			t.Fatalf("cut to %d of %d bytes: the walk succeeded", n, len(orig))
		}
		restore()
	}
	got, err := objects(l, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, got, want)
}

// TestSpilledLongKeys: keys far longer than a block are written and read back.
func TestSpilledLongKeys(t *testing.T) {
	long := strings.Repeat("k", 3*spill.BlockSize)
	entries := []entry{{key: long + "/a", timed: true}, {key: "b", timed: true}, {key: long + "/b", size: 1, timed: true}, {key: long + "x", timed: true}}
	mem, sp := build(t, entries, 1<<30), build(t, entries, 2)
	want, err := objects(mem, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := objects(sp, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, got, want)
}

// TestLenOfDamagedSpillFile: Len counts a spilled listing once, and is -1 (never another count)
// when its temporary file is damaged before that.
func TestLenOfDamagedSpillFile(t *testing.T) {
	entries := randomEntries(rand.New(rand.NewPCG(18, 3)), 30)
	want := build(t, entries, 1<<30).Len()
	l := build(t, entries, 4)
	b := make([]byte, 1)
	if _, err := l.spill.Storage().ReadAt(b, l.spill.Size()/2); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x55
	if _, err := l.spill.Storage().WriteAt(b, l.spill.Size()/2); err != nil {
		t.Fatal(err)
	}
	if n := l.Len(); n != -1 {
		t.Fatalf("Len of a damaged listing %d, want -1", n)
	}
	b[0] ^= 0x55
	if _, err := l.spill.Storage().WriteAt(b, l.spill.Size()/2); err != nil {
		t.Fatal(err)
	}
	if n := l.Len(); n != want {
		t.Fatalf("Len %d, want %d", n, want)
	}
}

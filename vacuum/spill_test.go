package vacuum

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/deltavacuum/deltavacuum/internal/spill"
	"github.com/deltavacuum/deltavacuum/internal/tempfile"
	"os"
	osexec "os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// spillEnv, set, is the budget of files in memory of every plan of the test binary: the whole
// suite runs a second time with plans that spill (TestSuiteWithSpilledPlans).
const spillEnv = "DELTAVACUUM_TEST_FILES_IN_MEMORY"

func TestMain(m *testing.M) {
	if v := os.Getenv(spillEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "%s=%q: want a number of files, 1 or more\n", spillEnv, v)
			os.Exit(2)
		}
		defaultFilesInMemory = n
	}
	os.Exit(m.Run())
}

// TestSuiteWithSpilledPlans runs every test of the package again, in a child process, with
// plans that keep 2 files in memory and write the rest to their temporary file: every rule,
// fixture, golden plan, digest and execution test then passes through spill.go.
func TestSuiteWithSpilledPlans(t *testing.T) {
	if os.Getenv(spillEnv) != "" {
		t.Skip("this is the run with spilled plans")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	if os.Getenv("DELTAVACUUM_MUTATION") != "" {
		// make mutation (scripts/mutation.sh): a mutant of a rule fails the suite without
		// spilling as it fails it with, in half the time.
		t.Skip("mutation testing: the suite runs once, without spilled plans")
	}
	cmd := osexec.Command(os.Args[0], "-test.count=1", "-test.skip=^TestSuiteWithSpilledPlans$")
	cmd.Env = append(os.Environ(), spillEnv+"=2")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the suite with spilled plans failed: %v\n%s", err, out)
	}
}

// TestSpilledRunSpills: in the run with spilled plans, a plan of more files than the budget
// has really spilled (so the suite above is not the in-memory one twice).
func TestSpilledRunSpills(t *testing.T) {
	if os.Getenv(spillEnv) == "" {
		t.Skip("only in the run with spilled plans")
	}
	tb := newTable(t, tableSpec{})
	for i := range 5 {
		tb.file(fmt.Sprintf("f%d.parquet", i), 30*day)
	}
	plan := tb.plan(retain0)
	if plan.Files.Len() != 5 || !plan.Files.Spilled() {
		t.Fatalf("%d files, spilled %v: want 5 files, spilled", plan.Files.Len(), plan.Files.Spilled())
	}
}

// spillSample is files with every field the encoding knows, in every form.
func spillSample() []File {
	base := time.Date(2026, 3, 4, 5, 6, 7, 891011121, time.UTC)
	var out []File
	reasons := []Reason{ReasonTombstone, ReasonChangeData, ReasonDeletionVector, ReasonUntracked, "some future reason"}
	for i := range 40 {
		f := File{
			Path:   fmt.Sprintf("p=%d/part-%05d-é\x00\n.parquet", i%3, 40-i),
			Size:   int64(i * 1000003),
			Reason: reasons[i%len(reasons)],
		}
		switch i % 4 {
		case 0: // no modification time (LITE)
		case 1:
			f.ModificationTime = base.Add(time.Duration(i) * time.Hour)
		case 2:
			f.ModificationTime = time.Date(1601, 1, 1, 0, 0, 0, 1, time.UTC) // before 1970, beyond UnixNano
		case 3:
			f.ModificationTime = time.Date(3000, 1, 1, 0, 0, 0, 999999999, time.UTC)
		}
		switch i % 3 {
		case 1:
			f.Checksum = checksumCompanion(f.Path)
		case 2:
			f.Checksum = fmt.Sprintf("elsewhere/.%d.crc", i)
		}
		if f.Checksum != "" && i%4 != 0 {
			f.ChecksumSize = int64(i%4*5 - 6) // -1 (unknown), 4 and 9; none at every 4th
		}
		if i%5 == 2 {
			f.Version = strconv.Itoa(1700000000000000 + i)
		}
		f.eligible = since(int64(i) * 7777777)
		if i == 7 {
			f.Size, f.eligible = -1, since(-5)
		}
		out = append(out, f)
	}
	out = append(out, File{Path: "", Reason: ReasonUntracked}) // a path that shares nothing
	return out
}

func listOf(t *testing.T, limit int, files []File) FileList {
	t.Helper()
	l := newSpillingList(limit, t.TempDir(), "mem://t")
	for _, f := range files {
		if err := l.Append(f); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func collect(t *testing.T, l FileList) []File {
	t.Helper()
	got, err := l.Collect()
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestFileListReadsBackWhatWasWritten: every budget gives back the files as appended, every
// field exact; Sorted gives them by path; the JSON is that of the slice.
func TestFileListReadsBackWhatWasWritten(t *testing.T) {
	want := spillSample()
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	sorted := slices.Clone(want)
	slices.SortFunc(sorted, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for _, limit := range []int{-1, 1, 2, 3, 7, 40, 41, 1000} {
		l := listOf(t, limit, want)
		if l.Spilled() != (limit > 0 && limit < len(want)) {
			t.Errorf("limit %d: spilled %v", limit, l.Spilled())
		}
		if l.Len() != len(want) {
			t.Errorf("limit %d: Len %d, want %d", limit, l.Len(), len(want))
		}
		if got := collect(t, l); !reflect.DeepEqual(got, want) {
			t.Errorf("limit %d: read back\n%v\nwant\n%v", limit, got, want)
		}
		var bySorted []File
		if err := l.Sorted(func(f File) error { bySorted = append(bySorted, f); return nil }); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(bySorted, sorted) {
			t.Errorf("limit %d: Sorted is not by path", limit)
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(wantJSON) {
			t.Errorf("limit %d: JSON\n%s\nwant\n%s", limit, b, wantJSON)
		}
		page, err := l.Range(5, 3)
		if err != nil || !reflect.DeepEqual(page, want[5:8]) {
			t.Errorf("limit %d: Range(5, 3) = %v, %v", limit, page, err)
		}
	}
}

// TestFileListPatchesAndTruncation: a checksum companion found late, a LITE candidate named
// again and a nested table's take-back change files already written out exactly as they
// change files in memory; appending after a truncation continues from it.
func TestFileListPatchesAndTruncation(t *testing.T) {
	sample := spillSample()
	for _, limit := range []int{-1, 1, 2, 5, 16} {
		for _, cut := range []int{0, 1, 4, 5, 6, 17, 33, 40} {
			want := slices.Clone(sample)
			l := listOf(t, limit, want)
			for _, i := range []int{0, 3, 9, 39} {
				key := fmt.Sprintf("late/.%d.crc", i)
				l.setChecksum(i, key, int64(10+i))
				want[i].Checksum, want[i].ChecksumSize = key, int64(10+i)
				l.raiseEligible(i, since(1<<40))
				want[i].eligible = since(1 << 40)
				l.raiseEligible(i, since(5)) // never lowers
			}
			if err := l.truncate(cut); err != nil {
				t.Fatal(err)
			}
			want = want[:cut]
			if l.Len() != cut {
				t.Fatalf("limit %d cut %d: Len %d", limit, cut, l.Len())
			}
			more := sample[10:20]
			for _, f := range more {
				if err := l.Append(f); err != nil {
					t.Fatal(err)
				}
			}
			want = append(want, more...)
			if got := collect(t, l); !reflect.DeepEqual(got, want) {
				t.Errorf("limit %d cut %d: got\n%v\nwant\n%v", limit, cut, got, want)
			}
		}
	}
}

// spillTable is a table whose plan has a nested table to take back after some of its files
// were planned, checksum companions listed after their files, and files in several folders.
func spillTable(t *testing.T) *table {
	tb := newTable(t, tableSpec{})
	tb.commit(add("live.parquet"), add("p=1/live.parquet"), remove("p=1/gone.parquet", 30*day))
	for _, k := range []string{"live.parquet", "p=1/live.parquet", "p=1/gone.parquet", "a.parquet", "b.parquet",
		"-a.parquet", "-b.parquet", "-c.parquet", ".-a.parquet.crc", ".-c.parquet.crc", ".b.parquet.crc",
		"p=1/x.parquet", "p=1/y.parquet", "p=2/z.parquet",
		"n/A1.parquet", "n/A2.parquet", "n/A3.parquet", "n/B/c.parquet", "n/_delta_log/00000000000000000000.json", "n/part-0.parquet",
		"q/r/s.parquet", "zz.parquet"} {
		tb.file(k, 30*day)
	}
	tb.dir("empty", 30*day)
	return tb
}

// TestSpilledPlanIsThePlan: a plan that spilled after every file, or every few, is the plan
// held in memory: the same files in the same order with the same counts, JSON and digest;
// executed, it deletes the same files.
func TestSpilledPlanIsThePlan(t *testing.T) {
	ref := spillTable(t)
	want := ref.plan(Options{RetainHours: hours(0), DisableRetentionCheck: true, FilesInMemory: -1})
	if want.Files.Spilled() {
		t.Fatal("FilesInMemory -1 spilled")
	}
	wantFiles := collect(t, want.Files)
	wantJSON, _ := json.Marshal(want)
	if len(want.NestedTables) != 1 || deleted(want)["n/A1.parquet"] != "" || deleted(want)["-a.parquet"] == "" {
		t.Fatalf("the table does not test what it should: nested %v, deleted %v", want.NestedTables, deleted(want))
	}
	companions := 0
	for _, f := range wantFiles {
		if f.Checksum != "" {
			companions++
		}
	}
	if companions != 3 {
		t.Fatalf("%d checksum companions planned, want 3", companions)
	}
	wantRes, err := exec(t, ref, want)
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 2, 3} {
		tb := spillTable(t)
		got := tb.plan(Options{RetainHours: hours(0), DisableRetentionCheck: true, FilesInMemory: limit, SpillDir: t.TempDir()})
		if !got.Files.Spilled() {
			t.Fatalf("limit %d: did not spill", limit)
		}
		if files := collect(t, got.Files); !reflect.DeepEqual(files, wantFiles) {
			t.Errorf("limit %d: files\n%v\nwant\n%v", limit, files, wantFiles)
		}
		if got.NumFilesToDelete != want.NumFilesToDelete || got.SizeOfDataToDelete != want.SizeOfDataToDelete || !reflect.DeepEqual(got.NestedTables, want.NestedTables) {
			t.Errorf("limit %d: %d files %d bytes nested %v, want %d %d %v", limit, got.NumFilesToDelete, got.SizeOfDataToDelete, got.NestedTables,
				want.NumFilesToDelete, want.SizeOfDataToDelete, want.NestedTables)
		}
		if b, _ := json.Marshal(got); string(b) != string(wantJSON) {
			t.Errorf("limit %d: JSON\n%s\nwant\n%s", limit, b, wantJSON)
		}
		if Digest(got) != Digest(want) {
			t.Errorf("limit %d: digest %s, want %s", limit, Digest(got), Digest(want))
		}
		res, err := exec(t, tb, got)
		if err != nil {
			t.Fatal(err)
		}
		if res.NumDeletedFiles != wantRes.NumDeletedFiles || !slices.Equal(keys(tb), keys(ref)) {
			t.Errorf("limit %d: deleted %d, left %v; want %d, %v", limit, res.NumDeletedFiles, keys(tb), wantRes.NumDeletedFiles, keys(ref))
		}
		if err := got.Close(); err != nil {
			t.Fatal(err)
		}
		if err := got.Files.Each(func(File) error { return nil }); err == nil {
			t.Error("a closed plan that spilled still reads")
		}
	}
}

// TestSpillFolderThatCannotBeWritten: a plan that must spill where no file can be created is
// refused, naming the table and TMPDIR; nothing is deleted.
func TestSpillFolderThatCannotBeWritten(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(t.TempDir(), "missing"), file} {
		tb := spillTable(t)
		before := keys(tb)
		p, err := tb.planner(Options{RetainHours: hours(0), DisableRetentionCheck: true, FilesInMemory: 1, SpillDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := p.Plan(context.Background())
		if err == nil || plan != nil {
			t.Fatalf("%s: planned (%v), want a refusal", dir, err)
		}
		for _, want := range []string{"mem://bucket/table", "TMPDIR", dir, "nothing was deleted"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", dir, err, want)
			}
		}
		if strings.Count(err.Error(), "nothing was deleted") != 1 {
			t.Errorf("error %q says it twice", err)
		}
		if !slices.Equal(keys(tb), before) {
			t.Error("something was deleted")
		}
	}
}

// fullDisk is a temporary file on a disk that fills up after some bytes.
type fullDisk struct {
	*tempfile.File
	room int64
}

func (f *fullDisk) WriteAt(b []byte, off int64) (int, error) {
	if off+int64(len(b)) > f.room {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.WriteAt(b, off)
}

// TestSpillDiskFull: a temporary file that cannot grow refuses the plan with the system's
// error (ENOSPC), naming the table; nothing is deleted.
func TestSpillDiskFull(t *testing.T) {
	orig := createSpillFile
	t.Cleanup(func() { createSpillFile = orig })
	createSpillFile = func(dir string) (spillFile, error) {
		f, err := orig(dir)
		if err != nil {
			return nil, err
		}
		return &fullDisk{File: f.(*tempfile.File), room: 40}, nil
	}
	tb := spillTable(t)
	before := keys(tb)
	p, err := tb.planner(Options{RetainHours: hours(0), DisableRetentionCheck: true, FilesInMemory: 1, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Plan(context.Background())
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "mem://bucket/table") || !strings.Contains(err.Error(), "TMPDIR") {
		t.Fatalf("got %v, want ENOSPC naming the table and TMPDIR", err)
	}
	if !slices.Equal(keys(tb), before) {
		t.Error("something was deleted")
	}
}

// TestSpillFileChangedBeforeExecute: a temporary file changed or cut short between planning
// and executing is refused before the run is recorded or anything is deleted; its digest is
// no digest, and a run expecting the plan's digest is refused.
func TestSpillFileChangedBeforeExecute(t *testing.T) {
	damages := map[string]func(sp *spill.File[memFile]) error{
		"a byte changed": func(sp *spill.File[memFile]) error {
			_, err := sp.Storage().WriteAt([]byte{0xff}, sp.Size()/2)
			return err
		},
		"cut short": func(sp *spill.File[memFile]) error { return sp.Storage().Truncate(sp.Size() - 3) },
		"emptied":   func(sp *spill.File[memFile]) error { return sp.Storage().Truncate(0) },
		"the last byte": func(sp *spill.File[memFile]) error {
			_, err := sp.Storage().WriteAt([]byte{0x7f}, sp.Size()-1)
			return err
		},
		"the first byte": func(sp *spill.File[memFile]) error { _, err := sp.Storage().WriteAt([]byte{0x7f}, 0); return err },
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			tb := spillTable(t)
			plan := tb.plan(Options{RetainHours: hours(0), DisableRetentionCheck: true, FilesInMemory: 2, SpillDir: t.TempDir()})
			digest := Digest(plan)
			before := keys(tb)
			if err := damage(plan.Files.sp); err != nil {
				t.Fatal(err)
			}
			_, err := Execute(context.Background(), tb.store, plan, ExecOptions{})
			if !errors.Is(err, errSpillTampered) || !strings.Contains(err.Error(), "mem://bucket/table") {
				t.Fatalf("got %v, want the damaged temporary file refused, naming the table", err)
			}
			if !slices.Equal(keys(tb), before) {
				t.Errorf("left %v, want %v", keys(tb), before)
			}
			if d := Digest(plan); ValidDigest(d) {
				t.Errorf("the damaged plan has a digest %s", d)
			}
			if err := CheckDigest(plan, digest); err == nil {
				t.Error("CheckDigest accepted the damaged plan")
			}
			if _, err := json.Marshal(plan); err == nil {
				t.Error("the damaged plan was printed")
			}
		})
	}
}

package vacuum

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func digestPlan() *Plan {
	mod := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &Plan{
		Table: "file:///t", Version: 7, Mode: ModeFull, RetentionHours: 168,
		Files: NewFileList(
			File{Path: "b.parquet", Size: 10, ModificationTime: mod, Reason: ReasonUntracked},
			File{Path: "a.parquet", Size: 20, ModificationTime: mod, Reason: ReasonTombstone, Checksum: ".a.parquet.crc"},
		),
		Dirs:             []Dir{{Path: "p=2"}, {Path: "p=1"}},
		NumFilesToDelete: 2, SizeOfDataToDelete: 30,
	}
}

// TestDigest: the digest is of what is deleted, in any order; every change of a deleted
// object, of the snapshot version, the mode or the retention changes it; the clock does not.
func TestDigest(t *testing.T) {
	base := Digest(digestPlan())
	if !ValidDigest(base) {
		t.Fatalf("%q is not a valid digest", base)
	}
	same := digestPlan()
	fs := same.Files.MustCollect()
	same.Files = NewFileList(fs[1], fs[0])
	same.Dirs[0], same.Dirs[1] = same.Dirs[1], same.Dirs[0]
	same.Cutoff, same.now = time.Now(), time.Now()
	if Digest(same) != base {
		t.Error("the order of files or directories, or the clock, changed the digest")
	}
	changes := map[string]func(p *Plan, fs []File) []File{
		"version":      func(p *Plan, fs []File) []File { p.Version++; return fs },
		"mode":         func(p *Plan, fs []File) []File { p.Mode = ModeLite; return fs },
		"retention":    func(p *Plan, fs []File) []File { p.RetentionHours = 169; return fs },
		"table":        func(p *Plan, fs []File) []File { p.Table = "file:///u"; return fs },
		"file added":   func(p *Plan, fs []File) []File { return append(fs, File{Path: "c.parquet", Size: 1}) },
		"file removed": func(p *Plan, fs []File) []File { return fs[:1] },
		"file renamed": func(p *Plan, fs []File) []File { fs[0].Path = "B.parquet"; return fs },
		"file resized": func(p *Plan, fs []File) []File { fs[0].Size++; return fs },
		"file rewritten": func(p *Plan, fs []File) []File {
			fs[0].ModificationTime = fs[0].ModificationTime.Add(time.Millisecond)
			return fs
		},
		"checksum companion": func(p *Plan, fs []File) []File { fs[0].Checksum = ".b.parquet.crc"; return fs },
		"directory added":    func(p *Plan, fs []File) []File { p.Dirs = append(p.Dirs, Dir{Path: "p=3"}); return fs },
		"directory removed":  func(p *Plan, fs []File) []File { p.Dirs = nil; return fs },
		// A path that holds the separators of the digest's fields cannot pass for two fields.
		"separator in a path": func(p *Plan, fs []File) []File { fs[0].Path, fs[0].Size = "b.parquet\x0010", 0; return fs },
	}
	for name, change := range changes {
		p := digestPlan()
		p.Files = NewFileList(change(p, p.Files.MustCollect())...)
		if Digest(p) == base {
			t.Errorf("%s: the digest did not change", name)
		}
	}
	if Digest(&Plan{Mode: ""}) != Digest(&Plan{Mode: ModeFull}) {
		t.Error("the default mode is FULL")
	}
}

// TestCheckDigest: the guard a run executes a previewed plan with.
func TestCheckDigest(t *testing.T) {
	p := digestPlan()
	if err := CheckDigest(p, Digest(p)); err != nil {
		t.Fatalf("the same plan: %v", err)
	}
	q := digestPlan()
	q.Version = 8
	q.Files = NewFileList(append(q.Files.MustCollect(), File{Path: "new.parquet", Size: 5})...)
	q.NumFilesToDelete, q.SizeOfDataToDelete = 3, 35
	err := CheckDigest(q, Digest(p))
	var pc *PlanChangedError
	if !errors.As(err, &pc) || !errors.Is(err, ErrPlanChanged) {
		t.Fatalf("a changed plan: got %v, want a *PlanChangedError", err)
	}
	if pc.Version != 8 || pc.NumFiles != 3 || pc.Bytes != 35 || pc.Expected != Digest(p) || pc.Got != Digest(q) {
		t.Errorf("the error's figures: %+v", pc)
	}
	if !strings.Contains(err.Error(), "nothing was deleted") || !strings.Contains(err.Error(), "file:///t") {
		t.Errorf("the message does not say what happened to which table: %v", err)
	}
	for _, bogus := range []string{"x", Digest(p)[:20], strings.ToUpper(Digest(p)), "plan1-" + strings.Repeat("g", 64), "plan2-" + strings.Repeat("0", 64), Digest(p) + "0", " " + Digest(p)} {
		err := CheckDigest(p, bogus)
		if err == nil || errors.Is(err, ErrPlanChanged) {
			t.Errorf("bogus digest %q: got %v, want a refusal that is not a plan change", bogus, err)
		}
	}
}

// TestDigestPathCannotForgeFiles: a path that holds the bytes of another file's entry (a NUL,
// a newline) does not make one file the digest of two.
func TestDigestPathCannotForgeFiles(t *testing.T) {
	two := &Plan{Table: "file:///t", Version: 1, Files: NewFileList(File{Path: "x.parquet", Size: 1}, File{Path: "y.parquet", Size: 2})}
	one := &Plan{Table: "file:///t", Version: 1, Files: NewFileList(File{Path: "x.parquet\x001\x000\x00\nf\x00y.parquet", Size: 2})}
	if Digest(two) == Digest(one) {
		t.Fatal("one file with a forged path has the digest of two files")
	}
	nl := &Plan{Table: "file:///t", Version: 1, Files: NewFileList(File{Path: "x.parquet\n", Size: 1})}
	if Digest(nl) == Digest(&Plan{Table: "file:///t", Version: 1, Files: NewFileList(File{Path: "x.parquet", Size: 1})}) {
		t.Fatal("a trailing newline in a path is not in the digest")
	}
}

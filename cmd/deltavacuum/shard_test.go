package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/bench/tablegen"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// TestShardProcessesAreOneRun is the acceptance test of --shard I/N --version V: N processes
// of the built command, started together, each vacuuming one shard at one pinned version,
// together plan (DRY RUN) exactly what one run plans, on every fixture table and on generated
// ones (partitioned and not, deletion vectors, checksum companions at the root and in folders,
// a nested table, empty folders, a young file); and run for real on one copy, they leave the
// same tree as one run leaves on another copy, without writing _delta_log/_last_vacuum_info.
func TestShardProcessesAreOneRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs it hundreds of times")
	}
	bin := filepath.Join(t.TempDir(), "deltavacuum")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	now := time.Now()
	old := now.Add(-30 * 24 * time.Hour)
	type source struct {
		name string
		copy func(t *testing.T) string
	}
	var sources []source
	for _, tbl := range fixtures.Tables(t) {
		sources = append(sources, source{tbl.Name, func(t *testing.T) string { return fixtures.Copy(t, tbl.Name, old) }})
	}
	for name, spec := range map[string]tablegen.Spec{
		"generated/partitioned":   {Live: 300, Tombstones: 80, Untracked: 40, Partitions: 17, DVFraction: 0.2},
		"generated/unpartitioned": {Live: 200, Tombstones: 60, Untracked: 30, DVFraction: 0.3},
	} {
		spec.Time, spec.AgeDays, spec.Seed = now, 30, 7
		sources = append(sources, source{name, func(t *testing.T) string { return generated(t, spec, old, now) }})
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			t.Parallel()
			dir := src.copy(t)
			version := latestVersion(t, dir)
			one := runShards(t, bin, []string{dir}, version, 0, true)[0]
			for _, n := range []int{1, 2, 3, 7} {
				dirs := slices.Repeat([]string{dir}, n)
				shards := runShards(t, bin, dirs, version, n, true)
				checkUnion(t, fmt.Sprintf("DRY RUN, %d shards", n), one, shards)
			}
			// For real: one run on a copy, the shards on another copy.
			counts := []int{3}
			if strings.HasPrefix(src.name, "generated/") {
				counts = append(counts, 7)
			}
			oneDir := src.copy(t)
			runShards(t, bin, []string{oneDir}, version, 0, false)
			want := tree(t, oneDir)
			for _, n := range counts {
				shardDir := src.copy(t)
				info := readOrNil(filepath.Join(shardDir, filepath.FromSlash(deltalog.LastVacuumInfoKey)))
				shards := runShards(t, bin, slices.Repeat([]string{shardDir}, n), version, n, false)
				if extra, missing := diff(tree(t, shardDir), want); len(extra)+len(missing) > 0 {
					t.Errorf("%d shards for real leave %q that one run deletes, and delete %q that one run leaves", n, extra, missing)
				}
				if one.ExitCode == 0 {
					if after := readOrNil(filepath.Join(shardDir, filepath.FromSlash(deltalog.LastVacuumInfoKey))); !bytes.Equal(after, info) {
						t.Errorf("%d shards changed %s: %q -> %q", n, deltalog.LastVacuumInfoKey, info, after)
					}
				}
				for i, s := range shards {
					if s.ExitCode != one.ExitCode {
						t.Errorf("shard %d/%d for real: exit %d (%s), one run: exit %d (%s)", i, n, s.ExitCode, s.Stderr, one.ExitCode, one.Stderr)
					}
				}
			}
		})
	}
}

// shardResult is what the command prints with --json (a result, or an error document).
type shardResult struct {
	Files []struct {
		Path     string `json:"path"`
		Checksum string `json:"checksumFile"`
		Reason   string `json:"reason"`
	} `json:"files"`
	Dirs []struct {
		Path string `json:"path"`
	} `json:"directories"`
	Shard *struct {
		Index, Count int
	} `json:"shard"`
	Version  int64  `json:"version"`
	Error    string `json:"error"`
	ExitCode int    `json:"exitCode"`
	Stderr   string `json:"-"`
}

// runShards runs one process per dir at once: shard i of n of dirs[i] at version (n 0: one
// run of the whole table, unpinned), and returns their results.
func runShards(t *testing.T, bin string, dirs []string, version int64, n int, dryRun bool) []shardResult {
	t.Helper()
	out := make([]shardResult, len(dirs))
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	for i, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"vacuum", dir, "--json", "--progress", "none", "--retain-hours", "0",
				"--conf", "spark.databricks.delta.retentionDurationCheck.enabled=false"}
			if dryRun {
				args = append(args, "--dry-run")
			}
			if n > 0 {
				args = append(args, "--shard", fmt.Sprintf("%d/%d", i, n), "--version", fmt.Sprint(version))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code, err = ee.ExitCode(), nil
			}
			if err != nil {
				errs[i] = err
				return
			}
			if err := json.Unmarshal(stdout.Bytes(), &out[i]); err != nil {
				errs[i] = fmt.Errorf("%v: %s\n%s", err, stdout.Bytes(), stderr.Bytes())
				return
			}
			out[i].ExitCode = max(out[i].ExitCode, code)
			out[i].Stderr = stderr.String()
			if code == 0 && n > 0 && (out[i].Shard == nil || out[i].Shard.Index != i || out[i].Shard.Count != n || out[i].Version != version) {
				errs[i] = fmt.Errorf("shard %d/%d at %d: the output says shard %+v version %d", i, n, version, out[i].Shard, out[i].Version)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// checkUnion compares the union of the shards' plans with one run's: the same files, with the
// same companions and reasons, and directories; no entry in two shards; the same refusal.
func checkUnion(t *testing.T, what string, one shardResult, shards []shardResult) {
	t.Helper()
	var union []string
	for i, s := range shards {
		if s.ExitCode != one.ExitCode {
			t.Errorf("%s: shard %d exits %d (%s), one run %d (%s)", what, i, s.ExitCode, s.Stderr, one.ExitCode, one.Stderr)
		}
		union = append(union, entries(s)...)
	}
	slices.Sort(union)
	want := entries(one)
	if extra, missing := diff(union, want); len(extra)+len(missing) > 0 || len(union) != len(want) {
		t.Errorf("%s: the shards plan %q that one run does not, and not %q that one run does (%d entries, one run %d)", what, extra, missing, len(union), len(want))
	}
}

// diff returns what is in got but not in want, and what is in want but not in got.
func diff(got, want []string) (extra, missing []string) {
	in := func(list []string) map[string]bool {
		m := map[string]bool{}
		for _, s := range list {
			m[s] = true
		}
		return m
	}
	g, w := in(got), in(want)
	for _, s := range got {
		if !w[s] {
			extra = append(extra, s)
		}
	}
	for _, s := range want {
		if !g[s] {
			missing = append(missing, s)
		}
	}
	return extra, missing
}

func entries(r shardResult) []string {
	var out []string
	for _, f := range r.Files {
		out = append(out, "file "+f.Path+" "+f.Checksum+" "+f.Reason)
	}
	for _, d := range r.Dirs {
		out = append(out, "dir "+d.Path)
	}
	slices.Sort(out)
	return out
}

func latestVersion(t *testing.T, dir string) int64 {
	t.Helper()
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	seg, err := deltalog.ListLog(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	return seg.Version
}

// tree lists every file and directory below root, but the log and the tool's own folder
// (each shard commits its own START and END and keeps its own run record).
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "_delta_log" || rel == "_deltavacuum" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readOrNil(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// generated writes a tablegen table and, beside its files, what a generated table lacks:
// Hadoop checksum companions at the root and in a partition (of candidates and of live files),
// a nested table, empty folders old and young, a folder only a candidate is in, hidden entries
// and a young untracked file. Every entry is old but the young ones, dated an hour ahead.
func generated(t *testing.T, spec tablegen.Spec, old, now time.Time) string {
	t.Helper()
	young := now.Add(time.Hour) // after the cutoff of RETAIN 0 HOURS, whenever the runs start
	tbl, err := tablegen.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "table")
	if err := tbl.WriteLocal(context.Background(), dir, nil); err != nil {
		t.Fatal(err)
	}
	var firstData string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && firstData == "" && !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.Contains(p, "_delta_log") {
			firstData = p
		}
		return err
	})
	if err != nil || firstData == "" {
		t.Fatalf("no data file in the generated table: %v", err)
	}
	files := map[string]time.Time{
		"extra-untracked-1.parquet": old, ".extra-untracked-1.parquet.crc": old,
		"extra-untracked-2.parquet": old, ".extra-untracked-2.parquet.crc": old,
		".orphan-companion.parquet.crc":                   old,
		"nested_tbl/A.parquet":                            old,
		"nested_tbl/_delta_log/00000000000000000000.json": old,
		"nested_tbl/z.parquet":                            old,
		"deep=1/a/b/only-untracked.parquet":               old,
		"deep=1/a/.only-untracked.parquet.crc":            old,
		"_hidden/x.parquet":                               old,
		".hidden-root":                                    old,
		"young-untracked.parquet":                         young,
		"Case=1/a.parquet":                                old,
		"case=1/b.parquet":                                old,
	}
	// A companion of a live or tombstoned data file, in its folder.
	rel, _ := filepath.Rel(dir, firstData)
	files[filepath.ToSlash(filepath.Join(filepath.Dir(rel), "."+filepath.Base(rel)+".crc"))] = old
	for rel, mt := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"empty=1", "empty=2/sub", "young-empty"} {
		if err := os.MkdirAll(filepath.Join(dir, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Folder times last, deepest first, once nothing more is written into them.
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return err
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		mt := old
		if filepath.Base(dirs[i]) == "young-empty" {
			mt = young
		}
		if err := os.Chtimes(dirs[i], mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

package vacuum

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

func TestParseShard(t *testing.T) {
	for text, want := range map[string]Shard{"0/1": {0, 1}, "3/4": {3, 4}, "0/100000": {0, MaxShardCount}, "07/8": {7, 8}} {
		got, err := ParseShard(text)
		if err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for text, why := range map[string]string{
		"3/2": "from 0 to 1", "2/2": "from 0 to 1", "0/0": "at least 1", "-1/4": "not a whole number", "a/b": "not a whole number",
		"1/4/5": "INDEX/COUNT", "": "INDEX/COUNT", "1": "INDEX/COUNT", "/4": "not a whole number", "1/": "count is not",
		"+1/4": "not a whole number", " 1/4": "not a whole number", "1/4 ": "count is not", "0/100001": "at most 100000",
		"0/99999999999999999999": "at most 100000", "99999999999999999999/2": "at most", "1/-4": "count is not", "0x1/4": "not a whole number",
		"$JOB_COMPLETION_INDEX/4": "JOB_COMPLETION_INDEX", "１/4": "not a whole number",
	} {
		_, err := ParseShard(text)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseShard(%q) = %v; want an error saying %q", text, err, why)
		}
	}
	if err := (Shard{Index: 0, Count: MaxShardCount + 1}).Check(); err == nil {
		t.Error("a library caller's Shard{0, MaxShardCount+1} passed Check")
	}
}

// TestShardOfIsStable pins the shard function: workers of one run, on other machines and with
// other builds, must assign every key alike. The values are FNV-1a 64 of the folded first
// component, modulo the count; a change of the function fails here.
func TestShardOfIsStable(t *testing.T) {
	fnvMod := func(s string, n int) int {
		h := fnv.New64a()
		h.Write([]byte(s))
		return int(h.Sum64() % uint64(n))
	}
	for _, tc := range []struct {
		key   string
		count int
		want  int
	}{
		{"date=2020-01-01/part-0.parquet", 7, fnvMod("date=2020-01-01", 7)},
		{"part-0.parquet", 1000, fnvMod("part-0.parquet", 1000)},
		{"date=2020-01-01/", 3, fnvMod("date=2020-01-01", 3)},
	} {
		if got := ShardOf(tc.key, tc.count); got != tc.want {
			t.Errorf("ShardOf(%q, %d) = %d, want %d", tc.key, tc.count, got, tc.want)
		}
	}
	// The literal value: the format, which no refactoring may change.
	if h := fnv.New64a(); true {
		h.Write([]byte("a"))
		if h.Sum64() != 0xaf63dc4c8601ec8c {
			t.Fatalf("FNV-1a 64 of %q is %#x", "a", h.Sum64())
		}
		if ShardOf("a/b", 1<<16) != int(0xaf63dc4c8601ec8c%(1<<16)) {
			t.Error("ShardOf is not FNV-1a 64 of the first component")
		}
	}
	for n := 1; n <= 64; n++ {
		for _, pair := range [][2]string{
			{".part-0.parquet.crc", "part-0.parquet"}, // a companion goes with its file
			{"Date=1/Part-0.parquet", "date=1/x"},     // spellings one file system takes for one name
			{"caf\u00e9=1/a", "CAFE\u0301=1/b"},       // NFC and NFD, cases folded
			{"date=1/a/b/c", "date=1/"},               // only the first component counts
			{"deletion_vector_x.bin", "deletion_vector_x.bin"},
		} {
			if a, b := ShardOf(pair[0], n), ShardOf(pair[1], n); a != b {
				t.Errorf("count %d: %q in shard %d, %q in shard %d", n, pair[0], a, pair[1], b)
			}
		}
	}
	if s := (&Shard{Index: 1, Count: 2}); !s.Owns("") {
		t.Error("the root is not in every shard")
	}
	if s := (*Shard)(nil); !s.Owns("anything/at/all") {
		t.Error("a nil shard does not own everything")
	}
}

// shardTable is a table with every kind of entry a shard boundary could cut through: root
// files and their companions, root deletion vectors, partitions with live, removed and
// untracked files, a partition spelled in two cases, a nested table, empty folders, change
// data, a live path through an object that is a prefix too.
func shardTable(t *testing.T) *table {
	tb := newTable(t, tableSpec{partitionColumns: []string{"p"}})
	dv := dvU("", z85) // its file dvFile is at the root
	tb.commit(add("p=1/live.parquet"), add("p=2/live.parquet"), add("Date=1/live.parquet"), add("root-live.parquet"),
		addDV("p=3/live-dv.parquet", dv), add("link/x.parquet"), add("p=1/deep/er/live.parquet"))
	tb.commit(remove("p=1/gone.parquet", 10*day), remove("root-gone.parquet", 10*day), remove("p=2/young-remove.parquet", time.Hour))
	for _, k := range []string{"p=1/live.parquet", "p=2/live.parquet", "date=1/live.parquet", "root-live.parquet", "p=3/live-dv.parquet",
		"link/x.parquet", "link", "p=1/deep/er/live.parquet", "p=1/gone.parquet", "root-gone.parquet", "p=2/young-remove.parquet",
		"p=1/untracked.parquet", ".p=1/x.crc", "p=1/.untracked.parquet.crc", "p=1/.live.parquet.crc", "root-untracked.parquet",
		".root-untracked.parquet.crc", ".root-gone.parquet.crc", ".root-live.parquet.crc", "deletion_vector_orphan.bin",
		"p=4/sub/only-untracked.parquet", "p=5/.only-a.crc", "_change_data/cdc-1.parquet", "_change_data/p=1/cdc-2.parquet",
		"nested/A.parquet", "nested/_delta_log/00000000000000000000.json", "nested/z.parquet", "_hidden/x", ".hidden-root",
		"Q=1/a.parquet", "q=1/b.parquet", "r=1/s=2/t=3/u.parquet"} {
		tb.file(k, 20*day)
	}
	tb.file("p=2/new-untracked.parquet", time.Hour)
	tb.file("new-root.parquet", time.Hour)
	tb.file(dvFile, 20*day)  // live
	tb.file(dvFileB, 20*day) // named by nothing
	tb.dir("empty=1", 20*day)
	tb.dir("p=1/empty", 20*day)
	tb.dir("young-empty", time.Hour)
	return tb
}

// planned is what a plan deletes, as comparable strings.
func planned(p *Plan) []string {
	var out []string
	for _, f := range p.Files.MustCollect() {
		out = append(out, "file "+f.Path+" crc="+f.Checksum+" "+string(f.Reason))
	}
	for _, d := range p.Dirs {
		out = append(out, "dir "+d.Path)
	}
	slices.Sort(out)
	return out
}

// TestShardPlansAreOneRun: for every count, the plans of the shards are disjoint and together
// the plan of one run, in FULL, LITE and with an inventory; their protected sets split the
// snapshot's; each plan says its shard.
func TestShardPlansAreOneRun(t *testing.T) {
	tb := shardTable(t)
	v := tb.version
	modes := map[string]Options{"full": retain0, "lite": retain0, "inventory": retain0}
	lite := modes["lite"]
	lite.Mode = ModeLite
	modes["lite"] = lite
	inv := modes["inventory"]
	inv.Inventory = tb.store
	modes["inventory"] = inv
	for name, base := range modes {
		t.Run(name, func(t *testing.T) {
			whole := tb.plan(base)
			want := planned(whole)
			if name == "full" && len(want) < 12 {
				t.Fatalf("the table plans too little to test sharding: %q", want)
			}
			for _, n := range []int{1, 2, 3, 7, 64} {
				var union []string
				var protected int64
				for i := range n {
					opts := base
					opts.Shard, opts.Version = &Shard{Index: i, Count: n}, &v
					p := tb.plan(opts)
					if p.Shard == nil || *p.Shard != *opts.Shard || p.Version != v {
						t.Fatalf("shard %d/%d: the plan says shard %v version %d", i, n, p.Shard, p.Version)
					}
					for _, f := range p.Files.MustCollect() {
						if ShardOf(f.Path, n) != i {
							t.Errorf("shard %d/%d plans %s of shard %d", i, n, f.Path, ShardOf(f.Path, n))
						}
					}
					union = append(union, planned(p)...)
					protected += p.Protected
				}
				slices.Sort(union)
				if !slices.Equal(union, want) {
					t.Errorf("%d shards: the union of the plans\n%q\nis not the plan of one run\n%q", n, union, want)
				}
				if protected != whole.Protected {
					t.Errorf("%d shards protect %d keys together, one run %d", n, protected, whole.Protected)
				}
			}
		})
	}
}

// TestShardFoldedSpellings: a live file listed in another spelling (case) is kept by one run;
// its two spellings must be in one shard, or the shard that lists it would not know the log
// protects it. A count where the raw names hash apart shows the fold is needed.
func TestShardFoldedSpellings(t *testing.T) {
	tb := newTable(t, tableSpec{partitionColumns: []string{"Date"}})
	tb.commit(add("Date=1/live.parquet"))
	tb.file("date=1/live.parquet", 20*day) // a case-insensitive store's listing of the live file
	v := tb.version
	raw := func(s string, n int) int { h := fnv.New64a(); h.Write([]byte(s)); return int(h.Sum64() % uint64(n)) }
	n := 2
	for raw("Date=1", n) == raw("date=1", n) {
		n++
	}
	if got := deleted(tb.plan(retain0)); len(got) != 0 {
		t.Fatalf("one run deletes %v", got)
	}
	for i := range n {
		opts := retain0
		opts.Shard, opts.Version = &Shard{Index: i, Count: n}, &v
		if got := deleted(tb.plan(opts)); len(got) != 0 {
			t.Errorf("shard %d/%d deletes the live file in another spelling: %v", i, n, got)
		}
	}
}

func TestShardRefusals(t *testing.T) {
	tb := shardTable(t)
	v := tb.version
	for name, tc := range map[string]struct {
		opts Options
		want string
	}{
		"no version":     {Options{Shard: &Shard{0, 2}}, "pinned snapshot version"},
		"bad shard":      {Options{Shard: &Shard{2, 2}, Version: &v}, "from 0 to 1"},
		"zero shards":    {Options{Shard: &Shard{0, 0}, Version: &v}, "at least 1"},
		"huge count":     {Options{Shard: &Shard{0, 1 << 40}, Version: &v}, "at most"},
		"negative":       {Options{Version: ptrTo(int64(-1))}, "0 or more"},
		"newer":          {Options{Version: ptrTo(v + 1)}, fmt.Sprintf("version %d does not exist: the latest version is %d", v+1, v)},
		"newer, sharded": {Options{Version: ptrTo(v + 5), Shard: &Shard{0, 2}}, "does not exist"},
	} {
		_, err := tb.planner(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "mem://bucket/table") {
			t.Errorf("%s: got %v, want a refusal naming the table and saying %q", name, err, tc.want)
		}
	}
	snap, err := deltalog.Load(context.Background(), tb.store)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPlannerFor(context.Background(), tb.store, snap, Options{Version: ptrTo(v - 1)}); err == nil || !strings.Contains(err.Error(), "pinned to version") {
		t.Errorf("a snapshot of another version than the pinned one: %v", err)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestVersionCleanedUp: a version whose commits were cleaned up (the log starts at a
// checkpoint after it) is refused, one at or after the oldest checkpoint is read.
func TestVersionCleanedUp(t *testing.T) {
	dir := fixtures.Copy(t, "dat/no_replay", time.Now().Add(-30*day)) // commits 2-5, checkpoints 2 and 4
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, v := range []int64{0, 1} {
		_, err := NewPlanner(ctx, store, Options{Version: &v})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("version %d can no longer be read", v)) || !strings.Contains(err.Error(), "latest (5)") {
			t.Errorf("version %d: %v", v, err)
		}
	}
	for _, v := range []int64{2, 3, 4, 5} {
		p, err := NewPlanner(ctx, store, Options{Version: &v})
		if err != nil {
			t.Errorf("version %d: %v", v, err)
			continue
		}
		if p.Snapshot().Version != v {
			t.Errorf("pinned %d, planned on %d", v, p.Snapshot().Version)
		}
	}
}

// TestPinnedVersionRecheck: a file removed at the pinned version and added back by a later
// commit (a RESTORE) is a candidate of the plan at that version, and the executor, which reads
// every commit after it, keeps it.
func TestPinnedVersionRecheck(t *testing.T) {
	tb := newTable(t, tableSpec{})
	tb.commit(add("a.parquet"), add("b.parquet"))
	tb.commit(remove("a.parquet", 10*day), remove("b.parquet", 10*day))
	v := tb.version
	tb.commit(add("a.parquet")) // restored after the pinned version
	tb.file("a.parquet", 20*day)
	tb.file("b.parquet", 20*day)
	if got := deleted(tb.plan(retain0)); len(got) != 1 || got["b.parquet"] == "" {
		t.Fatalf("the latest plan deletes %v, want b.parquet only", got)
	}
	for _, shard := range []*Shard{nil, {0, 1}} {
		opts := retain0
		opts.Version, opts.Shard = &v, shard
		plan := tb.plan(opts)
		if got := deleted(plan); len(got) != 2 {
			t.Fatalf("the plan at version %d deletes %v, want a and b", v, got)
		}
		res, err := Execute(context.Background(), tb.store, plan, ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Dropped) != 1 || res.Dropped[0].Path != "a.parquet" || res.Dropped[0].Version != v+1 {
			t.Errorf("shard %v: dropped %+v, want a.parquet for version %d", shard, res.Dropped, v+1)
		}
		if _, err := tb.store.Stat(context.Background(), "a.parquet"); err != nil {
			t.Errorf("shard %v: the re-added file is gone: %v", shard, err)
		}
		tb.file("b.parquet", 20*day)
	}
}

// TestShardWritesNoLastVacuumInfo: a completed sharded run covered part of the table, so it
// does not write _delta_log/_last_vacuum_info (a later LITE would take it to mean everything
// removed up to there is gone); one run does.
func TestShardWritesNoLastVacuumInfo(t *testing.T) {
	ctx := context.Background()
	for _, sharded := range []bool{true, false} {
		tb := shardTable(t)
		v := tb.version
		opts := retain0
		if sharded {
			opts.Shard, opts.Version = &Shard{0, 1}, &v // even the one shard of one
		}
		plan := tb.plan(opts)
		if plan.LatestCommitOutsideRetention == nil {
			t.Fatal("no commit outside the retention: the test shows nothing")
		}
		res, err := executeRun(ctx, tb.store, plan, ExecOptions{})
		if err != nil || res.Status != StatusCompleted {
			t.Fatalf("%v %v", res, err)
		}
		_, err = tb.store.Stat(ctx, deltalog.LastVacuumInfoKey)
		if written := err == nil; written == sharded {
			t.Errorf("sharded %v: %s written %v (%v)", sharded, deltalog.LastVacuumInfoKey, written, err)
		}
	}
}

// TestShardDigest: a sharded plan's digest is not the unsharded plan's of the same files.
func TestShardDigest(t *testing.T) {
	tb := shardTable(t)
	v := tb.version
	whole := tb.plan(retain0)
	opts := retain0
	opts.Shard, opts.Version = &Shard{0, 1}, &v
	one := tb.plan(opts)
	if !slices.Equal(planned(one), planned(whole)) {
		t.Fatal("the shard 0/1 is not the whole table")
	}
	if Digest(one) == Digest(whole) {
		t.Error("shard 0/1 and the whole table have one digest")
	}
}

// TestShardLinkRefused: on local disk a symbolic link into the table refuses a sharded run in
// every shard, wherever it is (the shard that lists the real files cannot see the link).
func TestShardLinkRefused(t *testing.T) {
	dir := fixtures.Copy(t, "delta/dv-partitioned-with-checkpoint", time.Now().Add(-30*day))
	if err := symlinkDir(dir, "part=0", "alias"); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	everyShardRefusesLink(t, dir, "alias")
}

// everyShardRefusesLink plans each shard of 3 of the table in dir at version 15 and wants each
// refused with a ShardLinkError naming link.
func everyShardRefusesLink(t *testing.T, dir, link string) {
	t.Helper()
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v := int64(15)
	for i := range 3 {
		opts := retain0
		opts.Shard, opts.Version = &Shard{i, 3}, &v
		p, err := NewPlanner(ctx, store, opts)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Plan(ctx)
		var le *ShardLinkError
		if !errors.As(err, &le) || le.Link != link {
			t.Errorf("shard %d/3: %v, want a refusal naming %s", i, err, link)
		}
	}
}

// TestShardLinkInAnotherShardsFolder: a link into the table deep in a folder of another shard,
// listed after other such folders, refuses every shard: each of those folders is scanned.
func TestShardLinkInAnotherShardsFolder(t *testing.T) {
	dir := fixtures.Copy(t, "delta/dv-partitioned-with-checkpoint", time.Now().Add(-30*day))
	for i := range 10 {
		sub := filepath.Join(dir, fmt.Sprintf("z%d", i))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "f.parquet"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := symlinkDir(dir, "../part=0", "z9/alias"); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	everyShardRefusesLink(t, dir, "z9/alias")
}

func symlinkDir(root, target, link string) error {
	return os.Symlink(target, filepath.Join(root, link))
}

// TestLitePinnedBeforeCoverage: LITE pinned to a version older than the one the last vacuum
// covered says to pin a later one (not that the file is corrupt).
func TestLitePinnedBeforeCoverage(t *testing.T) {
	tb := shardTable(t)
	v := tb.version
	tb.commit(add("later.parquet"))
	if err := deltalog.WriteLastVacuumInfo(context.Background(), tb.store, v+1); err != nil {
		t.Fatal(err)
	}
	opts := retain0
	opts.Mode, opts.Version = ModeLite, &v
	p, err := tb.planner(opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Plan(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("pin version %d or later", v+1)) {
		t.Errorf("got %v", err)
	}
	opts.Version = nil
	tb.plan(opts) // unpinned, LITE plans (tb.plan fails the test otherwise)
}

func TestFNV1a64IsHashFNV(t *testing.T) {
	for _, s := range []string{"", "a", "date=2020-01-01", "caf\u00e9", strings.Repeat("x", 1000)} {
		h := fnv.New64a()
		h.Write([]byte(s))
		if got := fnv1a64(s); got != h.Sum64() {
			t.Errorf("fnv1a64(%q) = %#x, hash/fnv %#x", s, got, h.Sum64())
		}
	}
	if n := testing.AllocsPerRun(100, func() { ShardOf("date=2020-01-01/part-0.parquet", 8) }); n != 0 {
		t.Errorf("ShardOf of a lower-case key allocates %v times", n)
	}
}

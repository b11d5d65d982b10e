package service

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// lakeKeys is a lakehouse root: tables at several depths, names that need escaping, a table
// inside a table (not descended into), hidden folders, and folders that look like tables but
// hold no commit or checkpoint.
var lakeKeys = []string{
	"sales/_delta_log/00000000000000000000.json",
	"sales/part-0.parquet",
	"sales/nested/_delta_log/00000000000000000000.json", // inside a table: not a table of the root
	"dims/Customer/_delta_log/00000000000000000003.checkpoint.parquet",
	"dims/a.b/_delta_log/00000000000000000000.json",
	"dims/a/b/_delta_log/00000000000000000000.json",
	"dims/with space/_delta_log/00000000000000000000.json",
	"deep/x/y/z/_delta_log/00000000000000000007.json",
	"_hidden/t/_delta_log/00000000000000000000.json",
	".tmp/t/_delta_log/00000000000000000000.json",
	"empty/_delta_log/_last_checkpoint.tmp",
	"notes/readme.txt",
}

var wantLake = []string{"deep/x/y/z/", "dims/Customer/", "dims/a.b/", "dims/a/b/", "dims/with space/", "sales/"}

func putKeys(t *testing.T, store storage.Store, prefix string, keys []string) {
	t.Helper()
	for _, k := range keys {
		if err := store.Put(context.Background(), prefix+k, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFindTables on every backend: local, memory, and the S3, Azure and GCS test servers.
func TestFindTables(t *testing.T) {
	for _, b := range storagetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			store := b.New(t)
			putKeys(t, store, "", lakeKeys)
			got, err := tables.FindTables(context.Background(), store)
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(got)
			if !slices.Equal(got, wantLake) {
				t.Errorf("got %q, want %q", got, wantLake)
			}
		})
	}
}

func TestFindTablesRootIsATable(t *testing.T) {
	store := storagetest.NewMem(t)
	putKeys(t, store, "", []string{"_delta_log/00000000000000000000.json", "inner/_delta_log/00000000000000000000.json"})
	got, err := tables.FindTables(context.Background(), store)
	if err != nil || !slices.Equal(got, []string{""}) {
		t.Errorf("got %q %v, want the root alone", got, err)
	}
}

var idOK = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// DiscoveredID: stable, valid, distinct for distinct folders, case-insensitively too, and
// cut with a hash when too long.
func TestDiscoveredID(t *testing.T) {
	for rel, want := range map[string]string{
		"":               "lake",
		"sales/":         "lake.sales",
		"dims/a.b/":      "lake.dims.a_2eb",
		"dims/a/b/":      "lake.dims.a.b",
		"dims/Customer/": "lake.dims._43ustomer",
		"dims/customer/": "lake.dims.customer",
		"a_b/":           "lake.a_5fb",
		"a_5fb/":         "lake.a_5f5fb",
		"with space/":    "lake.with_20space",
		"x/ü/":           "lake.x._c3_bc",
	} {
		if got := tables.DiscoveredID("lake", rel); got != want {
			t.Errorf("tables.DiscoveredID(%q) = %q, want %q", rel, got, want)
		}
	}
	long := strings.Repeat("segment/", 40)
	ids := map[string]string{}
	for _, rel := range []string{long, long + "a/", long + "b/", strings.Repeat("Ab/", 60), strings.Repeat("ab/", 60), "a.b/", "a/b/", "A/", "a/"} {
		id := tables.DiscoveredID("lake", rel)
		if !idOK.MatchString(id) {
			t.Errorf("id %q of %q is not a valid id", id, rel)
		}
		key := strings.ToLower(id)
		if other, dup := ids[key]; dup {
			t.Errorf("%q and %q have the same id %q", rel, other, id)
		}
		ids[key] = rel
		if tables.DiscoveredID("lake", rel) != id {
			t.Errorf("the id of %q is not stable", rel)
		}
	}
}

// TestDiscoveryRefresh: the tables of a root are listed with their ids, scheduled, and
// refreshed on the root's refresh interval only: a new table appears at the next refresh and
// runs; a table that vanished is no longer listed nor run; a configured table's id is never
// taken by a discovered one.
func TestDiscoveryRefresh(t *testing.T) {
	base := t0.Truncate(10 * time.Minute).Add(-3 * time.Hour) // the runs' clock never leads the store's
	f := newFixture(t, `maxConcurrentRuns: 4
discover:
  - id: lake
    root: TABLES/lake
    refresh: 1h
    schedule: {cron: "*/10 * * * *", timezone: UTC}
tables:
  - {id: lake.sales, path: TABLES/a}
`, nil, nil)
	lake := filepath.Join(f.dir, "lake")
	for _, d := range []string{"sales", "dims/Customer", "deep/x/y"} {
		makeTable(t, filepath.Join(lake, d), t0, nil)
	}
	ctx := context.Background()
	f.clock.set(base)
	if err := f.srv.StartScheduler(ctx); err != nil {
		t.Fatal(err)
	}
	ids := func() []string {
		_, body := f.do(t, "GET", "/api/tables", "")
		var out []string
		for _, x := range body["tables"].([]any) {
			m := x.(map[string]any)
			out = append(out, m["id"].(string)+"="+strings.TrimPrefix(m["location"].(string), f.dir+"/"))
		}
		sort.Strings(out)
		return out
	}
	tick := func(d time.Duration) {
		f.clock.set(base.Add(d))
		f.srv.Tick(ctx)
		f.srv.Wait()
	}
	tick(0)
	want := []string{"lake.deep.x.y=lake/deep/x/y", "lake.dims._43ustomer=lake/dims/Customer", "lake.sales=a"}
	if got := ids(); !slices.Equal(got, want) {
		t.Fatalf("tables %q, want %q", got, want)
	}
	tick(10 * time.Minute)
	makeTable(t, filepath.Join(lake, "dims", "new"), t0, nil)
	tick(40 * time.Minute) // the refresh is not due: the new table is not there yet
	if got := ids(); !slices.Equal(got, want) {
		t.Fatalf("before the refresh: tables %q, want %q", got, want)
	}
	if err := os.RemoveAll(filepath.Join(lake, "deep")); err != nil {
		t.Fatal(err)
	}
	tick(61 * time.Minute)
	want = []string{"lake.dims._43ustomer=lake/dims/Customer", "lake.dims.new=lake/dims/new", "lake.sales=a"}
	if got := ids(); !slices.Equal(got, want) {
		t.Fatalf("after the refresh: tables %q, want %q", got, want)
	}
	tick(70 * time.Minute)
	count := map[string]int{}
	runs, _ := f.db.Runs(ctx, "", 100)
	for _, r := range runs {
		if r.Refusal != "" || r.RecordID != r.ID {
			t.Errorf("run %+v: refused, or no record", r)
		}
		count[r.Table]++
	}
	wantRuns := map[string]int{"lake.dims._43ustomer": 4, "lake.deep.x.y": 2, "lake.dims.new": 1}
	for id, n := range wantRuns {
		if count[id] != n {
			t.Errorf("%s ran %d times, want %d (all: %v)", id, count[id], n, count)
		}
	}
	if count["lake.sales"] != 0 {
		t.Errorf("the configured table without a schedule ran: %v", count)
	}
	if exists(t, filepath.Join(lake, "dims", "new", "stray.parquet")) || !exists(t, filepath.Join(f.dir, "a", "stray.parquet")) {
		t.Error("the discovered table was not vacuumed, or the configured one of the same id was")
	}
}

// TestDiscoveryLeavesOutConfiguredLocation: a table found at the location of a configured
// table (written another way: a trailing '/'), or of a table another root found, is left
// out: under a second id the service would not hold it as one table (two runs at once, and
// the root's policy over the configured one).
func TestDiscoveryLeavesOutConfiguredLocation(t *testing.T) {
	f := newFixture(t, `discover:
  - id: lake
    root: TABLES/lake
    refresh: 1h
  - id: lake2
    root: TABLES/lake/dims
    refresh: 1h
tables:
  - {id: sales, path: TABLES/lake/sales/, policy: {retention: regulated}}
`, nil, nil)
	// The fixture made the configured table lake/sales.
	makeTable(t, filepath.Join(f.dir, "lake", "dims", "c"), t0, nil)
	ctx := context.Background()
	for _, root := range []string{"lake", "lake2"} {
		if err := f.srv.Discover(ctx, root, t0); err != nil {
			t.Fatal(err)
		}
	}
	_, body := f.do(t, "GET", "/api/tables", "")
	var got []string
	for _, x := range body["tables"].([]any) {
		got = append(got, x.(map[string]any)["id"].(string))
	}
	sort.Strings(got)
	if want := []string{"lake.dims.c", "sales"}; !slices.Equal(got, want) {
		t.Fatalf("tables %q, want %q", got, want)
	}
}

func TestLocationKey(t *testing.T) {
	for _, same := range [][2]string{
		{"s3://b/lake/t", "s3a://B/lake/t/"},
		{"s3://b/lake/a%20b", "s3n://b/lake/a b"},
		{"abfss://c@acct.dfs.core.windows.net/t", "abfs://c@ACCT.blob.core.windows.net/t/"},
		{"/data/lake/t", "/data/lake/./t/"},
		{"/data/lake/t", "file:///data/lake/t"},
	} {
		if a, b := config.LocationKey(same[0]), config.LocationKey(same[1]); a != b {
			t.Errorf("config.LocationKey(%q) = %q, config.LocationKey(%q) = %q: want the same", same[0], a, same[1], b)
		}
	}
	for _, other := range [][2]string{
		{"s3://b/lake/t", "s3://b/lake/t2"},
		{"s3://b/lake/t", "gs://b/lake/t"},
		{"abfss://c@acct.dfs.core.windows.net/t", "abfss://d@acct.dfs.core.windows.net/t"},
		{"/data/lake/t", "/data/lake/T"},
	} {
		if config.LocationKey(other[0]) == config.LocationKey(other[1]) {
			t.Errorf("config.LocationKey(%q) = config.LocationKey(%q)", other[0], other[1])
		}
	}
}

// TestFindTablesSkipsLinks: on local disk a link below the root, to a table elsewhere or to
// a folder holding one, is not followed: discovery never reaches outside its root.
func TestFindTablesSkipsLinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	makeTable(t, filepath.Join(outside, "t"), t0, nil)
	makeTable(t, filepath.Join(root, "in"), t0, nil)
	for name, target := range map[string]string{"linked-table": filepath.Join(outside, "t"), "linked-folder": outside} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}
	store, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tables.FindTables(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"in/"}; !slices.Equal(got, want) {
		t.Errorf("found %q, want %q", got, want)
	}
}

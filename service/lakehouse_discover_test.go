package service

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// The two layouts of a Fabric lakehouse. Without schemas a table is Tables/<table>; with
// schemas, Tables/<schema>/<table>. Files/ holds what Fabric does not show as tables (a Delta
// folder there too), and a folder of Tables/ that is not a table and holds none is shown as
// nothing.
var (
	lakehouseFlat = []string{
		"Tables/orders/_delta_log/00000000000000000000.json",
		"Tables/orders/part-0.parquet",
		"Tables/DimCustomer/_delta_log/00000000000000000002.checkpoint.parquet",
		"Tables/_staging/_delta_log/00000000000000000000.json",
		"Tables/.tmp/_delta_log/00000000000000000000.json",
		"Tables/unidentified/data.csv",
		"Tables/orders/nested/_delta_log/00000000000000000000.json", // inside a table: its own folder
		"Files/raw/_delta_log/00000000000000000000.json",
	}
	lakehouseSchemas = []string{
		"Tables/dbo/orders/_delta_log/00000000000000000000.json",
		"Tables/sales/Returns/_delta_log/00000000000000000000.json",
		"Tables/sales/Returns/part-0.parquet",
		"Tables/sales/empty/_delta_log/_last_checkpoint.tmp",    // no commit: not a table
		"Tables/sales/a/b/_delta_log/00000000000000000000.json", // deeper than Fabric goes
		"Files/t/_delta_log/00000000000000000000.json",
	}
	wantFlat    = []string{"Tables/DimCustomer/", "Tables/_staging/", "Tables/orders/"}
	wantSchemas = []string{"Tables/dbo/orders/", "Tables/sales/Returns/"}
)

// TestFindTablesLakehouse: a lakehouse root is listed as Fabric shows it, in both layouts, on
// every backend (local, memory, and the S3, Azure and GCS test servers).
func TestFindTablesLakehouse(t *testing.T) {
	for _, b := range storagetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			for name, c := range map[string]struct{ keys, want []string }{"without schemas": {lakehouseFlat, wantFlat}, "with schemas": {lakehouseSchemas, wantSchemas}} {
				store := b.New(t)
				putKeys(t, store, "", c.keys)
				got, err := tables.FindTables(context.Background(), store)
				if err != nil {
					t.Fatal(err)
				}
				sort.Strings(got)
				if !slices.Equal(got, c.want) {
					t.Errorf("%s: got %q, want %q", name, got, c.want)
				}
			}
		})
	}
}

// TestDiscoverLakehouse: the tables a discover root that is a lakehouse finds are named as
// Fabric shows them (name: schema.table, or table without schemas), and their ids leave
// Tables/ out.
func TestDiscoverLakehouse(t *testing.T) {
	f := newFixture(t, `discover:
  - {id: flat, root: TABLES/flat.Lakehouse, refresh: 1h}
  - {id: lh, root: TABLES/lh.Lakehouse, refresh: 1h}
tables:
  - {id: a, path: TABLES/a}
`, nil, nil)
	for _, rel := range []string{"flat.Lakehouse/Tables/orders", "flat.Lakehouse/Tables/DimCustomer", "lh.Lakehouse/Tables/dbo/orders", "lh.Lakehouse/Tables/sales/Returns"} {
		makeTable(t, filepath.Join(f.dir, rel), t0, nil)
	}
	makeTable(t, filepath.Join(f.dir, "lh.Lakehouse", "Files", "raw"), t0, nil)
	if err := os.MkdirAll(filepath.Join(f.dir, "lh.Lakehouse", "Tables", "sales", "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, root := range []string{"flat", "lh"} {
		if err := f.srv.Discover(ctx, root, t0); err != nil {
			t.Fatal(err)
		}
	}
	_, body := f.do(t, "GET", "/api/tables", "")
	var got []string
	for _, x := range body["tables"].([]any) {
		m := x.(map[string]any)
		name, _ := m["name"].(string)
		got = append(got, m["id"].(string)+" "+name+" "+strings.TrimPrefix(m["location"].(string), f.dir+"/"))
	}
	want := []string{
		"a  a",
		"flat._44im_43ustomer DimCustomer flat.Lakehouse/Tables/DimCustomer",
		"flat.orders orders flat.Lakehouse/Tables/orders",
		"lh.dbo.orders dbo.orders lh.Lakehouse/Tables/dbo/orders",
		"lh.sales._52eturns sales.Returns lh.Lakehouse/Tables/sales/Returns",
	}
	if !slices.Equal(got, want) {
		t.Errorf("tables:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A discovered table runs under its id, as any other.
	code, run := f.do(t, "POST", "/api/tables/lh.sales._52eturns/runs", "{}")
	if code != 202 {
		t.Fatalf("run: %d %v", code, run)
	}
	f.srv.Wait()
	if exists(t, filepath.Join(f.dir, "lh.Lakehouse", "Tables", "sales", "Returns", "stray.parquet")) {
		t.Error("the run of the discovered table deleted nothing")
	}
}

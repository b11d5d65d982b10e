package catalog

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree is a lakehouse's folders: each path (relative, '/'-separated) that is a folder, and
// whether it is a Delta table. It counts the calls Lakehouse makes.
type tree struct {
	folders                map[string]bool
	dirCalls, isTableCalls int
}

func (tr *tree) dirs(_ context.Context, rel string) ([]string, error) {
	tr.dirCalls++
	var out []string
	for p := range tr.folders {
		parent, name := "", p
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			parent, name = p[:i], p[i+1:]
		}
		if parent == rel {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (tr *tree) isTable(_ context.Context, rel string) (bool, error) {
	tr.isTableCalls++
	return tr.folders[rel], nil
}

func TestLakehouse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		folders map[string]bool
		want    []string // names, then each one's folder
		dirs    int
	}{
		{"without schemas", map[string]bool{"Files": false, "Files/raw": true, "Tables": false, "Tables/orders": true, "Tables/Customers": true, "Tables/orders/_delta_log": false},
			[]string{"Customers Tables/Customers", "orders Tables/orders"}, 2},
		{"with schemas", map[string]bool{"Tables": false, "Tables/dbo": false, "Tables/dbo/orders": true, "Tables/sales": false, "Tables/sales/Returns": true, "Tables/sales/notes": false, "Tables/sales/notes/deeper": true},
			[]string{"dbo.orders Tables/dbo/orders", "sales.Returns Tables/sales/Returns"}, 4},
		// A table stored inside a schema-less table is its partition or a stray: not a table.
		{"not below a table", map[string]bool{"Tables": false, "Tables/t": true, "Tables/t/x": true},
			[]string{"t Tables/t"}, 2},
		{"hidden folders", map[string]bool{"Tables": false, "Tables/.tmp": true, "Tables/_staging": true, "Tables/junk": false, "Tables/junk/_delta_log": false, "Tables/junk/.x": true},
			[]string{"_staging Tables/_staging"}, 3},
		{"an empty lakehouse", map[string]bool{"Tables": false, "Files": false}, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &tree{folders: tc.folders}
			got, err := Lakehouse(context.Background(), tr.dirs, tr.isTable)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, lt := range got {
				names = append(names, lt.Name()+" "+lt.Rel())
				if back, ok := LakehouseTableAt(lt.Rel() + "/"); !ok || back != lt {
					t.Errorf("LakehouseTableAt(%s) = %+v, want %+v", lt.Rel(), back, lt)
				}
			}
			if d := cmp.Diff(tc.want, names); d != "" {
				t.Errorf("tables (-want +got):\n%s", d)
			}
			if tr.dirCalls != tc.dirs {
				t.Errorf("%d listings, want %d (the root, Tables/ and each schema)", tr.dirCalls, tc.dirs)
			}
		})
	}
	// Files/ holds a table and there is no Tables/: not a lakehouse.
	tr := &tree{folders: map[string]bool{"Files": false, "Files/t": true, "tables": false, "tables/t": true}}
	if _, err := Lakehouse(context.Background(), tr.dirs, tr.isTable); !errors.Is(err, ErrNotLakehouse) {
		t.Errorf("got %v, want ErrNotLakehouse", err)
	}
	boom := errors.New("boom")
	fail := func(context.Context, string) (bool, error) { return false, boom }
	if _, err := Lakehouse(context.Background(), (&tree{folders: map[string]bool{"Tables": false, "Tables/t": true}}).dirs, fail); !errors.Is(err, boom) || !strings.Contains(err.Error(), "Tables/t") {
		t.Errorf("got %v, want the failure naming the folder", err)
	}
}

func TestLakehouseTableMatches(t *testing.T) {
	for _, tc := range []struct {
		t             LakehouseTable
		schema, table string
		want          bool
	}{
		{LakehouseTable{Table: "orders"}, "", "orders", true},
		{LakehouseTable{Table: "orders"}, "", "ORDERS", true},
		{LakehouseTable{Table: "Orders"}, "dbo", "orders", true},
		{LakehouseTable{Table: "orders"}, "DBO", "orders", true},
		{LakehouseTable{Table: "orders"}, "sales", "orders", false},
		{LakehouseTable{Schema: "dbo", Table: "orders"}, "", "orders", true},
		{LakehouseTable{Schema: "dbo", Table: "orders"}, "dbo", "orders", true},
		{LakehouseTable{Schema: "Sales", Table: "orders"}, "sales", "Orders", true},
		{LakehouseTable{Schema: "sales", Table: "orders"}, "", "orders", false},
		{LakehouseTable{Schema: "sales", Table: "orders"}, "dbo", "orders", false},
		{LakehouseTable{Schema: "sales", Table: "orders"}, "sales", "order", false},
		{LakehouseTable{Table: "ſtock"}, "", "stock", false}, // not Unicode folding
	} {
		if got := tc.t.Matches(tc.schema, tc.table); got != tc.want {
			t.Errorf("%+v.Matches(%q, %q) = %v, want %v", tc.t, tc.schema, tc.table, got, tc.want)
		}
	}
}

func TestLakehouseTableAt(t *testing.T) {
	for rel, want := range map[string]string{
		"Tables/orders": "orders", "Tables/orders/": "orders", "Tables/sales/orders/": "sales.orders",
		"Tables": "", "Tables/": "", "Files/orders": "", "tables/orders": "", "Tables/a/b/c": "", "Tables//a": "", "Tables/../a": "", "Tables/a/.": "",
	} {
		lt, ok := LakehouseTableAt(rel)
		if got := lt.Name(); ok != (want != "") || got != want {
			t.Errorf("LakehouseTableAt(%q) = %q, %v, want %q", rel, got, ok, want)
		}
	}
}

func TestLakehouseTableLocation(t *testing.T) {
	for _, tc := range []struct {
		t          LakehouseTable
		root, want string
	}{
		{LakehouseTable{Table: "orders"}, "/lh/", "/lh/Tables/orders"},
		{LakehouseTable{Schema: "a b", Table: "c%d"}, "/lh", "/lh/Tables/a b/c%d"},
		{LakehouseTable{Schema: "dbo", Table: "orders"}, "abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse", "abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse/Tables/dbo/orders"},
		{LakehouseTable{Schema: "a b", Table: "c%d"}, "az://c/lh", "az://c/lh/Tables/a%20b/c%25d"},
		{LakehouseTable{Table: "t"}, "https://acct.blob.core.windows.net/c/lh?sv=1&sig=x", "https://acct.blob.core.windows.net/c/lh/Tables/t?sv=1&sig=x"},
		{LakehouseTable{Table: "a#b"}, "file:///lh", "file:///lh/Tables/a%23b"},
	} {
		if got := tc.t.Location(tc.root); got != tc.want {
			t.Errorf("%+v.Location(%q) = %q, want %q", tc.t, tc.root, got, tc.want)
		}
	}
}

package catalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func isLocalTable(ctx context.Context, loc string) (bool, error) {
	fi, err := os.Stat(filepath.Join(loc, "_delta_log"))
	return err == nil && fi.IsDir(), nil
}

func mk(t *testing.T, dirs ...string) string {
	root := t.TempDir()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d, "_delta_log"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestWarehouseLayouts(t *testing.T) {
	tests := []struct {
		name  string
		dirs  []string
		parts []string
		want  string
	}{
		{"fabric with schemas", []string{"Tables/sales/orders"}, []string{"sales", "orders"}, "Tables/sales/orders"},
		{"fabric default schema dbo", []string{"Tables/dbo/orders"}, []string{"orders"}, "Tables/dbo/orders"},
		{"fabric without schemas", []string{"Tables/orders"}, []string{"orders"}, "Tables/orders"},
		{"fabric dbo without schemas", []string{"Tables/orders"}, []string{"dbo", "orders"}, "Tables/orders"},
		{"spark warehouse schema", []string{"sales.db/orders"}, []string{"sales", "orders"}, "sales.db/orders"},
		{"spark default schema", []string{"orders"}, []string{"default", "orders"}, "orders"},
		{"spark default schema unqualified", []string{"orders"}, []string{"orders"}, "orders"},
		{"three parts ignore the catalog", []string{"sales.db/orders"}, []string{"spark_catalog", "sales", "orders"}, "sales.db/orders"},
		{"upper-case name, lower-case directory", []string{"sales.db/orders"}, []string{"Sales", "ORDERS"}, "sales.db/orders"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := mk(t, tt.dirs...)
			c := &Catalog{Warehouse: root, IsTable: isLocalTable}
			got, err := c.Resolve(context.Background(), tt.parts)
			if err != nil {
				t.Fatal(err)
			}
			if want := root + "/" + tt.want; got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

func TestUnknownNameListsWhereItLooked(t *testing.T) {
	root := mk(t)
	c := &Catalog{Warehouse: root, IsTable: isLocalTable}
	_, err := c.Resolve(context.Background(), []string{"sales", "orders"})
	if !errors.Is(err, ErrUnknownTable) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{root + "/Tables/sales/orders", root + "/sales.db/orders"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say it looked in %s", err, want)
		}
	}
	_, err = (&Catalog{}).Resolve(context.Background(), []string{"t"})
	if !errors.Is(err, ErrUnknownTable) || !strings.Contains(err.Error(), "--warehouse") {
		t.Errorf("got %v, want advice to give --warehouse", err)
	}
	if _, err := c.Resolve(context.Background(), []string{"a", "b", "c", "d"}); err == nil {
		t.Error("four parts accepted")
	}
}

func TestCatalogFiles(t *testing.T) {
	dir := t.TempDir()
	y := filepath.Join(dir, "c.yaml")
	os.WriteFile(y, []byte("tables:\n  sales.orders: /data/orders\n  main.sales.returns: \"abfss://c@a.dfs.core.windows.net/r\"\n"), 0o644)
	tm := filepath.Join(dir, "c.toml")
	os.WriteFile(tm, []byte("warehouse = \"/wh\"\n[tables]\n\"sales.orders\" = \"/data/orders\"\n"), 0o644)
	for _, p := range []string{y, tm} {
		f, err := LoadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := &Catalog{Tables: f.Tables}
		got, err := c.Resolve(context.Background(), []string{"SALES", "orders"})
		if err != nil || got != "/data/orders" {
			t.Errorf("%s: got %q, %v", p, got, err)
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("tables: [unclosed"), 0o644)
	if _, err := LoadFile(bad); err == nil {
		t.Error("a malformed catalog file was accepted")
	}
}

// TestHostileNames: a name part that could climb out of the warehouse layout, or hide a
// query or fragment in the location, is refused; a warehouse URL's query stays at the end.
func TestHostileNames(t *testing.T) {
	c := &Catalog{Warehouse: t.TempDir(), IsTable: func(context.Context, string) (bool, error) { return true, nil }}
	for _, parts := range [][]string{{".."}, {"s", ".."}, {"a/../../x"}, {"a\\b"}, {"t?x"}, {"t#x"}, {"t%2F"}, {""}, {"a\nb"}} {
		if loc, err := c.Resolve(context.Background(), parts); err == nil {
			t.Errorf("%q resolved to %s, want a refusal", parts, loc)
		}
	}
	c = &Catalog{Warehouse: "https://acct.blob.core.windows.net/ws/lh.Lakehouse?sv=1&sig=x"}
	got := c.candidates([]string{"sales", "orders"})
	if got[0] != "https://acct.blob.core.windows.net/ws/lh.Lakehouse/Tables/sales/orders?sv=1&sig=x" {
		t.Errorf("got %s", got[0])
	}
}

func localDirs(ctx context.Context, loc string) ([]string, error) {
	entries, err := os.ReadDir(loc)
	if err != nil {
		return nil, nil
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// With Dirs, names match folders case-insensitively as Spark compares identifiers; two
// folders that differ only in case are an error naming both; a lookalike folder that only
// Unicode case folding would match (ſ, the long s) is not taken for the name.
func TestCaseInsensitiveNames(t *testing.T) {
	ctx := context.Background()
	root := mk(t, "Tables/Sales/Orders")
	c := &Catalog{Warehouse: root, IsTable: isLocalTable, Dirs: localDirs}
	got, err := c.Resolve(ctx, []string{"sales", "ORDERS"})
	if err != nil || got != root+"/Tables/Sales/Orders" {
		t.Errorf("sales.ORDERS: %q, %v", got, err)
	}
	both := mk(t, "Tables/sales/Orders", "Tables/sales/orders")
	c = &Catalog{Warehouse: both, IsTable: isLocalTable, Dirs: localDirs}
	_, err = c.Resolve(ctx, []string{"sales", "orders"})
	if err == nil || !errors.Is(err, ErrUnknownTable) || !strings.Contains(err.Error(), "Tables/sales/Orders") || !strings.Contains(err.Error(), "Tables/sales/orders") {
		t.Errorf("ambiguous by case: %v", err)
	}
	lookalike := mk(t, "Tables/ſales/orders")
	c = &Catalog{Warehouse: lookalike, IsTable: isLocalTable, Dirs: localDirs}
	if got, err := c.Resolve(ctx, []string{"sales", "orders"}); err == nil {
		t.Errorf("sales.orders resolved to the lookalike %q", got)
	}
	// Without Dirs (an object store), the name as typed and in lower case, as before.
	c = &Catalog{Warehouse: root, IsTable: isLocalTable}
	if _, err := c.Resolve(ctx, []string{"sales", "orders"}); err == nil {
		t.Error("without Dirs, sales.orders found Tables/Sales/Orders")
	}
}

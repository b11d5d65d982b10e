package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// lakehouseCommit is the first commit of a table, named by its id.
func lakehouseCommit(id string) []byte {
	return []byte(`{"commitInfo":{"timestamp":1700000000000,"operation":"CREATE TABLE","operationParameters":{}}}` + "\n" +
		`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" +
		`{"metaData":{"id":"` + id + `","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{},"createdTime":0}}` + "\n")
}

// writeLakehouses writes two lakehouses in store: flat.Lakehouse without schemas
// (Tables/DimCustomer, Tables/orders) and lh.Lakehouse with schemas (Tables/dbo/Orders,
// Tables/sales/returns), each with a Delta folder in Files/ that Fabric does not show.
func writeLakehouses(t *testing.T, store storage.Store) {
	t.Helper()
	for _, rel := range []string{"flat.Lakehouse/Tables/DimCustomer", "flat.Lakehouse/Tables/orders", "flat.Lakehouse/Files/raw",
		"lh.Lakehouse/Tables/dbo/Orders", "lh.Lakehouse/Tables/sales/returns", "lh.Lakehouse/Files/raw"} {
		if err := store.Put(context.Background(), rel+"/_delta_log/00000000000000000000.json", lakehouseCommit(rel)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLakehouseNames: a lakehouse root is a warehouse root (--warehouse) in both layouts, on
// local disk and on the Azure test server: SHOW TABLES lists its tables named as Fabric shows
// them, and each of those names (in any case; dbo's tables without their schema) opens its
// table.
func TestLakehouseNames(t *testing.T) {
	type lakehouses struct {
		root string
		opts []string
	}
	setups := map[string]func(t *testing.T) lakehouses{
		"local": func(t *testing.T) lakehouses {
			dir := t.TempDir()
			st, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			writeLakehouses(t, st)
			return lakehouses{root: dir}
		},
		"azure": func(t *testing.T) lakehouses {
			cfg := storagetest.AzureConfig(t) // skips without the Azure test server
			writeLakehouses(t, storagetest.NewAzureConfig(t, cfg))
			return lakehouses{root: "az://" + cfg.Container + "/" + cfg.Prefix, opts: []string{
				"--storage-option", "azure_endpoint=" + cfg.ServiceURL, "--storage-option", "azure_allow_http=true",
				"--storage-option", "azure_storage_account_name=" + cfg.Account, "--storage-option", "azure_storage_account_key=" + cfg.AccountKey}}
		},
	}
	for name, setup := range setups {
		t.Run(name, func(t *testing.T) {
			if name == "azure" && os.Getenv(storagetest.EnvAzureEndpoint) == "" && os.Getenv("CI") != "true" {
				t.Skip("the Azure test server is not configured (source .cache/testservers.env)")
			}
			l := setup(t)
			sqlJSON := func(lakehouse, stmt string) map[string]any {
				t.Helper()
				args := append([]string{"sql", "--json", "--warehouse", l.root + "/" + lakehouse, stmt}, l.opts...)
				code, out, errs := run(t, args...)
				if code != ExitOK {
					t.Fatalf("%s: exit %d: %s", stmt, code, errs)
				}
				var doc map[string]any
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					t.Fatalf("%s: %v\n%s", stmt, err, out)
				}
				return doc
			}
			names := func(doc map[string]any) []string {
				var out []string
				for _, x := range doc["tables"].([]any) {
					m := x.(map[string]any)
					loc := strings.TrimPrefix(strings.TrimPrefix(m["location"].(string), l.root+"/"), "file://"+l.root+"/")
					out = append(out, m["name"].(string)+" "+loc)
				}
				return out
			}
			for _, c := range []struct {
				lakehouse, stmt string
				want            []string
			}{
				{"flat.Lakehouse", "SHOW TABLES", []string{"DimCustomer flat.Lakehouse/Tables/DimCustomer", "orders flat.Lakehouse/Tables/orders"}},
				{"flat.Lakehouse", "SHOW TABLES IN dbo", []string{"DimCustomer flat.Lakehouse/Tables/DimCustomer", "orders flat.Lakehouse/Tables/orders"}},
				{"lh.Lakehouse", "SHOW TABLES", []string{"dbo.Orders lh.Lakehouse/Tables/dbo/Orders", "sales.returns lh.Lakehouse/Tables/sales/returns"}},
				{"lh.Lakehouse", "SHOW TABLES FROM SALES", []string{"sales.returns lh.Lakehouse/Tables/sales/returns"}},
			} {
				if d := cmp.Diff(c.want, names(sqlJSON(c.lakehouse, c.stmt))); d != "" {
					t.Errorf("%s in %s (-want +got):\n%s", c.stmt, c.lakehouse, d)
				}
			}
			if doc := sqlJSON("lh.Lakehouse", "SHOW TABLES IN nothing"); len(doc["tables"].([]any)) != 0 || !strings.Contains(strings.Join(strs(doc["warnings"]), " "), "no table in schema nothing; the lakehouse's tables are in dbo, sales") {
				t.Errorf("SHOW TABLES IN nothing: %v", doc)
			}
			// Every name opens its table: as Fabric shows it, in another case, dbo's without dbo.
			for _, c := range [][3]string{
				{"flat.Lakehouse", "dimcustomer", "Tables/DimCustomer"},
				{"flat.Lakehouse", "dbo.DIMCUSTOMER", "Tables/DimCustomer"},
				{"flat.Lakehouse", "orders", "Tables/orders"},
				{"lh.Lakehouse", "dbo.orders", "Tables/dbo/Orders"},
				{"lh.Lakehouse", "Orders", "Tables/dbo/Orders"},
				{"lh.Lakehouse", "Sales.Returns", "Tables/sales/returns"},
			} {
				doc := sqlJSON(c[0], "DESCRIBE DETAIL "+c[1])
				if loc, _ := doc["detail"].(map[string]any)["location"].(string); !strings.HasSuffix(loc, c[0]+"/"+c[2]) {
					t.Errorf("%s in %s is %s, want %s", c[1], c[0], loc, c[2])
				}
			}
			// A folder of Files/ is not a table of the lakehouse.
			args := append([]string{"sql", "--warehouse", l.root + "/lh.Lakehouse", "DESCRIBE DETAIL raw"}, l.opts...)
			if code, _, errs := run(t, args...); code != ExitFailure || !strings.Contains(errs, "unknown table") {
				t.Errorf("raw: exit %d: %s", code, errs)
			}
			// A root that is no lakehouse says so.
			args = append([]string{"sql", "--warehouse", l.root + "/flat.Lakehouse/Tables", "SHOW TABLES"}, l.opts...)
			if code, _, errs := run(t, args...); code != ExitFailure || !strings.Contains(errs, "has no Tables/ folder") {
				t.Errorf("SHOW TABLES of Tables/: exit %d: %s", code, errs)
			}
		})
	}
}

// TestShowTablesText: the text of SHOW TABLES is Spark's columns and the location.
func TestShowTablesText(t *testing.T) {
	dir := t.TempDir()
	st, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeLakehouses(t, st)
	code, out, errs := run(t, "sql", "--warehouse", filepath.Join(dir, "lh.Lakehouse"), "SHOW TABLES")
	want := "namespace\ttableName\tisTemporary\tlocation\n" +
		"dbo\tOrders\tfalse\t" + filepath.Join(dir, "lh.Lakehouse", "Tables", "dbo", "Orders") + "\n" +
		"sales\treturns\tfalse\t" + filepath.Join(dir, "lh.Lakehouse", "Tables", "sales", "returns") + "\n"
	if code != ExitOK || out != want {
		t.Errorf("exit %d: %s\ngot:\n%s\nwant:\n%s", code, errs, out, want)
	}
	if code, _, errs := run(t, "sql", "SHOW TABLES"); code != ExitFailure || !strings.Contains(errs, "give it with --warehouse") {
		t.Errorf("SHOW TABLES without a warehouse: exit %d: %s", code, errs)
	}
}

func strs(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

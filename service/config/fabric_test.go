package config

import (
	"strings"
	"testing"
)

// The ids of Fabric's documentation examples (Background Jobs - Run On Demand Table
// Maintenance; Job Scheduler - Get Item Job Instance).
const (
	docWorkspace = "4b218778-e7a5-4d73-8187-f10824047715"
	docLakehouse = "431e8d7b-4a95-4c02-8ccd-6faef5ba1bd7"
)

const fabricValid = `dataDir: /s
discover:
  - {id: lh, root: "abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse", refresh: 1h}
fabric:
  baseUrl: https://vacuum.example.com/
  lakehouses:
    - workspaceId: 4B218778-E7A5-4D73-8187-F10824047715
      lakehouseId: 431e8d7b-4a95-4c02-8ccd-6faef5ba1bd7
      root: abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse/
    - {workspaceId: 4b218778-e7a5-4d73-8187-f10824047715, lakehouseId: 5b218778-e7a5-4d73-8187-f10824047715, root: /lakehouses/two}
tables:
  - {id: two, path: /lakehouses/two/Tables/dbo/orders}
`

func TestParseFabric(t *testing.T) {
	cfg, err := Parse([]byte(fabricValid), "m.yaml", "/etc")
	if err != nil {
		t.Fatal(err)
	}
	f := cfg.Fabric
	if f == nil || f.BaseURL != "https://vacuum.example.com" || len(f.Lakehouses) != 2 {
		t.Fatalf("fabric %+v", f)
	}
	l := f.Lakehouses[0]
	if l.WorkspaceID != docWorkspace || l.LakehouseID != docLakehouse || l.Root != "abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse" || l.Line != 7 {
		t.Errorf("lakehouse %+v", l)
	}
	for _, ids := range [][2]string{{docWorkspace, docLakehouse}, {strings.ToUpper(docWorkspace), strings.ToUpper(docLakehouse)}} {
		if got, ok := f.Lakehouse(ids[0], ids[1]); !ok || got.Root != l.Root {
			t.Errorf("Lakehouse(%s, %s) = %+v, %v", ids[0], ids[1], got, ok)
		}
	}
	for _, ids := range [][2]string{{docLakehouse, docWorkspace}, {docWorkspace, "5b218778-e7a5-4d73-8187-f10824047716"}, {"", ""}, {docWorkspace + " ", docLakehouse}} {
		if got, ok := f.Lakehouse(ids[0], ids[1]); ok {
			t.Errorf("Lakehouse(%q, %q) = %+v, want none", ids[0], ids[1], got)
		}
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings %v", cfg.Warnings)
	}
	var none *Fabric
	if _, ok := none.Lakehouse(docWorkspace, docLakehouse); ok {
		t.Error("a file without fabric maps a lakehouse")
	}
}

// TestFabricWarnsOfAnEmptyLakehouse: a lakehouse under which the file maintains nothing is
// valid, and warned of: every job of it would be refused.
func TestFabricWarnsOfAnEmptyLakehouse(t *testing.T) {
	cfg, err := Parse([]byte("dataDir: /s\ntables: [{id: a, path: /lh/Files/a}]\nfabric:\n  lakehouses: [{workspaceId: "+docWorkspace+", lakehouseId: "+docLakehouse+", root: /lh}]\n"), "m.yaml", "/etc")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "every job of it will be refused") || !strings.Contains(cfg.Warnings[0], "line 4") {
		t.Errorf("warnings %v", cfg.Warnings)
	}
	// A table given by name in the lakehouse counts.
	cfg, err = Parse([]byte("dataDir: /s\ntables: [{name: dbo.a, warehouse: /lh/}]\nfabric:\n  lakehouses: [{workspaceId: "+docWorkspace+", lakehouseId: "+docLakehouse+", root: /lh}]\n"), "m.yaml", "/etc")
	if err != nil || len(cfg.Warnings) != 0 {
		t.Errorf("%v %v", cfg.Warnings, err)
	}
}

// TestRefusedFabric: every hostile value of the fabric mapping is refused, with its line.
func TestRefusedFabric(t *testing.T) {
	const head = "dataDir: /s\ntables: [{id: a, path: /lh/Tables/a}]\n"
	lh := func(s string) string { return head + "fabric:\n  lakehouses:\n    - " + s + "\n" }
	ok := "workspaceId: " + docWorkspace + ", lakehouseId: " + docLakehouse + ", root: /lh"
	cases := []struct {
		name, yaml string
		line       int
		want       string
	}{
		{"fabric a list", head + "fabric: [a]\n", 3, "fabric must be a mapping"},
		{"fabric a string", head + "fabric: yes\n", 3, "fabric must be a mapping"},
		{"no lakehouses", head + "fabric: {baseUrl: 'https://x.example'}\n", 3, "lakehouses is missing"},
		{"lakehouses empty", head + "fabric: {lakehouses: []}\n", 3, "at least one lakehouse"},
		{"lakehouses a mapping", head + "fabric: {lakehouses: {a: b}}\n", 3, "at least one lakehouse"},
		{"unknown key", head + "fabric: {lakehouses: [{" + ok + "}], tenantId: x}\n", 3, `unknown key "tenantId"`},
		{"key in another case", lh("{WorkspaceId: " + docWorkspace + ", lakehouseId: " + docLakehouse + ", root: /lh}"), 5, `unknown key "WorkspaceId"`},
		{"unknown lakehouse key", lh("{" + ok + ", tableName: a}"), 5, `unknown key "tableName"`},
		{"duplicate key", lh("{" + ok + ", root: /lh2}"), 5, `key "root" given twice`},
		{"a lakehouse a string", lh(docLakehouse), 5, "must be a mapping"},
		{"no workspaceId", lh("{lakehouseId: " + docLakehouse + ", root: /lh}"), 5, "workspaceId is missing"},
		{"no lakehouseId", lh("{workspaceId: " + docWorkspace + ", root: /lh}"), 5, "lakehouseId is missing"},
		{"no root", lh("{workspaceId: " + docWorkspace + ", lakehouseId: " + docLakehouse + "}"), 5, "root is missing"},
		{"id not a GUID", lh("{workspaceId: ws, lakehouseId: " + docLakehouse + ", root: /lh}"), 5, `"ws" is not a GUID`},
		{"id without hyphens", lh("{workspaceId: 4b218778e7a54d738187f10824047715, lakehouseId: " + docLakehouse + ", root: /lh}"), 5, "is not a GUID"},
		{"id in braces", lh("{workspaceId: '{" + docWorkspace + "}', lakehouseId: " + docLakehouse + ", root: /lh}"), 5, "is not a GUID"},
		{"id one digit short", lh("{workspaceId: " + docWorkspace[:35] + ", lakehouseId: " + docLakehouse + ", root: /lh}"), 5, "is not a GUID"},
		{"id one digit long", lh("{workspaceId: " + docWorkspace + "5, lakehouseId: " + docLakehouse + ", root: /lh}"), 5, "is not a GUID"},
		{"id with a g", lh("{workspaceId: 4b218778-e7a5-4d73-8187-f1082404771g, lakehouseId: " + docLakehouse + ", root: /lh}"), 5, "is not a GUID"},
		{"id with full-width digits", lh("{workspaceId: ４b218778-e7a5-4d73-8187-f10824047715, lakehouseId: " + docLakehouse + ", root: /lh}"), 5, "is not a GUID"},
		{"id with blanks", lh("{workspaceId: ' " + docWorkspace + "', lakehouseId: " + docLakehouse + ", root: /lh}"), 5, "leading or trailing blanks"},
		{"id a number", lh("{workspaceId: 12345, lakehouseId: " + docLakehouse + ", root: /lh}"), 5, "workspaceId must be a string"},
		{"id null", lh("{workspaceId: null, lakehouseId: " + docLakehouse + ", root: /lh}"), 5, "workspaceId must be a string"},
		{"id a list", lh("{workspaceId: [" + docWorkspace + "], lakehouseId: " + docLakehouse + ", root: /lh}"), 5, "workspaceId must be a string"},
		{"nil GUID", lh("{workspaceId: 00000000-0000-0000-0000-000000000000, lakehouseId: " + docLakehouse + ", root: /lh}"), 5, "nil GUID"},
		{"root with a SAS", lh("{workspaceId: " + docWorkspace + ", lakehouseId: " + docLakehouse + ", root: 'https://a.blob.core.windows.net/c/lh?sig=x'}"), 5, "carries a password or a query"},
		{"root not a location", lh("{workspaceId: " + docWorkspace + ", lakehouseId: " + docLakehouse + ", root: 'ftp://x/lh'}"), 5, "fabric lakehouse root"},
		{"root empty", lh("{workspaceId: " + docWorkspace + ", lakehouseId: " + docLakehouse + ", root: ''}"), 5, "root is empty"},
		{"lakehouse twice", head + "fabric:\n  lakehouses:\n    - {" + ok + "}\n    - {" + ok + "2}\n", 6, "already given on line 5"},
		{"lakehouse twice, in capitals", head + "fabric:\n  lakehouses:\n    - {" + ok + "}\n    - {workspaceId: 5b218778-e7a5-4d73-8187-f10824047715, lakehouseId: " + strings.ToUpper(docLakehouse) + ", root: /lh2}\n", 6, "already given on line 5"},
		{"one root under two ids", head + "fabric:\n  lakehouses:\n    - {" + ok + "}\n    - {workspaceId: " + docWorkspace + ", lakehouseId: 5b218778-e7a5-4d73-8187-f10824047715, root: /lh/}\n", 6, "is the lakehouse of line 5"},
		{"baseUrl relative", head + "fabric: {baseUrl: /v1, lakehouses: [{" + ok + "}]}\n", 3, "absolute http(s) URL"},
		{"baseUrl ftp", head + "fabric: {baseUrl: 'ftp://x.example', lakehouses: [{" + ok + "}]}\n", 3, "absolute http(s) URL"},
		{"baseUrl with a user", head + "fabric: {baseUrl: 'https://u:p@x.example', lakehouses: [{" + ok + "}]}\n", 3, "user or password"},
		{"baseUrl with a query", head + "fabric: {baseUrl: 'https://x.example/?a=b', lakehouses: [{" + ok + "}]}\n", 3, "query or fragment"},
		{"baseUrl with an empty query", head + "fabric: {baseUrl: 'https://x.example/?', lakehouses: [{" + ok + "}]}\n", 3, "query or fragment"},
		{"baseUrl a number", head + "fabric: {baseUrl: 8080, lakehouses: [{" + ok + "}]}\n", 3, "baseUrl must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if p, ok := problem(t, tc.yaml, tc.want); ok && p.Line != tc.line {
				t.Errorf("%q on line %d, want line %d", p.Msg, p.Line, tc.line)
			}
		})
	}
}

func TestValidGUID(t *testing.T) {
	for s, want := range map[string]bool{
		docWorkspace: true, strings.ToUpper(docLakehouse): true, "": false, docWorkspace + "\n": false, "\n" + docWorkspace: false,
		"4b218778-e7a5-4d73-8187_f10824047715": false, "{" + docWorkspace + "}": false, "urn:uuid:" + docWorkspace: false,
	} {
		if got := ValidGUID(s); got != want {
			t.Errorf("ValidGUID(%q) = %v, want %v", s, got, want)
		}
	}
}

package catalog

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// TablesFolder is the folder of a Fabric lakehouse that holds its tables.
const TablesFolder = "Tables"

// ErrNotLakehouse is returned (wrapped) by Lakehouse for a root without a Tables/ folder.
var ErrNotLakehouse = errors.New("not a Fabric lakehouse (no Tables/ folder)")

// LakehouseTable is a table of a Fabric lakehouse, named as Fabric shows it.
type LakehouseTable struct {
	// Schema is the table's schema in a lakehouse with schemas (Tables/<schema>/<table>), ""
	// in one without (Tables/<table>).
	Schema string `json:"schema,omitempty"`
	Table  string `json:"table"`
}

// Name is the table's name as Fabric shows it: schema.table, or table in a lakehouse without
// schemas.
func (t LakehouseTable) Name() string {
	if t.Schema == "" {
		return t.Table
	}
	return t.Schema + "." + t.Table
}

// Rel is the table's folder below the lakehouse's root, its segments as they are named:
// Tables/<schema>/<table> or Tables/<table>.
func (t LakehouseTable) Rel() string {
	if t.Schema == "" {
		return TablesFolder + "/" + t.Table
	}
	return TablesFolder + "/" + t.Schema + "/" + t.Table
}

// Matches reports whether the table is the one a name of one or two parts (table, or schema
// and table: a Fabric job's tableName and schemaName) names. Names compare as Spark and Fabric
// compare identifiers (in lower case). A lakehouse without schemas has the one schema dbo: its
// Tables/orders is dbo.orders too, and in one with schemas, orders alone is dbo.orders.
func (t LakehouseTable) Matches(schema, table string) bool {
	if strings.ToLower(t.Table) != strings.ToLower(table) { //nolint:staticcheck // SA6005: EqualFold folds ſ to s (fold)
		return false
	}
	s, want := strings.ToLower(t.Schema), strings.ToLower(schema)
	return s == want || (s == "" && want == "dbo") || (s == "dbo" && want == "")
}

// LakehouseTableAt returns the table of a lakehouse whose folder below the root is rel
// (Tables/<table> or Tables/<schema>/<table>, with or without a trailing '/'); false for any
// other folder.
func LakehouseTableAt(rel string) (LakehouseTable, bool) {
	segs := strings.Split(strings.Trim(rel, "/"), "/")
	if segs[0] != TablesFolder {
		return LakehouseTable{}, false
	}
	for _, s := range segs[1:] {
		if s == "" || s == "." || s == ".." {
			return LakehouseTable{}, false
		}
	}
	switch len(segs) {
	case 2:
		return LakehouseTable{Table: segs[1]}, true
	case 3:
		return LakehouseTable{Schema: segs[1], Table: segs[2]}, true
	}
	return LakehouseTable{}, false
}

// Lakehouse lists the tables of a Fabric lakehouse as Fabric shows them, through dirs (the
// names of the folders at a path relative to the root, its segments joined by '/': "" the
// root, "Tables", "Tables/sales"; nothing for a path that does not exist) and isTable (whether
// the folder at a relative path holds a Delta table). Each folder of Tables/ that is a table is
// one of a lakehouse without schemas (orders); each other folder of Tables/ is a schema, and
// its folders that are tables are its tables (sales.orders). There is no deeper level, as in
// Fabric. A folder whose name starts with '.', and _delta_log, are not looked into. The tables come in the order dirs
// lists the folders. A root without a Tables/ folder is ErrNotLakehouse.
//
// It reads nothing itself: one call of dirs for the root, for Tables/ and for each schema, and
// one of isTable for each candidate.
func Lakehouse(ctx context.Context, dirs func(ctx context.Context, rel string) ([]string, error), isTable func(ctx context.Context, rel string) (bool, error)) ([]LakehouseTable, error) {
	top, err := dirs(ctx, "")
	if err != nil {
		return nil, err
	}
	found := false
	for _, d := range top {
		found = found || d == TablesFolder
	}
	if !found {
		return nil, ErrNotLakehouse
	}
	names, err := dirs(ctx, TablesFolder)
	if err != nil {
		return nil, err
	}
	var out []LakehouseTable
	for _, n := range names {
		if hidden(n) {
			continue
		}
		t := LakehouseTable{Table: n}
		ok, err := isTable(ctx, t.Rel())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Rel(), err)
		}
		if ok {
			out = append(out, t)
			continue
		}
		inner, err := dirs(ctx, TablesFolder+"/"+n)
		if err != nil {
			return nil, err
		}
		for _, m := range inner {
			if hidden(m) {
				continue
			}
			t := LakehouseTable{Schema: n, Table: m}
			ok, err := isTable(ctx, t.Rel())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.Rel(), err)
			}
			if ok {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// hidden: a folder Fabric does not show, or a Delta log (of a folder that is not a table: its
// log holds no commit).
func hidden(name string) bool {
	return name == "" || strings.HasPrefix(name, ".") || name == "_delta_log"
}

// Location is the table's location below the lakehouse root (a path or a URI): in a URI its
// folder names are escaped, and a query (an https:// URL's SAS) stays at the end.
func (t LakehouseTable) Location(root string) string {
	query := ""
	if i := strings.IndexByte(root, '?'); i >= 0 && strings.Contains(root, "://") {
		root, query = root[:i], root[i:]
	}
	segs := strings.Split(t.Rel(), "/")
	if strings.Contains(root, "://") || strings.HasPrefix(root, "file:") {
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
	}
	return strings.TrimSuffix(root, "/") + "/" + strings.Join(segs, "/") + query
}

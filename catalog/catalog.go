// Package catalog resolves table names (t, schema.t, catalog.schema.t) to table locations: from
// a catalog file mapping names to locations, or from a warehouse root laid out as a Fabric
// lakehouse or a Spark warehouse; and it names the tables of a lakehouse as Fabric shows them
// (Lakehouse). It does no I/O of its own: it asks its caller's functions whether a candidate
// location holds a Delta log and which folders a folder has, and never reads a table.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"
)

// EnvWarehouse is the environment variable that sets the warehouse root.
const EnvWarehouse = "DELTAVACUUM_WAREHOUSE"

// ErrUnknownTable is returned (wrapped) when a name resolves to no table.
var ErrUnknownTable = errors.New("unknown table")

// Catalog resolves names. The zero value resolves nothing.
type Catalog struct {
	// Warehouse is the root URI or path of a Fabric lakehouse or a Spark warehouse.
	Warehouse string
	// Tables maps names (as written, case-insensitively) to locations, from a catalog file.
	Tables map[string]string
	// IsTable reports whether a location holds a Delta table (a _delta_log directory).
	IsTable func(ctx context.Context, location string) (bool, error)
	// Dirs, when set, lists the names of the directories in a location of the warehouse
	// (errors.ErrUnsupported where it cannot, an object store): with it, the parts of a
	// name match folders case-insensitively, as Spark and Fabric match identifiers
	// (sales.orders finds Tables/sales/Orders), and two folders that differ only in case
	// are an error naming both. Without it, a name is looked up as typed and in lower case.
	Dirs func(ctx context.Context, location string) ([]string, error)
}

// File is the catalog file format (YAML or TOML):
//
//	tables:
//	  sales.orders: /data/orders
//	  main.sales.returns: abfss://c@acct.dfs.core.windows.net/returns
type File struct {
	Warehouse string            `yaml:"warehouse" toml:"warehouse"`
	Tables    map[string]string `yaml:"tables" toml:"tables"`
}

// LoadFile reads a catalog file; the format follows the extension (.toml, else YAML).
func LoadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog file: %w", err)
	}
	var f File
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		_, err = toml.Decode(string(b), &f)
	} else {
		err = yaml.Unmarshal(b, &f)
	}
	if err != nil {
		return nil, fmt.Errorf("catalog file %s: %w", path, err)
	}
	return &f, nil
}

// Resolve returns the location of the table named by parts (1 to 3 of them).
func (c *Catalog) Resolve(ctx context.Context, parts []string) (string, error) {
	if len(parts) == 0 || len(parts) > 3 {
		return "", fmt.Errorf("table name %q must have one to three parts (table, schema.table or catalog.schema.table)", strings.Join(parts, "."))
	}
	name := strings.Join(parts, ".")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "/\\?#%") || strings.ContainsFunc(p, unicode.IsControl) {
			return "", fmt.Errorf("%w: %q: a part of a table name cannot be empty, '.' or '..', nor hold '/', '\\', '?', '#', '%%' or control characters (it would name a folder outside the warehouse's layout); give the table's path instead", ErrUnknownTable, name)
		}
	}
	var looked []string
	if v, ok := c.Tables[name]; ok {
		return v, nil
	}
	var matches []string // names spelled in another case: Spark's identifiers are case-insensitive
	for k := range c.Tables {
		if strings.EqualFold(k, name) {
			matches = append(matches, k)
		}
	}
	sort.Strings(matches)
	for _, k := range matches[min(1, len(matches)):] {
		if c.Tables[k] != c.Tables[matches[0]] {
			return "", fmt.Errorf("%w: %s: the catalog file has %s, which differ only in case and name different locations; write the name as the catalog file does",
				ErrUnknownTable, name, strings.Join(matches, " and "))
		}
	}
	if len(matches) > 0 {
		return c.Tables[matches[0]], nil
	}
	if len(c.Tables) > 0 {
		looked = append(looked, fmt.Sprintf("the catalog file (%d names)", len(c.Tables)))
	}
	if c.Warehouse != "" && c.IsTable != nil {
		cands, err := c.folded(ctx, name, c.candidates(parts))
		if err != nil {
			return "", err
		}
		for _, cand := range cands {
			ok, err := c.IsTable(ctx, cand)
			if err != nil {
				return "", fmt.Errorf("resolving %s: %s: %w", name, cand, err)
			}
			if ok {
				return cand, nil
			}
			looked = append(looked, cand)
		}
	}
	if len(looked) == 0 {
		return "", fmt.Errorf("%w: %s: no catalog is configured; give --warehouse URI (or %s) or --catalog FILE, or a path instead of a name", ErrUnknownTable, name, EnvWarehouse)
	}
	return "", fmt.Errorf("%w: %s: looked in %s", ErrUnknownTable, name, strings.Join(looked, ", "))
}

// candidates lists the locations a name may have in the warehouse layouts: a Fabric lakehouse
// (Tables/<schema>/<table>, Tables/<table> without schemas, dbo the default schema) and a Spark
// warehouse (<schema>.db/<table>, tables of the default schema at the root). The catalog part
// of a three-part name is not part of these layouts and is ignored.
func (c *Catalog) candidates(parts []string) []string {
	table := parts[len(parts)-1]
	schema := ""
	if len(parts) >= 2 {
		schema = parts[len(parts)-2]
	}
	// A query (an https:// URL's SAS) stays at the end: the table's path goes before it.
	root, query := c.Warehouse, ""
	if i := strings.IndexByte(root, '?'); i >= 0 && strings.Contains(root, "://") {
		root, query = root[:i], root[i:]
	}
	root = strings.TrimSuffix(root, "/")
	var out []string
	addAll := func(name, schema string) {
		switch {
		case schema == "":
			out = append(out, root+"/Tables/dbo/"+name, root+"/Tables/"+name, root+"/"+name)
		default:
			out = append(out, root+"/Tables/"+schema+"/"+name)
			if strings.EqualFold(schema, "dbo") {
				out = append(out, root+"/Tables/"+name)
			}
			out = append(out, root+"/"+schema+".db/"+name)
			if strings.EqualFold(schema, "default") {
				out = append(out, root+"/"+name)
			}
		}
	}
	addAll(table, schema)
	// Spark stores unquoted identifiers in lower case.
	if lt, ls := strings.ToLower(table), strings.ToLower(schema); lt != table || ls != schema {
		addAll(lt, ls)
	}
	for i := range out {
		out[i] += query
	}
	return out
}

// folded replaces each candidate location by the folders that match it case-insensitively,
// part by part, when c.Dirs can list the warehouse (a candidate no folder matches stays, to
// be named in the error). Two folders that match one candidate are an error naming both.
func (c *Catalog) folded(ctx context.Context, name string, cands []string) ([]string, error) {
	if c.Dirs == nil {
		return cands, nil
	}
	root, query := c.Warehouse, ""
	if i := strings.IndexByte(root, '?'); i >= 0 && strings.Contains(root, "://") {
		root, query = root[:i], root[i:]
	}
	root = strings.TrimSuffix(root, "/")
	var out []string
	seen := map[string]bool{}
	for _, cand := range cands {
		rel := strings.TrimPrefix(strings.TrimSuffix(cand, query), root+"/")
		matches, err := c.fold(ctx, root, strings.Split(rel, "/"))
		if errors.Is(err, errors.ErrUnsupported) {
			return cands, nil
		}
		if err != nil {
			return nil, fmt.Errorf("resolving %s: %w", name, err)
		}
		if len(matches) > 1 {
			for i := range matches {
				matches[i] = root + "/" + matches[i] + query
			}
			return nil, fmt.Errorf("%w: %s: %s differ only in case; names are case-insensitive, so give the path of the one meant", ErrUnknownTable, name, strings.Join(matches, " and "))
		}
		if len(matches) == 1 {
			cand = root + "/" + matches[0] + query
		}
		if !seen[cand] {
			seen[cand] = true
			out = append(out, cand)
		}
	}
	return out, nil
}

// fold returns the relative paths under dir whose parts equal parts case-insensitively.
func (c *Catalog) fold(ctx context.Context, dir string, parts []string) ([]string, error) {
	if len(parts) == 0 {
		return []string{""}, nil
	}
	names, err := c.Dirs(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		// Lower case on both sides, as Spark compares identifiers (toLowerCase(Locale.ROOT)):
		// not strings.EqualFold, whose Unicode folding takes ſ (long s) for s.
		if strings.ToLower(n) != strings.ToLower(parts[0]) { //nolint:staticcheck // SA6005: EqualFold is wrong here (above)
			continue
		}
		rest, err := c.fold(ctx, dir+"/"+n, parts[1:])
		if err != nil {
			return nil, err
		}
		for _, r := range rest {
			out = append(out, strings.TrimSuffix(n+"/"+r, "/"))
		}
	}
	return out, nil
}

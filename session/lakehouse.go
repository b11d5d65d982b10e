package session

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/deltavacuum/deltavacuum/catalog"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/sql"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/location"
)

// TableAt reports whether the folder dir of store (a key ending in '/', "" for the root) holds
// a Delta table: _delta_log/ with a commit or a checkpoint (classic, multi-part or UUID). A log
// with neither is not a table. One listing of _delta_log/, stopped at the first such file.
func TableAt(ctx context.Context, store storage.Store, dir string) (bool, error) {
	log := dir + deltalog.LogDir
	err := store.Walk(ctx, log, func(o storage.Object) error {
		if o.IsDir {
			if o.Key == log {
				return nil
			}
			return storage.SkipDir
		}
		switch deltalog.ParseLogName(o.Name()).Kind {
		case deltalog.KindCommit, deltalog.KindClassicCheckpoint, deltalog.KindMultiPartCheckpoint, deltalog.KindUUIDCheckpoint:
			return errFound
		}
		return nil
	})
	switch {
	case errors.Is(err, errFound):
		return true, nil
	case err == nil, errors.Is(err, storage.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("listing %s%s: %w", store.Location(), log, err)
}

// FolderNames returns the names of the folders directly in the folder dir of store (a key
// ending in '/', "" for the root), in byte order: one listing of that folder alone. A folder
// that does not exist has none.
func FolderNames(ctx context.Context, store storage.Store, dir string) ([]string, error) {
	var out []string
	err := store.Walk(ctx, dir, func(o storage.Object) error {
		if !o.IsDir || o.Key == dir {
			return nil
		}
		out = append(out, o.Name())
		return storage.SkipDir
	})
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	return out, err
}

// LakehouseTables lists the tables of the Fabric lakehouse whose root is store, named as
// Fabric shows them (catalog.Lakehouse): Tables/<table>, and Tables/<schema>/<table> in a
// lakehouse with schemas. A store without a Tables/ folder is catalog.ErrNotLakehouse.
func LakehouseTables(ctx context.Context, store storage.Store) ([]catalog.LakehouseTable, error) {
	dir := func(rel string) string {
		if rel == "" {
			return ""
		}
		return rel + "/"
	}
	return catalog.Lakehouse(ctx,
		func(ctx context.Context, rel string) ([]string, error) { return FolderNames(ctx, store, dir(rel)) },
		func(ctx context.Context, rel string) (bool, error) { return TableAt(ctx, store, dir(rel)) })
}

// DirsOf returns the catalog's folder listing (catalog.Catalog.Dirs) for any location: local
// paths are read on disk (Dirs), object stores listed with opts, one level (FolderNames). With
// it, a name matches its folders case-insensitively in every warehouse.
func DirsOf(opts location.Options) func(ctx context.Context, loc string) ([]string, error) {
	return func(ctx context.Context, loc string) ([]string, error) {
		kind, err := location.Kind(loc)
		if err != nil {
			return nil, err
		}
		if kind == "local" {
			return Dirs(ctx, loc)
		}
		store, err := location.Open(ctx, loc, opts)
		if err != nil {
			return nil, err
		}
		return FolderNames(ctx, store, "")
	}
}

// lakehouseRoot opens the store of the session's warehouse, as the session's tables are
// opened (its storage options and transport).
func (s *Session) lakehouseRoot(ctx context.Context) (storage.Store, string, error) {
	c := s.cfg.Catalog
	if c == nil || c.Warehouse == "" {
		return nil, "", fmt.Errorf("SHOW TABLES lists the tables of a lakehouse: give it with --warehouse URI (or %s)", catalog.EnvWarehouse)
	}
	root := strings.TrimSuffix(c.Warehouse, "/")
	if s.cfg.Transport != nil {
		if wrap := s.cfg.Transport(root); wrap != nil {
			st, err := location.OpenTransport(ctx, root, s.cfg.StorageOptions, wrap)
			return st, root, err
		}
	}
	st, err := location.Open(ctx, root, s.cfg.StorageOptions)
	return st, root, err
}

// ListedTable is a row of SHOW TABLES: Spark's columns and what deltavacuum adds.
type ListedTable struct {
	// Namespace is the table's schema ("" in a lakehouse without schemas).
	Namespace   string `json:"namespace"`
	TableName   string `json:"tableName"`
	IsTemporary bool   `json:"isTemporary"`
	// Name is the table's name as Fabric shows it (schema.table, or table without schemas),
	// which VACUUM and every other statement take.
	Name     string `json:"name"`
	Location string `json:"location"`
}

// execShowTables lists the tables of the session's warehouse, a Fabric lakehouse
// (LakehouseTables), in the schema the statement names if it names one: in a lakehouse without
// schemas, its tables are those of dbo.
func (s *Session) execShowTables(ctx context.Context, st *sql.ShowTables, r *Result) (*Result, error) {
	store, root, err := s.lakehouseRoot(ctx)
	if err != nil {
		return nil, err
	}
	lts, err := LakehouseTables(ctx, store)
	if errors.Is(err, catalog.ErrNotLakehouse) {
		return nil, fmt.Errorf("SHOW TABLES lists the tables of a Fabric lakehouse, and the warehouse %s has no Tables/ folder (give the lakehouse's root: abfss://WS@onelake.dfs.fabric.microsoft.com/LH.Lakehouse)", root)
	}
	if err != nil {
		return nil, err
	}
	r.Table = root
	r.Tables = []ListedTable{}
	schemas := map[string]bool{}
	for _, lt := range lts {
		schemas[lt.Schema] = true
		if st.Schema != "" && !lt.Matches(st.Schema, lt.Table) {
			continue
		}
		r.Tables = append(r.Tables, ListedTable{Namespace: lt.Schema, TableName: lt.Table, Name: lt.Name(), Location: lt.Location(root)})
	}
	if st.Schema != "" && len(r.Tables) == 0 && len(lts) > 0 {
		var names []string
		for sc := range schemas {
			if sc == "" {
				sc = "dbo (a lakehouse without schemas)"
			}
			names = append(names, sc)
		}
		sort.Strings(names)
		r.Warnings = append(r.Warnings, fmt.Sprintf("no table in schema %s; the lakehouse's tables are in %s", st.Schema, strings.Join(names, ", ")))
	}
	return r, nil
}

package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deltavacuum/deltavacuum/catalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// The readers a session knows beyond the table's folder (package run finds them, package
// vacuum keeps what they need): the tables of its warehouse, among which a shallow clone may
// name the table's files, and a way to open the locations of streaming checkpoints.

// openStore opens the store at loc as the session opens tables (its storage options and
// transport): a checkpoint folder, a table beside the one vacuumed.
func (s *Session) openStore(ctx context.Context, loc string) (storage.Store, error) {
	t, err := s.open(ctx, loc)
	if err != nil {
		return nil, err
	}
	return t.Store, nil
}

// WarehouseTables lists the locations of the tables of the session's warehouse: a Fabric
// lakehouse (Tables/<table>, Tables/<schema>/<table>) or a Spark warehouse (<table> and
// <schema>.db/<table> at its root). None without a warehouse.
func (s *Session) WarehouseTables(ctx context.Context) ([]string, error) {
	c := s.cfg.Catalog
	if c == nil || c.Warehouse == "" {
		return nil, nil
	}
	store, root, err := s.lakehouseRoot(ctx)
	if err != nil {
		return nil, err
	}
	lts, err := LakehouseTables(ctx, store)
	switch {
	case err == nil:
		out := make([]string, 0, len(lts))
		for _, lt := range lts {
			out = append(out, lt.Location(root))
		}
		return out, nil
	case !errors.Is(err, catalog.ErrNotLakehouse):
		return nil, err
	}
	// A Spark warehouse: the default database's tables at the root, the others in <db>.db/.
	var out []string
	names, err := FolderNames(ctx, store, "")
	if err != nil {
		return nil, fmt.Errorf("listing the warehouse %s: %w", root, err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".db") {
			inner, err := FolderNames(ctx, store, n+"/")
			if err != nil {
				return nil, fmt.Errorf("listing the warehouse %s: %w", root, err)
			}
			for _, t := range inner {
				if ok, err := TableAt(ctx, store, n+"/"+t+"/"); err != nil {
					return nil, err
				} else if ok {
					out = append(out, root+"/"+n+"/"+t)
				}
			}
			continue
		}
		if ok, err := TableAt(ctx, store, n+"/"); err != nil {
			return nil, err
		} else if ok {
			out = append(out, root+"/"+n)
		}
	}
	return out, nil
}

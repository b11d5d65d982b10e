package deltavacuum

import (
	"context"
	"fmt"

	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/sql"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// InspectRequest is an inspection as the command line and SQL express it.
type InspectRequest struct {
	insight.Options
	// Inventory, when set, replaces the listing (as VACUUM ... USING INVENTORY), in the
	// format InventoryFormat.
	Inventory       *sql.Inventory
	InventoryFormat string
}

// Inspect reports what a VACUUM of t would reclaim (see package insight), with the session's
// clock and storage settings. It deletes and writes nothing.
func (s *Session) Inspect(ctx context.Context, t *Table, req InspectRequest) (*insight.Report, error) {
	opts := req.Options
	if req.Lite && req.Inventory != nil {
		return nil, fmt.Errorf("inspecting table %s: %w", t.Location, vacuum.ErrInventoryWithLite)
	}
	if req.Inventory != nil {
		listing, err := s.openInventory(ctx, t, req.Inventory, req.InventoryFormat)
		if err != nil {
			return nil, err
		}
		opts.Inventory = listing
	}
	if opts.Now.IsZero() {
		opts.Now = s.cfg.Now()
	}
	return insight.Inspect(ctx, t.Store, opts)
}

// Explain says what a VACUUM of t run now does with each path, and why (see insight.Explain).
func (s *Session) Explain(ctx context.Context, t *Table, paths []string, retainHours *float64) (*insight.Explained, error) {
	return insight.Explain(ctx, t.Store, paths, insight.ExplainOptions{RetainHours: retainHours, Now: s.cfg.Now()})
}

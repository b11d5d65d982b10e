package session

import (
	"context"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/run"

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
	// StreamingCheckpoints are checkpoint locations of streaming queries that read the table
	// (run.ReaderOptions), beside those its property lists.
	StreamingCheckpoints []string
	// Siblings, when not nil, are the tables beside it looked at for shallow clones (nil: the
	// session's warehouse's).
	Siblings []string
}

// Inspect reports what a VACUUM of t would reclaim (see package insight), with the session's
// clock and storage settings. It deletes and writes nothing.
func (s *Session) Inspect(ctx context.Context, t *deltavacuum.Table, req InspectRequest) (*insight.Report, error) {
	opts := req.Options
	if req.Lite && req.Inventory != nil {
		return nil, fmt.Errorf("inspecting table %s: %w", t.Location, vacuum.ErrInventoryWithLite)
	}
	if req.Inventory != nil {
		listing, err := s.openInventory(ctx, t, req.Inventory, req.InventoryFormat)
		if err != nil {
			return nil, err
		}
		defer listing.Close() // its temporary file, if it spilled
		opts.Inventory = listing
	}
	if opts.Now.IsZero() {
		opts.Now = s.cfg.Now()
	}
	if opts.Readers == nil {
		opts.Readers = s.readersOf(t, opts.Now, run.ReaderOptions{StreamingCheckpoints: req.StreamingCheckpoints, Siblings: req.Siblings})
	}
	return insight.Inspect(ctx, t.Store, opts)
}

// Explain says what a VACUUM of t run now does with each path, and why (see insight.Explain).
func (s *Session) Explain(ctx context.Context, t *deltavacuum.Table, paths []string, retainHours *float64) (*insight.Explained, error) {
	now := s.cfg.Now()
	return insight.Explain(ctx, t.Store, paths, insight.ExplainOptions{RetainHours: retainHours, Now: now, Readers: s.readersOf(t, now, run.ReaderOptions{})})
}

// readersOf finds the readers of t at now as a VACUUM by this session does (run.FindReaders:
// its pins, Iceberg metadata, registered streaming checkpoints, the warehouse's shallow
// clones), for an inspection or an explanation.
func (s *Session) readersOf(t *deltavacuum.Table, now time.Time, ro run.ReaderOptions) func(context.Context, *deltalog.Snapshot) (*insight.ReadersFound, error) {
	return func(ctx context.Context, snap *deltalog.Snapshot) (*insight.ReadersFound, error) {
		if ro.Siblings == nil {
			siblings, err := s.WarehouseTables(ctx)
			if err != nil {
				return nil, err
			}
			ro.Siblings = siblings
		}
		if ro.Open == nil {
			ro.Open = s.openStore
		}
		found, err := run.FindReaders(ctx, t.Store, snap, now, ro)
		if err != nil {
			return nil, err
		}
		out := &insight.ReadersFound{Readers: found.Readers, Notes: found.Notes}
		if ib := found.Iceberg; ib != nil {
			out.Iceberg = &insight.IcebergView{Metadata: ib.Metadata, Engine: ib.Engine, Version: ib.Version, LagVersions: ib.LagVersions, LagHours: ib.LagHours}
		}
		return out, nil
	}
}

// DetailReclaimable is what DESCRIBE DETAIL shows beyond Spark's columns: the DRY RUN of a
// VACUUM at the table's retention, run now.
type DetailReclaimable struct {
	RetentionHours float64   `json:"retentionHours"`
	Cutoff         time.Time `json:"cutoff"`
	insight.Reclaimable
	Price insight.Price `json:"price"`
}

func (s *Session) detailReclaimable(ctx context.Context, t *deltavacuum.Table) (*DetailReclaimable, error) {
	plan, err := t.Plan(ctx, vacuum.Options{Now: s.cfg.Now()})
	if err != nil {
		return nil, err
	}
	price := insight.Price{PerGBMonth: insight.DefaultPricePerGBMonth, Currency: insight.DefaultCurrency, Source: insight.DefaultPriceSource}
	defer func() { _ = plan.Close() }()
	rc, err := insight.ReclaimableOf(plan, price)
	if err != nil {
		return nil, err
	}
	return &DetailReclaimable{RetentionHours: plan.RetentionHours, Cutoff: plan.Cutoff, Reclaimable: rc, Price: price}, nil
}

// execInsight runs INSPECT and EXPLAIN VACUUM.
func (s *Session) execInsight(ctx context.Context, st sql.Statement, r *Result) (*Result, error) {
	ref, _ := tableOf(st)
	t, err := s.OpenRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	r.Table = t.Location
	retain := func(n *sql.Number) *float64 {
		if n == nil {
			return nil
		}
		h := n.Float
		return &h
	}
	switch st := st.(type) {
	case *sql.Inspect:
		req := InspectRequest{Options: insight.Options{Lite: st.Lite, RetainHours: retain(st.Retain)}}
		r.Inspect, err = s.Inspect(ctx, t, req)
	case *sql.ExplainVacuum:
		r.Explain, err = s.Explain(ctx, t, st.Paths, retain(st.Retain))
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

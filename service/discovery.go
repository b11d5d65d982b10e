package service

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltavacuum/deltavacuum/catalog"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/location"
)

// discovery lists the discover roots of the configuration, each on its refresh period, and
// replaces the tables each one found (tables.refound): those added are scheduled, those gone
// are no longer (a run of one in progress goes on).
type discovery struct {
	*shared
	st     *state.DB
	tables *tables
	sched  *scheduler
	roots  map[string]*discoverRoot // by id; the set is fixed by the configuration
	count  *prometheus.GaugeVec     // the tables found under each root

	mu sync.Mutex // guards each root's last and found
}

// discoverRoot is one discover root.
type discoverRoot struct {
	cfg    *config.Discover
	opts   location.Options
	getenv func(string) string
	// last is when the root was last listed (zero: never); found the ids it had then.
	last  time.Time
	found map[string]bool
}

// newRoots resolves the storage options of the discover roots (their secrets given to the
// redactor); it lists none.
func newRoots(ts *tables, getenv func(string) string) (map[string]*discoverRoot, error) {
	roots := map[string]*discoverRoot{}
	for i := range ts.cfg.Discover {
		d := &ts.cfg.Discover[i]
		root := d.Table(d.ID, d.Root)
		o, err := ts.cfg.ResolveStorageOptions(&root, getenv)
		if err != nil {
			return nil, fmt.Errorf("discover %s: %w", d.ID, err)
		}
		ts.redactOptions(o)
		ts.red.AddURI(d.Root)
		roots[d.ID] = &discoverRoot{cfg: d, opts: o, getenv: getenv}
	}
	return roots, nil
}

// openRoot opens the store of a discover root, through its store's rate limit.
func (c *discovery) openRoot(ctx context.Context, d *discoverRoot) (storage.Store, error) {
	if wrap := c.tables.transport(d.cfg.Root); wrap != nil {
		return location.OpenTransport(ctx, d.cfg.Root, d.opts, wrap)
	}
	return location.Open(ctx, d.cfg.Root, d.opts)
}

// refresh lists again each discover root whose refresh is due at now. A root that cannot be
// listed keeps the tables it had.
func (c *discovery) refresh(ctx context.Context, now time.Time) {
	ids := make([]string, 0, len(c.roots))
	for id := range c.roots {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		d := c.roots[id]
		c.mu.Lock()
		due := d.last.IsZero() || !now.Before(d.last.Add(d.cfg.Refresh))
		c.mu.Unlock()
		if !due {
			continue
		}
		if err := c.discover(ctx, id, now); err != nil {
			c.log.Warn("discovery failed; the tables found before are kept", "root", id, "error", c.red.String(err.Error()))
		}
	}
}

// discover lists the discover root id now and updates the tables.
func (c *discovery) discover(ctx context.Context, id string, now time.Time) error {
	d, ok := c.roots[id]
	if !ok {
		return fmt.Errorf("no discover root %q in the configuration", id)
	}
	c.mu.Lock()
	d.last = now
	c.mu.Unlock()
	store, err := c.openRoot(ctx, d)
	if err != nil {
		return err
	}
	rels, err := FindTables(ctx, store)
	if err != nil {
		return err
	}
	saved, err := c.st.Schedules(ctx)
	if err != nil {
		return err
	}
	found := map[string]*table{}
	var order []string // the listing's order, so the tables are listed in it
	for _, rel := range rels {
		tid := DiscoveredID(d.cfg.ID, rel)
		tc := d.cfg.Table(tid, tableLocation(d.cfg.Root, rel))
		// A lakehouse's table is named as Fabric shows it, and its id leaves Tables/ out.
		if lt, ok := catalog.LakehouseTableAt(rel); ok {
			tc.ID, tc.Name = DiscoveredID(d.cfg.ID, strings.TrimPrefix(rel, catalog.TablesFolder+"/")), lt.Name()
			tid = tc.ID
		}
		t, err := c.tables.newTable(&tc, d.getenv)
		if err != nil {
			return err
		}
		found[tid] = t
		order = append(order, tid)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	kept, added, removed := c.tables.refound(id, d.found, found, order)
	for _, t := range added {
		if t.cfg.Schedule == nil || t.cfg.DryRunOnly {
			continue
		}
		h := saved[t.cfg.ID].Handled
		if h.IsZero() {
			h = now
		}
		if err := c.sched.add(t, h); err != nil {
			c.log.Error("scheduling a discovered table", "table", t.cfg.ID, "error", err.Error())
		}
	}
	for _, tid := range removed {
		c.sched.remove(tid)
	}
	d.found = kept
	c.count.WithLabelValues(id).Set(float64(len(kept)))
	if len(added)+len(removed) > 0 {
		c.log.Info("discovery", "root", id, "tables", len(kept), "added", len(added), "removed", len(removed))
	}
	return nil
}

// Discover lists the discover root id now and updates the tables.
func (s *Server) Discover(ctx context.Context, id string, now time.Time) error {
	return s.disc.discover(ctx, id, now)
}

// refreshAt lists again, now, each discover root at the location root (compared as
// config.LocationKey compares) that was last listed at least minAge ago, and reports whether
// it listed one: a Fabric job that names a table made since the root's last refresh finds it,
// and a stream of such jobs lists the root at most once per minAge.
func (c *discovery) refreshAt(ctx context.Context, root string, now time.Time, minAge time.Duration) bool {
	key := config.LocationKey(root)
	listed := false
	for id, d := range c.roots {
		if config.LocationKey(d.cfg.Root) != key {
			continue
		}
		c.mu.Lock()
		due := d.last.IsZero() || !now.Before(d.last.Add(minAge))
		if due {
			d.last = now // one listing for jobs that come at once
		}
		c.mu.Unlock()
		if !due {
			continue
		}
		if err := c.discover(ctx, id, now); err != nil {
			c.log.Warn("discovery failed; the tables found before are kept", "root", id, "error", c.red.String(err.Error()))
		}
		listed = true
	}
	return listed
}

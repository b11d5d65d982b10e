package tables

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
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/location"
)

// Discovery lists the discover roots of the configuration, each on its refresh period, and
// replaces the tables each one found (Set.refound); it tells whoever listens (OnChange: the
// runner's scheduler) which tables were added and which are gone (a run of one in progress goes
// on).
type Discovery struct {
	*Env
	tables *Set
	roots  map[string]*discoverRoot // by id; the set is fixed by the configuration
	count  *prometheus.GaugeVec     // the tables found under each root

	mu      sync.Mutex // guards each root's last and found, and changed
	changed func(ctx context.Context, added []*Table, removed []string, now time.Time)
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

// NewDiscovery sets up the discover roots of ts's configuration: it resolves their storage
// options (their secrets given to the redactor) and lists none. reg gets the count of the tables
// found under each root.
func NewDiscovery(ts *Set, getenv func(string) string, reg prometheus.Registerer) (*Discovery, error) {
	roots, err := newRoots(ts, getenv)
	if err != nil {
		return nil, err
	}
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "deltavacuum_serve_discovered_tables", Help: "Tables found under a discover root at its last refresh.",
	}, []string{"root"})
	reg.MustRegister(g)
	return &Discovery{Env: ts.Env, tables: ts, roots: roots, count: g}, nil
}

// OnChange makes every refresh that adds or removes tables call changed with them, under the
// discovery's lock (so that the changes of two refreshes never cross).
func (c *Discovery) OnChange(changed func(ctx context.Context, added []*Table, removed []string, now time.Time)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changed = changed
}

// newRoots resolves the storage options of the discover roots (their secrets given to the
// redactor); it lists none.
func newRoots(ts *Set, getenv func(string) string) (map[string]*discoverRoot, error) {
	roots := map[string]*discoverRoot{}
	for i := range ts.cfg.Discover {
		d := &ts.cfg.Discover[i]
		root := d.Table(d.ID, d.Root)
		o, err := ts.cfg.ResolveStorageOptions(&root, getenv)
		if err != nil {
			return nil, fmt.Errorf("discover %s: %w", d.ID, err)
		}
		ts.redactOptions(o)
		ts.Red.AddURI(d.Root)
		roots[d.ID] = &discoverRoot{cfg: d, opts: o, getenv: getenv}
	}
	return roots, nil
}

// openRoot opens the store of a discover root, through its store's rate limit.
func (c *Discovery) openRoot(ctx context.Context, d *discoverRoot) (storage.Store, error) {
	if wrap := c.tables.transport(d.cfg.Root); wrap != nil {
		return location.OpenTransport(ctx, d.cfg.Root, d.opts, wrap)
	}
	return location.Open(ctx, d.cfg.Root, d.opts)
}

// Refresh lists again each discover root whose refresh is due at now. A root that cannot be
// listed keeps the tables it had.
func (c *Discovery) Refresh(ctx context.Context, now time.Time) {
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
		if err := c.Discover(ctx, id, now); err != nil {
			c.Log.Warn("discovery failed; the tables found before are kept", "root", id, "error", c.Red.String(err.Error()))
		}
	}
}

// Discover lists the discover root id now and updates the tables.
func (c *Discovery) Discover(ctx context.Context, id string, now time.Time) error {
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
	found := map[string]*Table{}
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
	if c.changed != nil && len(added)+len(removed) > 0 {
		c.changed(ctx, added, removed, now)
	}
	d.found = kept
	c.count.WithLabelValues(id).Set(float64(len(kept)))
	if len(added)+len(removed) > 0 {
		c.Log.Info("discovery", "root", id, "tables", len(kept), "added", len(added), "removed", len(removed))
	}
	return nil
}

// RefreshAt lists again, now, each discover root at the location root (compared as
// config.LocationKey compares) that was last listed at least minAge ago, and reports whether
// it listed one: a Fabric job that names a table made since the root's last refresh finds it,
// and a stream of such jobs lists the root at most once per minAge.
func (c *Discovery) RefreshAt(ctx context.Context, root string, now time.Time, minAge time.Duration) bool {
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
		if err := c.Discover(ctx, id, now); err != nil {
			c.Log.Warn("discovery failed; the tables found before are kept", "root", id, "error", c.Red.String(err.Error()))
		}
		listed = true
	}
	return listed
}

package service

import (
	"context"
	"fmt"
	"github.com/deltavacuum/deltavacuum/session"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/catalog"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/storage/location"
)

// ops is the operations side of the server: rate limits, the failure webhook, the purge of
// trash past the undo window, the rule for stale run records, and discovered tables.
type ops struct {
	limiters   []*limiter
	hook       *webhook
	staleAfter time.Duration
	// discovery is the state of each discover root (by its id); guarded by Server.mu.
	discovery map[string]*discovery
	// purged is when each table's trash was last purged; guarded by Server.mu.
	purged map[string]time.Time
	m      *opsMetrics
}

// newTable makes a configured (or discovered) table ready to open: its storage options from
// the environment (their secrets known to the redactor), its session and catalog.
func (s *Server) newTable(tc *config.Table, getenv func(string) string) (*table, error) {
	o, err := s.cfg.ResolveStorageOptions(tc, getenv)
	if err != nil {
		return nil, err
	}
	s.redactOptions(o)
	settings := map[string]string{}
	if !tc.Policy.RetentionCheck {
		settings[session.SettingRetentionCheck] = "false"
	}
	cat := &catalog.Catalog{Warehouse: tc.Warehouse, IsTable: session.IsTable(o)}
	s.red.AddURI(tc.Path)
	s.red.AddURI(tc.Warehouse)
	if tc.Catalog != "" {
		cf, err := catalog.LoadFile(tc.Catalog)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", tc.ID, err)
		}
		cat.Tables = cf.Tables
		if cat.Warehouse == "" {
			cat.Warehouse = cf.Warehouse
		}
		for _, loc := range cf.Tables {
			s.red.AddURI(loc)
		}
	}
	sess, err := session.NewSession(session.Config{Catalog: cat, Settings: settings, Now: s.now, StorageOptions: o})
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", tc.ID, err)
	}
	return &table{cfg: tc, session: sess, opts: o, cat: cat}, nil
}

// setupOps builds the rate limits and the webhook, and checks the discover roots' options.
func (s *Server) setupOps(getenv func(string) string) error {
	s.ops.m = newOpsMetrics(s.reg)
	s.ops.staleAfter = s.cfg.StaleRunAfter
	if s.ops.staleAfter <= 0 {
		s.ops.staleAfter = config.DefaultStaleRunAfter
	}
	for _, st := range s.cfg.Stores {
		l, err := newLimiter(st)
		if err != nil {
			return err
		}
		s.ops.limiters = append(s.ops.limiters, l)
	}
	if w := s.cfg.Webhook; w != nil {
		h, err := newWebhook(w, getenv, s.red)
		if err != nil {
			return err
		}
		s.ops.hook = h
	}
	s.ops.discovery = map[string]*discovery{}
	s.ops.purged = map[string]time.Time{}
	for i := range s.cfg.Discover {
		d := &s.cfg.Discover[i]
		root := d.Table(d.ID, d.Root)
		o, err := s.cfg.ResolveStorageOptions(&root, getenv)
		if err != nil {
			return fmt.Errorf("discover %s: %w", d.ID, err)
		}
		s.redactOptions(o)
		s.red.AddURI(d.Root)
		s.ops.discovery[d.ID] = &discovery{cfg: d, opts: o, getenv: getenv}
	}
	return nil
}

// openLimited opens the table, its requests through the rate limit of its store if one is
// configured.
func (s *Server) openLimited(ctx context.Context, t *table) (*deltavacuum.Table, error) {
	loc := t.cfg.Path
	if loc == "" {
		var err error
		if loc, err = t.cat.Resolve(ctx, strings.Split(t.cfg.Name, ".")); err != nil {
			return nil, err
		}
	}
	if l := limiterFor(s.ops.limiters, loc); l != nil {
		return deltavacuum.OpenTransport(ctx, loc, t.opts, l.wrap)
	}
	return deltavacuum.OpenWith(ctx, loc, t.opts)
}

// lookup returns the table of id (configured or discovered).
func (s *Server) lookup(id string) (*table, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.byID[id]
	return t, ok
}

// tableList returns the tables now (discovery may change the set).
func (s *Server) tableList() []*table {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*table(nil), s.tables...)
}

// redactOptions gives the redactor the secret values of o.
func (s *Server) redactOptions(o location.Options) {
	for k, v := range o.Redacted() {
		if v != o[k] {
			s.red.Add(o[k])
		}
	}
}

package service

import (
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum/service/config"
)

// ops is the operations side of the server: the failure webhook, the purge of
// trash past the undo window, the rule for stale run records, and discovered tables.
type ops struct {
	hook       *webhook
	staleAfter time.Duration
	// discovery is the state of each discover root (by its id); guarded by Server.mu.
	discovery map[string]*discovery
	// purged is when each table's trash was last purged; guarded by Server.mu.
	purged map[string]time.Time
	m      *opsMetrics
}

// setupOps builds the rate limits and the webhook, and checks the discover roots' options.
func (s *Server) setupOps(getenv func(string) string) error {
	s.ops.m = newOpsMetrics(s.reg)
	s.ops.staleAfter = s.cfg.StaleRunAfter
	if s.ops.staleAfter <= 0 {
		s.ops.staleAfter = config.DefaultStaleRunAfter
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
		s.tables.redactOptions(o)
		s.red.AddURI(d.Root)
		s.ops.discovery[d.ID] = &discovery{cfg: d, opts: o, getenv: getenv}
	}
	return nil
}

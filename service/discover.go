package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/location"
)

// discovery is the state of one discover root.
type discovery struct {
	cfg    *config.Discover
	opts   location.Options
	getenv func(string) string
	// last is when the root was last listed (zero: never); found the ids it had then.
	last  time.Time
	found map[string]bool
}

// FindTables returns the folders of store (keys ending in '/', or "" for the root itself)
// that are Delta tables: they hold _delta_log/ with a commit or a checkpoint. It does not
// descend into a table, nor into a folder whose name starts with '.' or '_' (hidden, as
// Delta hides them). One listing per folder, plus one of each candidate's _delta_log/.
func FindTables(ctx context.Context, store storage.Store) ([]string, error) {
	if ok, err := isTableAt(ctx, store, ""); err != nil || ok {
		if ok {
			return []string{""}, nil
		}
		return nil, err
	}
	var out []string
	err := store.Walk(ctx, "", func(o storage.Object) error {
		if !o.IsDir || o.Key == "" {
			return nil
		}
		if n := o.Name(); strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
			return storage.SkipDir
		}
		ok, err := isTableAt(ctx, store, o.Key)
		if err != nil {
			return err
		}
		if ok {
			out = append(out, o.Key)
			return storage.SkipDir
		}
		return nil
	})
	if errors.Is(err, storage.ErrNotExist) {
		return nil, fmt.Errorf("the root %s does not exist (or is not a folder): %w", store.Location(), err)
	}
	return out, err
}

var errFound = errors.New("found")

// isTableAt reports whether dir (a folder key) holds _delta_log/ with a commit or checkpoint.
func isTableAt(ctx context.Context, store storage.Store, dir string) (bool, error) {
	log := dir + "_delta_log/"
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

// maxIDLength is the length of a table id the configuration accepts.
const maxIDLength = 128

// DiscoveredID is the id of the table found at rel (a folder key below the root, "" for the
// root itself) of the discover root named root: root, then each folder name with every byte
// other than a lower-case letter, a digit or '-' written _XX (hex), joined by '.'. So ids
// are stable (the same folder always has the same id), distinct for distinct folders (the
// encoding can be read back; '.' only separates, '_' only escapes), and distinct even
// case-insensitively (no upper-case letter is left). An id longer than the limit is cut and
// ends with _z and a hash of the whole folder path (the encoding never writes _z).
func DiscoveredID(root, rel string) string {
	var b strings.Builder
	b.WriteString(root)
	rel = strings.TrimSuffix(rel, "/")
	if rel != "" {
		for _, seg := range strings.Split(rel, "/") {
			b.WriteByte('.')
			for i := 0; i < len(seg); i++ {
				c := seg[i]
				if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' {
					b.WriteByte(c)
				} else {
					fmt.Fprintf(&b, "_%02x", c)
				}
			}
		}
	}
	id := b.String()
	if len(id) <= maxIDLength {
		return id
	}
	sum := sha256.Sum256([]byte(rel))
	cut := id[:maxIDLength-19]
	// Never cut an escape in two: a cut _X would read as another byte.
	if i := strings.LastIndexByte(cut, '_'); i >= 0 && i > len(cut)-3 {
		cut = cut[:i]
	}
	return cut + "_z" + hex.EncodeToString(sum[:8])
}

// tableLocation is the location of the folder rel below root (a path or a URI).
func tableLocation(root, rel string) string {
	rel = strings.TrimSuffix(rel, "/")
	if rel == "" {
		return root
	}
	if kind, _ := location.Kind(root); kind == "local" && !strings.HasPrefix(root, "file:") {
		return strings.TrimSuffix(root, "/") + "/" + rel
	}
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.TrimSuffix(root, "/") + "/" + strings.Join(segs, "/")
}

// openRoot opens the store of a discover root, through its store's rate limit.
func (s *Server) openRoot(ctx context.Context, d *discovery) (storage.Store, error) {
	if l := limiterFor(s.tables.limiters, d.cfg.Root); l != nil {
		return location.OpenTransport(ctx, d.cfg.Root, d.opts, l.wrap)
	}
	return location.Open(ctx, d.cfg.Root, d.opts)
}

// refreshDiscovery lists again each discover root whose refresh is due at now: tables found
// are added (and scheduled), tables gone are no longer scheduled nor listed (a run of one
// in progress goes on). A root that cannot be listed keeps the tables it had.
func (s *Server) refreshDiscovery(ctx context.Context, now time.Time) {
	ids := make([]string, 0, len(s.ops.discovery))
	for id := range s.ops.discovery {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		d := s.ops.discovery[id]
		s.mu.Lock()
		due := d.last.IsZero() || !now.Before(d.last.Add(d.cfg.Refresh))
		s.mu.Unlock()
		if !due {
			continue
		}
		if err := s.Discover(ctx, id, now); err != nil {
			s.log.Warn("discovery failed; the tables found before are kept", "root", id, "error", s.red.String(err.Error()))
		}
	}
}

// Discover lists the discover root id now and updates the tables.
func (s *Server) Discover(ctx context.Context, id string, now time.Time) error {
	d, ok := s.ops.discovery[id]
	if !ok {
		return fmt.Errorf("no discover root %q in the configuration", id)
	}
	s.mu.Lock()
	d.last = now
	s.mu.Unlock()
	store, err := s.openRoot(ctx, d)
	if err != nil {
		return err
	}
	rels, err := FindTables(ctx, store)
	if err != nil {
		return err
	}
	saved, err := s.st.Schedules(ctx)
	if err != nil {
		return err
	}
	found := map[string]*table{}
	var order []string // the listing's order, so the tables are listed in it
	for _, rel := range rels {
		tid := DiscoveredID(d.cfg.ID, rel)
		tc := d.cfg.Table(tid, tableLocation(d.cfg.Root, rel))
		t, err := s.tables.newTable(&tc, d.getenv)
		if err != nil {
			return err
		}
		found[tid] = t
		order = append(order, tid)
	}
	s.mu.Lock()
	prev := d.found
	s.mu.Unlock()
	kept, added, removed := s.tables.refound(id, prev, found, order)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sched != nil {
		for _, t := range added {
			if t.cfg.Schedule == nil || t.cfg.DryRunOnly {
				continue
			}
			h := saved[t.cfg.ID].Handled
			if h.IsZero() {
				h = now
			}
			if err := s.sched.Add(scheduleTable(t.cfg), h); err != nil {
				s.log.Error("scheduling a discovered table", "table", t.cfg.ID, "error", err.Error())
			}
		}
		for _, tid := range removed {
			s.sched.Remove(tid)
		}
	}
	d.found = kept
	s.ops.m.discovered.WithLabelValues(id).Set(float64(len(kept)))
	if len(added)+len(removed) > 0 {
		s.log.Info("discovery", "root", id, "tables", len(kept), "added", len(added), "removed", len(removed))
	}
	return nil
}

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
	if l := limiterFor(s.ops.limiters, d.cfg.Root); l != nil {
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
		t, err := s.newTable(&tc, d.getenv)
		if err != nil {
			return err
		}
		found[tid] = t
		order = append(order, tid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The locations the other tables (configured, or found under another root) have: a found
	// table at one of them is that table under a second id, which the service would not hold
	// as one (two runs at once, or the root's policy over the configured one).
	taken := map[string]string{}
	for _, t := range s.tables {
		if !d.found[t.cfg.ID] && t.cfg.Path != "" {
			taken[config.LocationKey(t.cfg.Path)] = t.cfg.ID
		}
	}
	added, removed := 0, 0
	for _, tid := range order {
		t := found[tid]
		if old, ok := s.byID[tid]; ok {
			if !d.found[tid] {
				// A configured table, or one of another root, has the id.
				s.log.Warn("a discovered table has the id of another table; it is left out", "root", id, "table", tid, "location", old.cfg.Path)
				delete(found, tid)
			}
			continue
		}
		if other, ok := taken[config.LocationKey(t.cfg.Path)]; ok {
			s.log.Warn("a discovered table is another table of the configuration (the same location); it is left out", "root", id, "table", tid, "other", other, "location", t.cfg.Path)
			delete(found, tid)
			continue
		}
		if dup := s.idTakenFold(tid); dup != "" {
			s.log.Warn("a discovered table has the id of another table (case aside); it is left out", "root", id, "table", tid, "other", dup)
			delete(found, tid)
			continue
		}
		s.tables = append(s.tables, t)
		s.byID[tid] = t
		added++
		if s.sched != nil && t.cfg.Schedule != nil && !t.cfg.DryRunOnly {
			h := saved[tid].Handled
			if h.IsZero() {
				h = now
			}
			if err := s.sched.Add(scheduleTable(t.cfg), h); err != nil {
				s.log.Error("scheduling a discovered table", "table", tid, "error", err.Error())
			}
		}
	}
	for tid := range d.found {
		if _, ok := found[tid]; ok {
			continue
		}
		delete(s.byID, tid)
		for i, t := range s.tables {
			if t.cfg.ID == tid {
				s.tables = append(s.tables[:i:i], s.tables[i+1:]...)
				break
			}
		}
		if s.sched != nil {
			s.sched.Remove(tid)
		}
		removed++
	}
	d.found = map[string]bool{}
	for tid := range found {
		d.found[tid] = true
	}
	s.ops.m.discovered.WithLabelValues(id).Set(float64(len(found)))
	if added+removed > 0 {
		s.log.Info("discovery", "root", id, "tables", len(found), "added", added, "removed", removed)
	}
	return nil
}

// idTakenFold returns the id of a table whose id equals id case-insensitively (s.mu held).
func (s *Server) idTakenFold(id string) string {
	for other := range s.byID {
		if strings.EqualFold(other, id) {
			return other
		}
	}
	return ""
}

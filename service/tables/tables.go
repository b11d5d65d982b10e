package tables

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/catalog"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/session"
	"github.com/deltavacuum/deltavacuum/sql"
	"github.com/deltavacuum/deltavacuum/storage/location"
)

// Set is the tables of the service, configured and discovered, each with its SQL session. A
// table is opened only through its session (session.Session.OpenRef, as the CLI and SQL
// statements open theirs), whose transport is the requests-per-second limit of its store.
type Set struct {
	*Env
	cfg      *config.Config
	limiters []*limiter // the stores' limits (config.Store), longest prefix first to none

	mu sync.Mutex
	// openHook, when set (by tests, SetOpenHook), opens the tables instead of their sessions.
	openHook func(context.Context, *Table) (*deltavacuum.Table, error)
	list     []*Table // the configuration's order, then discovery's
	byID     map[string]*Table
}

// Table is a configured (or discovered) table, ready to open.
type Table struct {
	Cfg     *config.Table
	Session *session.Session
	ref     sql.TableRef // its path, or its name for the session's warehouse or catalog
}

// New sets up the configured tables and the stores' limits: the storage options of each from
// the environment (their secrets given to the redactor). It opens no table.
func New(env *Env, cfg *config.Config, getenv func(string) string) (*Set, error) {
	ts := &Set{Env: env, cfg: cfg, byID: map[string]*Table{}}
	for i := range cfg.Tables {
		t, err := ts.newTable(&cfg.Tables[i], getenv)
		if err != nil {
			return nil, err
		}
		ts.list = append(ts.list, t)
		ts.byID[t.Cfg.ID] = t
	}
	for _, st := range cfg.Stores {
		l, err := newLimiter(st)
		if err != nil {
			return nil, err
		}
		ts.limiters = append(ts.limiters, l)
	}
	return ts, nil
}

// Config is the service's configuration.
func (ts *Set) Config() *config.Config { return ts.cfg }

// newTable makes a configured (or discovered) table ready to open: its storage options from
// the environment (their secrets known to the redactor), its session and catalog.
func (ts *Set) newTable(tc *config.Table, getenv func(string) string) (*Table, error) {
	o, err := ts.cfg.ResolveStorageOptions(tc, getenv)
	if err != nil {
		return nil, err
	}
	ts.redactOptions(o)
	settings := map[string]string{}
	if !tc.Policy.RetentionCheck {
		settings[session.SettingRetentionCheck] = "false"
	}
	cat := &catalog.Catalog{Warehouse: tc.Warehouse, IsTable: session.IsTable(o), Dirs: session.DirsOf(o)}
	ts.Red.AddURI(tc.Path)
	ts.Red.AddURI(tc.Warehouse)
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
			ts.Red.AddURI(loc)
		}
	}
	sess, err := session.NewSession(session.Config{Catalog: cat, Settings: settings, Now: ts.Now, StorageOptions: o,
		Transport: ts.transport})
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", tc.ID, err)
	}
	ref := sql.TableRef{Path: tc.Path}
	if tc.Path == "" {
		ref = sql.TableRef{Name: strings.Split(tc.Name, ".")}
	}
	return &Table{Cfg: tc, Session: sess, ref: ref}, nil
}

// Open opens table t: by path, or by name through its warehouse or catalog.
func (ts *Set) Open(ctx context.Context, t *Table) (*deltavacuum.Table, error) {
	ts.mu.Lock()
	hook := ts.openHook
	ts.mu.Unlock()
	if hook != nil {
		return hook(ctx, t)
	}
	return t.Open(ctx)
}

// SetOpenHook makes Open call hook instead of opening a table through its session (tests:
// a store that fails, waits or counts); nil opens through the session again.
func (ts *Set) SetOpenHook(hook func(context.Context, *Table) (*deltavacuum.Table, error)) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.openHook = hook
}

// Open opens the table through its session, whatever hook its Set has. A folder that does not
// exist is said in the service's words: the library's speak of the command line
// (--warehouse, --catalog).
func (t *Table) Open(ctx context.Context) (*deltavacuum.Table, error) {
	dt, err := t.Session.OpenRef(ctx, t.ref)
	var ne *deltavacuum.NotExistError
	if errors.As(err, &ne) {
		return nil, &folderGoneError{table: t.Cfg.ID, err: ne}
	}
	return dt, err
}

// folderGoneError is the refusal of a table whose folder does not exist. It matches what the
// library's NotExistError matches (fs.ErrNotExist, deltalog.ErrNotDeltaTable).
type folderGoneError struct {
	table string
	err   *deltavacuum.NotExistError
}

func (e *folderGoneError) Error() string {
	return "the folder of table " + e.table + " does not exist: check its path in the service's configuration (or the discovery root that found it)"
}

func (e *folderGoneError) Unwrap() error { return e.err }

// Lookup returns the table of id (configured or discovered).
func (ts *Set) Lookup(id string) (*Table, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.byID[id]
	return t, ok
}

// All returns the tables now (discovery may change the set).
func (ts *Set) All() []*Table {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]*Table(nil), ts.list...)
}

// redactOptions gives the redactor the secret values of o.
func (ts *Set) redactOptions(o location.Options) {
	for k, v := range o.Redacted() {
		if v != o[k] {
			ts.Red.Add(o[k])
		}
	}
}

// refound replaces the tables a discover root found before (prev) with those it finds now
// (found, by id, in the listing's order): a found table whose id another table has
// (configured, or of another root; case aside too), or whose location another has, is left
// out and logged. It returns the ids the root now has, the tables added and the ids removed.
func (ts *Set) refound(root string, prev map[string]bool, found map[string]*Table, order []string) (now map[string]bool, added []*Table, removed []string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	// The locations the other tables (configured, or found under another root) have: a found
	// table at one of them is that table under a second id, which the service would not hold
	// as one (two runs at once, or the root's policy over the configured one).
	taken := map[string]string{}
	for _, t := range ts.list {
		if !prev[t.Cfg.ID] && t.Cfg.Path != "" {
			taken[config.LocationKey(t.Cfg.Path)] = t.Cfg.ID
		}
	}
	for _, tid := range order {
		t := found[tid]
		if old, ok := ts.byID[tid]; ok {
			if !prev[tid] {
				// A configured table, or one of another root, has the id.
				ts.Log.Warn("a discovered table has the id of another table; it is left out", "root", root, "table", tid, "location", old.Cfg.Path)
				delete(found, tid)
			}
			continue
		}
		if other, ok := taken[config.LocationKey(t.Cfg.Path)]; ok {
			ts.Log.Warn("a discovered table is another table of the configuration (the same location); it is left out", "root", root, "table", tid, "other", other, "location", t.Cfg.Path)
			delete(found, tid)
			continue
		}
		if dup := ts.idTakenFold(tid); dup != "" {
			ts.Log.Warn("a discovered table has the id of another table (case aside); it is left out", "root", root, "table", tid, "other", dup)
			delete(found, tid)
			continue
		}
		ts.list = append(ts.list, t)
		ts.byID[tid] = t
		added = append(added, t)
	}
	for tid := range prev {
		if _, ok := found[tid]; ok {
			continue
		}
		delete(ts.byID, tid)
		for i, t := range ts.list {
			if t.Cfg.ID == tid {
				ts.list = append(ts.list[:i:i], ts.list[i+1:]...)
				break
			}
		}
		removed = append(removed, tid)
	}
	now = map[string]bool{}
	for tid := range found {
		now[tid] = true
	}
	return now, added, removed
}

// idTakenFold returns the id of a table whose id equals id case-insensitively (ts.mu held).
func (ts *Set) idTakenFold(id string) string {
	for other := range ts.byID {
		if strings.EqualFold(other, id) {
			return other
		}
	}
	return ""
}

package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/deltavacuum/deltavacuum"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/catalog"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/internal/redact"
	"github.com/deltavacuum/deltavacuum/inventory"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/sql"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Session settings this program honours.
const (
	SettingRetentionCheck = vacuum.RetentionCheckKey
	SettingLogging        = "spark.databricks.delta.vacuum.logging.enabled"
	SettingLite           = "spark.databricks.delta.vacuum.lite.enabled"
)

// KnownSettings are the session settings this program honours.
var KnownSettings = []string{SettingRetentionCheck, SettingLogging, SettingLite}

// ErrNotSupported is returned (wrapped) for statements or clauses this version parses but does
// not run.
var ErrNotSupported = errors.New("not supported by this version of deltavacuum")

// Config configures a session.
type Config struct {
	// Catalog resolves table names; nil resolves none.
	Catalog *catalog.Catalog
	// Settings are the initial session settings (such as --conf KEY=VALUE).
	Settings map[string]string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// StorageOptions configure object stores (--storage-option KEY=VALUE).
	StorageOptions location.Options
	// Transport, when set, gives the wrapper of every HTTP request of the store of the table at
	// a location (nil: none); the maintenance service passes its requests-per-second limits.
	Transport func(loc string) func(http.RoundTripper) http.RoundTripper
}

// Session runs statements with session settings, as a notebook's Spark session does.
type Session struct {
	cfg      Config
	settings map[string]string
}

// NewSession returns a session. Settings are validated as SET validates them.
func NewSession(cfg Config) (*Session, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Session{cfg: cfg, settings: map[string]string{}}
	for k, v := range cfg.Settings {
		if _, err := s.set(k, v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Result is what one statement did. Exactly the fields of its kind are set.
type Result struct {
	Statement string   `json:"statement"`
	Kind      string   `json:"kind"`
	Warnings  []string `json:"warnings,omitempty"`
	// Table is the location of the table the statement worked on.
	Table      string                  `json:"table,omitempty"`
	Vacuum     *vacuum.Result          `json:"vacuum,omitempty"`
	Settings   map[string]string       `json:"settings,omitempty"`
	Properties map[string]string       `json:"properties,omitempty"`
	History    []deltalog.HistoryEntry `json:"history,omitempty"`
	Detail     *deltalog.Detail        `json:"detail,omitempty"`
	// Reclaimable is what DESCRIBE DETAIL adds to Spark's columns: what a VACUUM at the
	// table's retention, run now, deletes (its DRY RUN).
	Reclaimable *DetailReclaimable `json:"reclaimable,omitempty"`
	// Inspect and Explain are the results of INSPECT and EXPLAIN VACUUM.
	Inspect *insight.Report    `json:"inspect,omitempty"`
	Explain *insight.Explained `json:"explain,omitempty"`
	// Version is the version an ALTER TABLE wrote.
	Version *int64 `json:"version,omitempty"`
	// Tables are the tables SHOW TABLES lists ([] when it lists none).
	Tables []ListedTable `json:"tables,omitzero"`
}

// Setting returns a session setting and whether it is set.
func (s *Session) Setting(key string) (string, bool) {
	v, ok := s.settings[key]
	return v, ok
}

func (s *Session) boolSetting(key string, def bool) bool {
	if v, ok := s.settings[key]; ok {
		b, _ := strconv.ParseBool(v)
		return b
	}
	return def
}

// set validates and stores a setting; an unknown key is stored with a warning.
func (s *Session) set(key, value string) (warning string, err error) {
	known := false
	for _, k := range KnownSettings {
		if strings.EqualFold(k, key) {
			key, known = k, true
		}
	}
	if !known {
		s.settings[key] = value
		return fmt.Sprintf("setting %s is not used by deltavacuum and has no effect (honoured: %s)", key, strings.Join(KnownSettings, ", ")), nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return "", fmt.Errorf("setting %s: %q is not true or false", key, value)
	}
	s.settings[key] = strconv.FormatBool(b)
	return "", nil
}

// ExecScript parses and runs a script of statements separated by ';'. It stops at the first
// failing statement and returns the results of those before it.
func (s *Session) ExecScript(ctx context.Context, script string) ([]*Result, error) {
	stmts, err := sql.ParseScript(script)
	if err != nil {
		return nil, err
	}
	var out []*Result
	for _, st := range stmts {
		r, err := s.Exec(ctx, st)
		if r != nil {
			out = append(out, r)
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", st.String(), err)
		}
	}
	return out, nil
}

// Exec runs one statement.
func (s *Session) Exec(ctx context.Context, st sql.Statement) (*Result, error) {
	r := &Result{Statement: st.String(), Kind: kindOf(st)}
	switch st := st.(type) {
	case *sql.Set:
		return s.execSet(st, r)
	case *sql.Reset:
		if st.Key == "" {
			s.settings = map[string]string{}
		} else {
			delete(s.settings, canonicalKey(st.Key))
		}
		return r, nil
	case *sql.Vacuum:
		return s.execVacuum(ctx, st, r)
	case *sql.Inspect, *sql.ExplainVacuum:
		return s.execInsight(ctx, st, r)
	case *sql.ShowTables:
		return s.execShowTables(ctx, st, r)
	}
	ref, ok := tableOf(st)
	if !ok {
		return nil, fmt.Errorf("%w: %T", ErrNotSupported, st)
	}
	t, err := s.OpenRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	r.Table = t.Location
	commit := deltalog.CommitOptions{Now: s.cfg.Now}
	switch st := st.(type) {
	case *sql.AlterTableSetProperties:
		props := make([]deltalog.Property, len(st.Properties))
		for i, p := range st.Properties {
			props[i] = deltalog.Property{Key: p.Key, Value: p.Value}
			if strings.EqualFold(p.Key, deltalog.PropDeletedFileRetention) {
				if d, err := deltalog.ParseInterval(p.Value); err == nil {
					if n := vacuum.RetentionNote(p.Key+" = '"+p.Value+"'", d); n != "" {
						r.Warnings = append(r.Warnings, n)
					}
				}
			}
		}
		v, err := deltalog.SetProperties(ctx, t.Store, props, commit)
		if err != nil {
			return nil, err
		}
		r.Version = &v
	case *sql.AlterTableUnsetProperties:
		v, err := deltalog.UnsetProperties(ctx, t.Store, st.Keys, st.IfExists, commit)
		if err != nil {
			return nil, err
		}
		r.Version = &v
	case *sql.DescribeHistory:
		limit := 0
		if st.Limit != nil {
			limit = *st.Limit
		}
		if r.History, err = deltalog.History(ctx, t.Store, limit); err != nil {
			return nil, err
		}
	case *sql.ShowTblProperties, *sql.DescribeDetail:
		snap, err := t.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		if _, ok := st.(*sql.DescribeDetail); ok {
			if r.Detail, err = snap.Detail(ctx, t.Store); err != nil {
				return nil, err
			}
			props := make(map[string]string, len(r.Detail.Properties)) // not the snapshot's own map
			for k, v := range r.Detail.Properties {
				props[k] = shown(k, v)
			}
			r.Detail.Properties = props
			r.Reclaimable, err = s.detailReclaimable(ctx, t)
			if err != nil {
				r.Warnings = append(r.Warnings, fmt.Sprintf("the reclaimable figures of %s are not shown: %v", t.Location, err))
			}
			break
		}
		key := st.(*sql.ShowTblProperties).Key
		r.Properties = map[string]string{}
		for k, v := range snap.Metadata.Configuration {
			if key == "" || key == k {
				r.Properties[k] = shown(k, v)
			}
		}
		if key != "" && len(r.Properties) == 0 {
			r.Properties[key] = fmt.Sprintf("Table %s does not have property: %s", t.Location, key)
		}
	}
	return r, nil
}

// kindOf names a statement's kind for results.
func kindOf(st sql.Statement) string {
	switch st.(type) {
	case *sql.Vacuum:
		return "VACUUM"
	case *sql.Set:
		return "SET"
	case *sql.Reset:
		return "RESET"
	case *sql.AlterTableSetProperties:
		return "ALTER TABLE SET TBLPROPERTIES"
	case *sql.AlterTableUnsetProperties:
		return "ALTER TABLE UNSET TBLPROPERTIES"
	case *sql.ShowTblProperties:
		return "SHOW TBLPROPERTIES"
	case *sql.ShowTables:
		return "SHOW TABLES"
	case *sql.DescribeHistory:
		return "DESCRIBE HISTORY"
	case *sql.DescribeDetail:
		return "DESCRIBE DETAIL"
	case *sql.Inspect:
		return "INSPECT"
	case *sql.ExplainVacuum:
		return "EXPLAIN VACUUM"
	}
	return fmt.Sprintf("%T", st)
}

// tableOf returns the table a table statement names.
func tableOf(st sql.Statement) (sql.TableRef, bool) {
	switch st := st.(type) {
	case *sql.AlterTableSetProperties:
		return st.Table, true
	case *sql.AlterTableUnsetProperties:
		return st.Table, true
	case *sql.ShowTblProperties:
		return st.Table, true
	case *sql.DescribeHistory:
		return st.Table, true
	case *sql.DescribeDetail:
		return st.Table, true
	case *sql.Inspect:
		return st.Table, true
	case *sql.ExplainVacuum:
		return st.Table, true
	}
	return sql.TableRef{}, false
}

// execSet runs SET. As in Spark, the value of a sensitive key (redact.SensitiveKey:
// fs.azure.account.key.…, …secret…, …token…) is shown as redact.Mask, in the result and in
// its statement text.
func (s *Session) execSet(st *sql.Set, r *Result) (*Result, error) {
	switch {
	case st.Key == "":
		r.Settings = s.all()
		for k, v := range r.Settings {
			r.Settings[k] = shown(k, v)
		}
	case st.Value == nil:
		r.Settings = map[string]string{}
		if v, ok := s.settings[canonicalKey(st.Key)]; ok {
			r.Settings[st.Key] = shown(st.Key, v)
		} else {
			r.Settings[st.Key] = "<undefined>"
		}
	default:
		if redact.SensitiveKey(st.Key) {
			masked := redact.Mask
			r.Statement = (&sql.Set{Key: st.Key, Value: &masked}).String()
		}
		w, err := s.set(st.Key, *st.Value)
		if err != nil {
			return nil, err
		}
		if w != "" {
			r.Warnings = append(r.Warnings, w)
		}
		r.Settings = map[string]string{st.Key: shown(st.Key, s.settings[canonicalKey(st.Key)])}
	}
	return r, nil
}

// shown is the value of a setting or table property as SET, SHOW TBLPROPERTIES and DESCRIBE
// DETAIL show it: redact.Mask for a sensitive key.
func shown(key, value string) string {
	if redact.SensitiveKey(key) {
		return redact.Mask
	}
	return value
}

func canonicalKey(key string) string {
	for _, k := range KnownSettings {
		if strings.EqualFold(k, key) {
			return k
		}
	}
	return key
}

func (s *Session) all() map[string]string {
	out := map[string]string{}
	for k, v := range s.settings {
		out[k] = v
	}
	return out
}

// VacuumRequest is a VACUUM as the SQL statement and the command line express it: the one
// request type (run.Request: Mode "" takes the session default, LITE when
// spark.databricks.delta.vacuum.lite.enabled is true), with the inventory as the statement
// names it, which the session opens. The session sets the retention check, the logging and the
// clock from its settings.
type VacuumRequest struct {
	run.Request
	Inventory *sql.Inventory
	// InventoryFormat is the format of a plain inventory source (auto, delta, parquet, csv,
	// azure, s3); a format written in the statement (parquet.`path`) wins.
	InventoryFormat string
}

func (s *Session) execVacuum(ctx context.Context, st *sql.Vacuum, r *Result) (*Result, error) {
	req := VacuumRequest{Inventory: st.Inventory}
	req.Mode, req.DryRun = vacuum.Mode(st.Mode), st.DryRun
	if st.Retain != nil {
		h := st.Retain.Float
		req.RetainHours = &h
	}
	t, err := s.OpenRef(ctx, st.Table)
	if err != nil {
		return nil, err
	}
	r.Table = t.Location
	res, err := s.Vacuum(ctx, t, req)
	r.Vacuum = res
	return r, err
}

// Vacuum runs a VACUUM of t with the session's settings. The request is validated before the
// inventory is opened or the table read (run.Request.Validate); a real run is Start, then the
// run's Vacuum.
func (s *Session) Vacuum(ctx context.Context, t *deltavacuum.Table, req VacuumRequest) (*vacuum.Result, error) {
	opts, closeInv, err := s.prepare(ctx, t, req)
	if err != nil {
		return nil, err
	}
	defer closeInv()
	if opts.DryRun {
		return t.Vacuum(ctx, opts)
	}
	r, err := t.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	return r.Vacuum(ctx)
}

// Started is a real VACUUM started with a session's settings: it holds the table's lock.
type Started struct {
	run      *deltavacuum.VacuumRun
	closeInv func()
}

// ID is the run's record id ("" when it keeps none).
func (st *Started) ID() string { return st.run.ID() }

// TakenOver are the lock tickets of dead processes the run deleted to take the table.
func (st *Started) TakenOver() []run.Holding { return st.run.TakenOver() }

// Vacuum does the run's work and ends it (the table's lock released, the inventory closed).
func (st *Started) Vacuum(ctx context.Context) (*vacuum.Result, error) {
	defer st.closeInv()
	return st.run.Vacuum(ctx)
}

// Close ends a run that was started and will not be run; its lock is released and the table
// left as it was found.
func (st *Started) Close(ctx context.Context) error {
	defer st.closeInv()
	return st.run.Close(ctx)
}

// Start prepares a real VACUUM of t with the session's settings and starts it (run.Start): the
// request is validated, the table checked, its lock taken. A refusal writes nothing. The
// service starts a run this way, so that it answers at once when the table is held.
func (s *Session) Start(ctx context.Context, t *deltavacuum.Table, req VacuumRequest) (*Started, error) {
	if req.DryRun {
		return nil, fmt.Errorf("%s: a DRY RUN is not started: it takes no lock and writes nothing", t.Location)
	}
	opts, closeInv, err := s.prepare(ctx, t, req)
	if err != nil {
		return nil, err
	}
	r, err := t.Start(ctx, opts)
	if err != nil {
		closeInv()
		return nil, err
	}
	return &Started{run: r, closeInv: closeInv}, nil
}

// prepare is req with the session's settings, validated, its inventory opened (closeInv closes
// it, and its temporary file if it spilled).
func (s *Session) prepare(ctx context.Context, t *deltavacuum.Table, req VacuumRequest) (opts run.Request, closeInv func(), err error) {
	opts = req.Request
	opts.Mode = vacuum.Mode(strings.ToUpper(string(opts.Mode)))
	if opts.Mode == "" && s.boolSetting(SettingLite, false) {
		opts.Mode = vacuum.ModeLite
	}
	opts.DisableRetentionCheck = !s.boolSetting(SettingRetentionCheck, true)
	if opts.Clock == nil {
		opts.Clock = s.cfg.Now
	}
	if v, ok := s.settings[SettingLogging]; ok {
		b, _ := strconv.ParseBool(v)
		opts.Logging = &b
	}
	if opts.Exec.Counters == nil {
		opts.Exec.Counters = opts.Counters
	}
	check := opts
	if req.Inventory != nil {
		check.Inventory = unopenedInventory{}
	}
	if err := check.Validate(); err != nil {
		return opts, nil, fmt.Errorf("%s: %w", t.Location, err)
	}
	if opts.Discover.Open == nil {
		opts.Discover.Open = s.openStore
	}
	if opts.Discover.Siblings == nil {
		// A shallow clone among the warehouse's tables names files of this one.
		if opts.Discover.Siblings, err = s.WarehouseTables(ctx); err != nil {
			return opts, nil, fmt.Errorf("%s: looking for shallow clones of the table in the warehouse: %w", t.Location, err)
		}
	}
	closeInv = func() {}
	if req.Inventory != nil {
		listing, err := s.openInventory(ctx, t, req.Inventory, req.InventoryFormat)
		if err != nil {
			return opts, nil, err
		}
		closeInv = func() { listing.Close() }
		opts.Inventory = listing
	}
	return opts, closeInv, nil
}

// unopenedInventory stands for an inventory a statement names, while the request is validated
// before the inventory is opened: it is never walked.
type unopenedInventory struct{}

func (unopenedInventory) Walk(context.Context, string, func(storage.Object) error) error {
	return errors.New("the inventory is not open yet")
}

// CheckRetention is the refusal Vacuum would end a run of snap at retainHours with, under the
// session's settings (the safety check, unless retentionDurationCheck is off), found before
// the run: vacuum.CheckRetention.
func (s *Session) CheckRetention(snap *deltalog.Snapshot, retainHours *float64) error {
	return vacuum.CheckRetention(snap, vacuum.Options{RetainHours: retainHours, DisableRetentionCheck: !s.boolSetting(SettingRetentionCheck, true)})
}

// openInventory opens the inventory of a statement as the listing of table t.
func (s *Session) openInventory(ctx context.Context, t *deltavacuum.Table, inv *sql.Inventory, format string) (*inventory.Listing, error) {
	src, err := s.inventorySource(ctx, inv, format)
	if err != nil {
		return nil, err
	}
	listing, err := inventory.Open(ctx, src, t.Location, inventory.Options{Open: func(ctx context.Context, loc string) (storage.Store, error) {
		return location.Open(ctx, loc, s.cfg.StorageOptions)
	}})
	if err != nil {
		return nil, err
	}
	if listing.Rows() > 0 && listing.Ignored() == listing.Rows() {
		listing.Close()
		return nil, fmt.Errorf("inventory %s: none of its %d rows lies inside the table %s; check that the inventory is of this table's storage (paths must be fully qualified URIs such as %s/part-0.parquet)",
			listing.Inventory(), listing.Rows(), t.Location, t.Location)
	}
	return listing, nil
}

// inventorySource turns the inventory of a statement into a source: a path (with its format),
// a name the catalog resolves (a Delta table), or a query over one of those.
func (s *Session) inventorySource(ctx context.Context, inv *sql.Inventory, format string) (inventory.Source, error) {
	ref := inv.Table
	var src inventory.Source
	if inv.Query != nil {
		src.Query, ref = inv.Query, &inv.Query.From
	}
	if ref.IsPath() {
		src.Location = ref.Path
		f := ref.Format
		if f == "" {
			f = format
		}
		var err error
		if src.Format, err = inventory.ParseFormat(f); err != nil {
			return src, err
		}
		return src, nil
	}
	c := s.cfg.Catalog
	if c == nil {
		c = &catalog.Catalog{}
	}
	loc, err := c.Resolve(ctx, ref.Name)
	if err != nil {
		return src, fmt.Errorf("inventory: %w", err)
	}
	src.Location, src.Format = loc, inventory.FormatDelta
	return src, nil
}

// OpenRef opens the table a statement names: a path (quoted, or delta.`path`) or a name the
// catalog resolves.
func (s *Session) OpenRef(ctx context.Context, ref sql.TableRef) (*deltavacuum.Table, error) {
	if ref.IsPath() {
		if ref.Format != "" && !strings.EqualFold(ref.Format, "delta") {
			return nil, fmt.Errorf("%s.`%s` is not a Delta table reference; use delta.`path`", ref.Format, ref.Path)
		}
		return s.open(ctx, ref.Path)
	}
	return s.OpenName(ctx, ref.Name)
}

// OpenName resolves a table name with the session's catalog and opens it.
func (s *Session) OpenName(ctx context.Context, parts []string) (*deltavacuum.Table, error) {
	c := s.cfg.Catalog
	if c == nil {
		c = &catalog.Catalog{}
	}
	loc, err := c.Resolve(ctx, parts)
	if err != nil {
		return nil, err
	}
	return s.open(ctx, loc)
}

// open opens the table at loc with the session's storage options and transport: every table
// a statement, a command or the service names is opened here.
func (s *Session) open(ctx context.Context, loc string) (*deltavacuum.Table, error) {
	if s.cfg.Transport != nil {
		if wrap := s.cfg.Transport(loc); wrap != nil {
			return deltavacuum.OpenTransport(ctx, loc, s.cfg.StorageOptions, wrap)
		}
	}
	return deltavacuum.OpenWith(ctx, loc, s.cfg.StorageOptions)
}

// OpenArg opens a table given on the command line, by the rule SQL statements follow too: an
// argument with a '/', a '\' or a ':' is a path or a URI; a bare word (t, schema.t,
// catalog.schema.t) is a table name when a catalog is configured (a warehouse or a catalog
// file), exactly as `VACUUM t` in SQL, and a path relative to the working directory when none
// is (./t is a path in every case).
func (s *Session) OpenArg(ctx context.Context, arg string) (*deltavacuum.Table, error) {
	if strings.ContainsAny(arg, `/\:`) || arg == "." || arg == ".." {
		return s.open(ctx, arg)
	}
	if c := s.cfg.Catalog; c != nil && (c.Warehouse != "" || len(c.Tables) > 0) {
		return s.OpenName(ctx, strings.Split(arg, "."))
	}
	t, err := s.open(ctx, arg)
	var ne *deltavacuum.NotExistError
	if errors.As(err, &ne) && strings.Contains(arg, ".") {
		return nil, fmt.Errorf("%s: no such directory, and no catalog to resolve it as a table name: give the warehouse with --warehouse URI (or %s) or a catalog file with --catalog FILE, or the table's path", arg, catalog.EnvWarehouse)
	}
	return t, err
}

// LocalIsTable reports whether a local path or file:// URI holds a _delta_log directory; it is
// the catalog's existence check for local warehouses.
func LocalIsTable(ctx context.Context, loc string) (bool, error) {
	dir, err := location.LocalPath(loc)
	if err != nil {
		return false, err
	}
	fi, err := os.Stat(filepath.Join(dir, "_delta_log"))
	return err == nil && fi.IsDir(), nil
}

// Dirs returns the catalog's directory listing (catalog.Catalog.Dirs): the directories of a
// local path; errors.ErrUnsupported for an object store, whose names are then looked up as
// typed and in lower case. A folder that does not exist has none.
func Dirs(ctx context.Context, loc string) ([]string, error) {
	if kind, err := location.Kind(loc); err != nil || kind != "local" {
		return nil, errors.ErrUnsupported
	}
	dir, err := location.LocalPath(loc)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// IsTable returns the catalog's existence check for any location: local paths are checked
// on disk, object stores by listing the first entry of <location>/_delta_log/.
func IsTable(opts location.Options) func(ctx context.Context, loc string) (bool, error) {
	return func(ctx context.Context, loc string) (bool, error) {
		kind, err := location.Kind(loc)
		if err != nil {
			return false, err
		}
		if kind == "local" {
			return LocalIsTable(ctx, loc)
		}
		store, err := location.Open(ctx, loc, opts)
		if err != nil {
			return false, err
		}
		found := false
		err = store.Walk(ctx, deltalog.LogDir, func(storage.Object) error {
			found = true
			return errFound
		})
		if err != nil && !errors.Is(err, errFound) && !errors.Is(err, storage.ErrNotExist) {
			return false, err
		}
		return found, nil
	}
}

var errFound = errors.New("found")

// SortedKeys returns the keys of m, sorted (for printing).
func SortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

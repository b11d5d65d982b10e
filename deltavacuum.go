// Package deltavacuum is the library API of deltavacuum: open a Delta table by path or URI,
// plan a VACUUM (the plan is the DRY RUN), and execute it.
//
// The work is done by package vacuum (planning and deleting), package deltalog (reading the
// log) and package storage (the object-store contract); this package ties them to locations.
package deltavacuum

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/counting"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Table is a Delta table at a location.
type Table struct {
	// Location is the URI of the table root.
	Location string
	Store    storage.Store

	// beatTicks, when set (by tests), ticks the heartbeats of its runs instead of a clock.
	beatTicks func() (<-chan time.Time, func())
}

// Open returns the table at uri: a local directory path or file:// URI, or an object-store URI
// (s3://, abfss://, gs://, ... with settings from the environment). It refuses a local
// directory that lies inside another Delta table (a partition directory, say), where a VACUUM
// would take the table's live files for untracked ones.
func Open(ctx context.Context, uri string) (*Table, error) {
	return OpenWith(ctx, uri, nil)
}

// OpenWith is Open with storage settings (--storage-option KEY=VALUE; see storage/README.md).
func OpenWith(ctx context.Context, uri string, opts location.Options) (*Table, error) {
	kind, err := location.Kind(uri)
	if err != nil {
		return nil, err
	}
	if kind != "local" {
		store, err := location.Open(ctx, uri, opts)
		if err != nil {
			return nil, err
		}
		return OpenStore(store), nil
	}
	dir, err := localPath(uri)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, &NotExistError{Path: dir}
	}
	store, err := local.New(dir)
	if err != nil {
		return nil, err
	}
	if err := checkNotInsideTable(store.Root()); err != nil {
		return nil, err
	}
	return OpenStore(store), nil
}

// NotExistError is the refusal of a local table path that does not exist. It matches
// fs.ErrNotExist and deltalog.ErrNotDeltaTable.
type NotExistError struct{ Path string }

func (e *NotExistError) Error() string {
	return e.Path + " does not exist: check the path (a table name such as schema.table needs --warehouse or --catalog)"
}

// Is makes errors.Is(err, fs.ErrNotExist) and errors.Is(err, deltalog.ErrNotDeltaTable) true.
func (e *NotExistError) Is(target error) bool {
	return target == fs.ErrNotExist || target == deltalog.ErrNotDeltaTable
}

// OpenStore returns the table rooted at store.
func OpenStore(store storage.Store) *Table {
	return &Table{Location: store.Location(), Store: store}
}

func localPath(uri string) (string, error) { return location.LocalPath(uri) }

// checkNotInsideTable refuses dir when it has no _delta_log but an ancestor has one.
func checkNotInsideTable(dir string) error {
	if fi, err := os.Stat(filepath.Join(dir, "_delta_log")); err == nil && fi.IsDir() {
		return nil
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(filepath.Join(p, "_delta_log"))
		if err == nil && fi.IsDir() {
			return &deltalog.NotTableError{Location: dir, Detail: "it lies inside the Delta table at " + p + "; vacuum the table itself"}
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			return err
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}

// Snapshot reads the latest snapshot of the table.
func (t *Table) Snapshot(ctx context.Context) (*deltalog.Snapshot, error) {
	return deltalog.Load(ctx, t.Store)
}

// Plan computes what a VACUUM with opts would delete, deleting nothing (the DRY RUN).
func (t *Table) Plan(ctx context.Context, opts vacuum.Options) (*vacuum.Plan, error) {
	p, err := vacuum.NewPlanner(ctx, t.Store, opts)
	if err != nil {
		return nil, err
	}
	return p.Plan(ctx)
}

// VacuumOptions are a VACUUM request (run.Request): what to plan, and how to run it.
type VacuumOptions = run.Request

// Vacuum plans and, unless DryRun, runs a VACUUM of the table: a real run is Start, then
// VacuumRun.Vacuum. It holds the table's lock from before planning to its end, records itself
// beside the table and in its history when logging is on, and deletes through the store or a
// trash.
func (t *Table) Vacuum(ctx context.Context, opts VacuumOptions) (*vacuum.Result, error) {
	if opts.DryRun {
		before, counted := counting.Requests(t.Store)
		res, err := run.Vacuum(ctx, t.Store, opts)
		t.countRequests(res, before, counted)
		return res, err
	}
	r, err := t.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	return r.Vacuum(ctx)
}

// VacuumRun is a real VACUUM of a table, started: it holds the table's lock (run.Run).
type VacuumRun struct {
	*run.Run
	t       *Table
	before  counting.RequestCounts
	counted bool
}

// Start checks the table and takes its lock for a real VACUUM with opts (run.Start): a refusal
// writes nothing. The run's Vacuum does the work and releases the lock; Close gives it up.
func (t *Table) Start(ctx context.Context, opts VacuumOptions) (*VacuumRun, error) {
	before, counted := counting.Requests(t.Store)
	if t.beatTicks != nil && opts.Heartbeats == nil {
		opts.Heartbeats = t.beatTicks
	}
	r, err := run.Start(ctx, t.Store, opts)
	if err != nil {
		return nil, err
	}
	return &VacuumRun{Run: r, t: t, before: before, counted: counted}, nil
}

// Vacuum runs the VACUUM (run.Run.Vacuum), with the requests it sent counted in its result
// where the store counts them.
func (r *VacuumRun) Vacuum(ctx context.Context) (*vacuum.Result, error) {
	res, err := r.Run.Vacuum(ctx)
	r.t.countRequests(res, r.before, r.counted)
	return res, err
}

// countRequests sets res.Requests to the requests sent since before, where the store counts them.
func (t *Table) countRequests(res *vacuum.Result, before counting.RequestCounts, counted bool) {
	if after, ok := counting.Requests(t.Store); ok && counted && res != nil {
		d := after.Sub(before)
		res.Requests = &storage.RequestCounts{List: d.List, Get: d.Get, Put: d.Put, Delete: d.Delete}
	}
}

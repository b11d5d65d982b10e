// Package deltavacuum is the library API of deltavacuum: open a Delta table by path or URI,
// plan a VACUUM (the plan is the DRY RUN), and execute it.
//
// The work is done by package vacuum (planning and deleting), package deltalog (reading the
// log) and package storage (the object-store contract); this package ties them to locations.
package deltavacuum

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/counting"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/undo"
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

// VacuumOptions control a VACUUM run.
type VacuumOptions struct {
	vacuum.Options
	DryRun bool
	Exec   vacuum.ExecOptions
	// Logging records a real run in the table history (VACUUM START before deleting, VACUUM
	// END after); nil means the default of the storage (on, except on S3), as Spark has it.
	Logging *bool
	Commit  deltalog.CommitOptions
	// Trash, when set, is a hidden folder of the table (such as _deltavacuum/trash/; see
	// undo.TrashFolder) a real run moves its files into instead of deleting them.
	Trash string
	// NoRunRecord turns off the run record a real run keeps under _deltavacuum/runs/ (and
	// with it the undo of the run).
	NoRunRecord bool
	// ExpectPlan, when set, is the digest (vacuum.Digest) of the plan the run must execute,
	// such as a previewed DRY RUN's: the new plan is compared right after planning, and a
	// different one is refused with a *vacuum.PlanChangedError before anything is deleted,
	// recorded or committed.
	ExpectPlan string
	// StaleRunAfter is how long another run's RUNNING record may go without a heartbeat before
	// it no longer refuses a real run (0: undo.DefaultStaleAfter).
	StaleRunAfter time.Duration
	// From, when set, is a snapshot of the table the caller has read already (the service
	// reads one for the policy's retention): the run plans from it advanced to the latest
	// version (deltalog.LoadFrom: one listing, then only the commits after it), not from a
	// second read of the log. A snapshot of another table is refused.
	From *deltalog.Snapshot
}

// LoggingDefault is whether VACUUM runs are recorded in the history by default on the storage
// at location: yes, except on S3 (as the reference does).
func LoggingDefault(location string) bool {
	scheme, _, _ := strings.Cut(location, "://")
	switch strings.ToLower(scheme) {
	case "s3", "s3a", "s3n":
		return false
	}
	return true
}

// S3LoggingWarning is the warning of a run recorded in the history of a table on S3.
const S3LoggingWarning = "VACUUM START and END are committed to a table on S3 (logging is on): " +
	"these commits are safe only if every writer of this table commits with conditional writes " +
	"(put-if-absent, If-None-Match: *) or through one coordinating service; a writer that overwrites " +
	"commit files can lose a commit written at the same time (the S3 multi-writer caveat of the Delta protocol). " +
	"Turn logging off (SET spark.databricks.delta.vacuum.logging.enabled = false) if that is not so"

// TrashCopyCost is the warning of a trashed run on an object store.
const TrashCopyCost = "--trash on an object store copies each file on the server, then deletes the original: " +
	"a COPY request (billed as a PUT) and a DELETE per file, and the bytes are stored twice for a moment"

// Vacuum plans and, unless DryRun, executes a VACUUM of the table, recording it in the table
// history when logging is on.
func (t *Table) Vacuum(ctx context.Context, opts VacuumOptions) (*vacuum.Result, error) {
	before, counted := counting.Requests(t.Store)
	res, err := t.vacuum(ctx, opts)
	if after, ok := counting.Requests(t.Store); ok && counted && res != nil {
		d := after.Sub(before)
		res.Requests = &storage.RequestCounts{List: d.List, Get: d.Get, Put: d.Put, Delete: d.Delete}
	}
	return res, err
}

func (t *Table) vacuum(ctx context.Context, opts VacuumOptions) (*vacuum.Result, error) {
	var stale []undo.RunState
	if !opts.DryRun {
		// One run at a time on a table: another run whose heartbeat is fresh refuses this one,
		// before anything is read (the CLI, SQL, the service and library callers alike).
		now := opts.Now
		if now.IsZero() {
			now = time.Now()
		}
		var err error
		if stale, err = t.checkNoLiveRunBeside(ctx, now, opts.StaleRunAfter, opts.Shard, opts.Version); err != nil {
			return nil, err
		}
	}
	res, err := t.vacuumIdle(ctx, opts)
	if res != nil {
		for _, r := range stale {
			res.Warnings = append(res.Warnings, undo.StaleNote(t.Location, r))
		}
	}
	return res, err
}

// vacuumIdle is vacuum once no other run is live on the table.
func (t *Table) vacuumIdle(ctx context.Context, opts VacuumOptions) (*vacuum.Result, error) {
	planner, err := t.planner(ctx, opts)
	if err != nil {
		return nil, err
	}
	if opts.Trash != "" {
		// Before the listing, with the snapshot the planner read (no second log replay).
		if err := t.checkTrash(planner.Snapshot(), opts.Trash); err != nil {
			return nil, err
		}
	}
	plan, err := planner.Plan(ctx)
	if err != nil {
		return nil, err
	}
	plan.Trash = opts.Trash // in the digest: moved is not deleted
	if opts.ExpectPlan != "" {
		if err := vacuum.CheckDigest(plan, opts.ExpectPlan); err != nil {
			return nil, err
		}
	}
	rc := t.recovery(ctx)
	if opts.DryRun {
		opts.Counters.SetPhase("done")
		res := vacuum.DryRun(plan)
		res.Reclaim = vacuum.NewReclaim(rc, opts.Trash, plan.SizeOfDataToDelete)
		return res, nil
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	var rr *runRecorder
	store := t.Store
	if opts.Trash != "" && opts.NoRunRecord {
		return nil, errors.New("--trash needs the run record (it says where each file went): drop --no-run-record")
	}
	// A run whose heartbeat cannot be renewed is stopped between batches (its cause is
	// ErrHeartbeatLost, in the error of the run).
	ctx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	if !opts.NoRunRecord {
		if rr, err = newRunRecorder(t, plan, rc, opts.Trash, now); err != nil {
			return nil, err
		}
		rr.lost = stopRun
		if opts.Trash != "" {
			if store, err = t.trashStore(opts.Trash, rr.rec.ID); err != nil {
				return nil, err
			}
		}
		opts.Exec.OnDeleted = rr.onDeleted
		if err := rr.begin(ctx); err != nil {
			return nil, err
		}
	}
	res, endVersion, err := t.execute(ctx, store, plan, planner.Snapshot(), opts)
	if res != nil {
		trash := ""
		if rr != nil {
			res.RunID, trash = rr.rec.ID, rr.rec.Trash
		}
		res.Reclaim = vacuum.NewReclaim(rc, trash, res.SizeOfDeletedData)
		if w := res.Reclaim.Warning(); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
		if _, onDisk := t.Store.(*local.Store); trash != "" && !onDisk {
			res.Warnings = append(res.Warnings, TrashCopyCost)
		}
	}
	if rr != nil {
		if ferr := rr.finish(ctx, res, endVersion, time.Now()); ferr != nil {
			err = errors.Join(err, fmt.Errorf("the run ended, but its record was not updated: it still lists the planned files as RUNNING, and undo --unfinished brings back what of them is missing: %w", ferr))
		}
	}
	return res, err
}

// planner reads the snapshot a run plans from: opts.From advanced to the latest version when
// it is set, the latest read in full otherwise.
func (t *Table) planner(ctx context.Context, opts VacuumOptions) (*vacuum.Planner, error) {
	if opts.From == nil || opts.Version != nil {
		// A pinned version (--version V) is read at V, never advanced past it.
		return vacuum.NewPlanner(ctx, t.Store, opts.Options)
	}
	snap, err := deltalog.LoadFrom(ctx, t.Store, opts.From)
	if err != nil {
		return nil, err
	}
	return vacuum.NewPlannerFor(ctx, t.Store, snap, opts.Options)
}

// execute runs the plan through store, recording it in the history when logging is on; it
// returns the version of the END commit, when there is one. The log is not read again in
// full: START is committed from snap, the snapshot the plan was made from, advanced by the
// commits made since (deltalog.CommitFrom), which the re-check then takes from it; END from
// the snapshot START was built on, advanced in turn.
func (t *Table) execute(ctx context.Context, store storage.Store, plan *vacuum.Plan, snap *deltalog.Snapshot, opts VacuumOptions) (*vacuum.Result, *int64, error) {
	opts.Commit = commitOptionsFor(plan, opts.Commit)
	logging := LoggingDefault(t.Location)
	if opts.Logging != nil {
		logging = *opts.Logging
	}
	if !logging {
		res, err := vacuum.Execute(ctx, store, plan, opts.Exec)
		return res, nil, err
	}
	var warnings []string
	if !LoggingDefault(t.Location) {
		warnings = append(warnings, S3LoggingWarning)
	}
	started := false
	opts.Exec.RecordStart = func(ctx context.Context, plan *vacuum.Plan) (int64, *deltalog.Snapshot, error) {
		v, base, err := deltalog.CommitFrom(ctx, t.Store, snap, func(snap *deltalog.Snapshot) (*deltalog.CommitRequest, error) {
			return vacuumStart(plan, snap)
		}, opts.Commit)
		if err != nil {
			return -1, nil, fmt.Errorf("recording VACUUM START in the history of %s: %w; nothing was deleted", t.Location, err)
		}
		started, snap = true, base
		return v, base, nil
	}
	res, err := vacuum.Execute(ctx, store, plan, opts.Exec)
	if res != nil {
		res.Warnings = append(res.Warnings, warnings...)
	}
	if !started {
		return res, nil, err
	}
	// Recorded even when the context was cancelled part-way.
	end, _, endErr := deltalog.CommitFrom(context.WithoutCancel(ctx), t.Store, snap, func(*deltalog.Snapshot) (*deltalog.CommitRequest, error) {
		return vacuumEnd(res), nil
	}, opts.Commit)
	if endErr != nil {
		endErr = fmt.Errorf("recording VACUUM END in the history of %s: %w", t.Location, endErr)
		return res, nil, errors.Join(err, endErr)
	}
	return res, &end, err
}

// vacuumStart is the VACUUM START commit of plan, made on snap, the newest snapshot: its
// table retention is the one this commit records (a retention raised since planning is the
// one the run honours, and START says so).
func vacuumStart(plan *vacuum.Plan, snap *deltalog.Snapshot) (*deltalog.CommitRequest, error) {
	table, err := snap.DeletedFileRetention()
	if err != nil {
		return nil, err
	}
	params := map[string]any{
		"retentionCheckEnabled":  plan.RetentionCheckEnabled,
		"defaultRetentionMillis": table.Milliseconds(),
		"vacuumType":             string(plan.Mode),
	}
	if plan.RetentionSpecified {
		params["specifiedRetentionMillis"] = int64(plan.RetentionHours * 3600 * 1000)
	}
	if plan.Shard != nil {
		// One of N workers (--shard I/N --version V): each records its own START and END.
		params["shard"] = plan.Shard.String()
		params["snapshotVersion"] = plan.Version
	}
	return &deltalog.CommitRequest{
		Operation:     "VACUUM START",
		Parameters:    params,
		IsBlindAppend: true,
		Metrics: map[string]string{
			"numFilesToDelete":   fmt.Sprint(plan.NumFilesToDelete),
			"sizeOfDataToDelete": fmt.Sprint(plan.SizeOfDataToDelete),
		},
	}, nil
}

func vacuumEnd(res *vacuum.Result) *deltalog.CommitRequest {
	status := res.Status
	if status == "" {
		status = vacuum.StatusFailed
	}
	params := map[string]any{"status": status}
	if res.Plan != nil && res.Plan.Shard != nil {
		params["shard"] = res.Plan.Shard.String() // pairs it with its START among the other workers'
	}
	return &deltalog.CommitRequest{
		Operation:     "VACUUM END",
		Parameters:    params,
		IsBlindAppend: true,
		Metrics: map[string]string{
			"numDeletedFiles":        fmt.Sprint(res.NumDeletedFiles),
			"numVacuumedDirectories": fmt.Sprint(res.NumDeletedDirectories),
		},
	}
}

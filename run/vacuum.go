package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Request is a VACUUM as every front end asks for it (the library, the CLI and SQL through
// package session, the service): what to plan, and how to run it.
type Request struct {
	vacuum.Options
	DryRun bool
	// Exec sizes the deletes (BatchSize, Concurrency) and carries the progress Counters; the run
	// sets its Start and Deleter.
	Exec vacuum.ExecOptions
	// Logging records a real run in the table history (VACUUM START before deleting, VACUUM
	// END after); nil means the default of the storage (on, except on S3), as Spark has it.
	Logging *bool
	Commit  deltalog.CommitOptions
	// Trash, when set, is a hidden folder of the table (such as _deltavacuum/trash/; see
	// vacuum.TrashFolder) a real run moves its files into instead of deleting them.
	Trash string
	// RunID, when set, is the id of the run's record: a caller that names its runs (the
	// service: its run, the lock's ticket and the record share one id). Empty: a new one.
	RunID string
	// NoRunRecord turns off the run record a real run keeps under _deltavacuum/runs/ (and
	// with it the undo of the run).
	NoRunRecord bool
	// ExpectPlan, when set, is the digest (vacuum.Digest) of the plan the run must execute,
	// such as a previewed DRY RUN's: the new plan is compared right after planning, and a
	// different one is refused with a *vacuum.PlanChangedError before anything is deleted,
	// recorded or committed.
	ExpectPlan string
	// StaleRunAfter is how long another process's lock ticket may go without a heartbeat
	// before it no longer holds the table (0: DefaultStaleAfter).
	StaleRunAfter time.Duration
	// From, when set, is a snapshot of the table the caller has read already (the service
	// reads one for the policy's retention): the run plans from it advanced to the latest
	// version (deltalog.LoadFrom: one listing, then only the commits after it), not from a
	// second read of the log. A snapshot of another table is refused.
	From *deltalog.Snapshot
	// Discover says where the table's readers are beyond what its folder shows (registered
	// streaming checkpoints, the tables beside it) and how to open them (FindReaders): what
	// they need is kept (Options.Readers is set from what is found).
	Discover ReaderOptions
	// Purpose is what the run does under the table's lock (Start): PurposeVacuum (the
	// default), PurposeUndo, PurposePurge or PurposePin. Only a VACUUM plans; the others are
	// Run.Do's.
	Purpose string
	// LiteFallback runs FULL when LITE cannot serve the table (vacuum.ErrCannotVacuumLite: the
	// log no longer reaches back to the last vacuum), under the same lock; the result's plan
	// says the mode it ran in. The service's auto mode sets it.
	LiteFallback bool
	// Clock, when set, is the one clock of the run (a session's, a service's): the planning
	// instant (Options.Now, when that is not set), the commits' timestamps (Commit.Now, when not
	// set) and the lock's ticket all read it. Nil: the time now.
	Clock func() time.Time
	// Heartbeats, when set (tests), ticks the lock's heartbeats instead of a clock.
	Heartbeats func() (<-chan time.Time, func())

	notes []string // warnings of the plan, for the result
	// found are the readers found for the plan (FindReaders); their notes go to the result.
	found *Readers
	// checked is the snapshot Start read and checked before taking the lock: a real run plans
	// from it as it is (the re-check reads every commit after it before anything is deleted).
	checked *deltalog.Snapshot
}

// retentionNotes are the warnings of a plan's retentions (vacuum.RetentionNote).
func retentionNotes(pl *vacuum.Plan) []string {
	var out []string
	if pl.RetentionSpecified {
		if n := vacuum.RetentionNote("RETAIN "+fmt.Sprint(pl.RetentionHours)+" HOURS", time.Duration(pl.RetentionHours)*time.Hour); n != "" {
			out = append(out, n)
		}
	}
	if n := vacuum.RetentionNote("the table's delta.deletedFileRetentionDuration", time.Duration(pl.TableRetentionHours)*time.Hour); n != "" {
		out = append(out, n)
	}
	return out
}

// ErrInvalidRequest is matched (errors.Is) by every refusal of Request.Validate: the request is
// wrong whatever the table (the command line's exit status 2). vacuum.ErrInvalidOptions is
// matched too when the planning options are.
var ErrInvalidRequest = errors.New("invalid VACUUM request")

// RequestError is the refusal of one field of a request.
type RequestError struct {
	Field string
	Err   error
}

func (e *RequestError) Error() string { return e.Err.Error() }

// Unwrap gives ErrInvalidRequest and the reason.
func (e *RequestError) Unwrap() []error { return []error{ErrInvalidRequest, e.Err} }

// Validate checks the request on its own, before any table is read or locked: the planning
// options (vacuum.Options.Validate), the trash folder's form and that it has a run record, the
// digest of an expected plan, a lock given for a dry run. Vacuum calls it first; front ends
// may call it earlier (session, before opening an inventory).
func (r *Request) Validate() error {
	if err := r.Options.Validate(); err != nil {
		var oe *vacuum.OptionError
		field := "options"
		if errors.As(err, &oe) {
			field = oe.Option
		}
		return &RequestError{Field: field, Err: err}
	}
	if r.Trash != "" {
		if _, err := vacuum.TrashFolder(nil, r.Trash); err != nil {
			return &RequestError{Field: "trash", Err: err}
		}
		if r.NoRunRecord {
			return &RequestError{Field: "trash", Err: errors.New("--trash needs the run record (it says where each file went): drop --no-run-record")}
		}
	}
	if r.RunID != "" && (!ValidID(r.RunID) || r.NoRunRecord) {
		return &RequestError{Field: "runId", Err: fmt.Errorf("run id %q is not a run id of a run that keeps a record (such as %s)", r.RunID, IDExample)}
	}
	if r.ExpectPlan != "" && !vacuum.ValidDigest(r.ExpectPlan) {
		return &RequestError{Field: "expectPlan", Err: fmt.Errorf("plan %q is not the digest of a DRY RUN's plan", r.ExpectPlan)}
	}
	switch r.Purpose {
	case "", PurposeVacuum, PurposeUndo, PurposePurge, PurposePin:
	default:
		return &RequestError{Field: "purpose", Err: fmt.Errorf("unknown purpose %q", r.Purpose)}
	}
	return nil
}

// now is the request's clock read once: Options.Now, else Clock, else the time now.
func (r *Request) now() time.Time {
	switch {
	case !r.Now.IsZero():
		return r.Now
	case r.Clock != nil:
		return r.Clock()
	}
	return time.Now()
}

// lockOptions is the ticket a real run of r takes: its clock is the request's (the start, plus
// the time gone since).
func (r *Request) lockOptions(id string, start time.Time) LockOptions {
	began := time.Now()
	return LockOptions{Purpose: PurposeVacuum, Run: id, Shard: r.Shard, Version: r.Version, StaleAfter: r.StaleRunAfter,
		Now: func() time.Time { return start.Add(time.Since(began)) }, Ticks: r.Heartbeats}
}

// NewRunID returns the id of the run record of a real run of r starting at start ("" when it
// keeps none).
func (r *Request) NewRunID(start time.Time) string {
	if r.NoRunRecord {
		return ""
	}
	if r.RunID != "" {
		return r.RunID
	}
	return NewID(start)
}

// Vacuum plans and, unless DryRun, runs a VACUUM of the table in store: a DRY RUN takes
// nothing and writes nothing; a real run is Start, then Run.Vacuum.
func Vacuum(ctx context.Context, store storage.Store, req Request) (*vacuum.Result, error) {
	if req.DryRun {
		if err := req.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", store.Location(), err)
		}
		start := req.now()
		req.Now = start // the planning instant, read once
		return dryRun(ctx, store, req)
	}
	r, err := Start(ctx, store, req)
	if err != nil {
		return nil, err
	}
	return r.Vacuum(ctx)
}

// TakeoverNote is what to do about the run of a ticket found dead (and released) on the table
// in store.
func TakeoverNote(ctx context.Context, store storage.Store, h Holding) string {
	what := fmt.Sprintf("the lock ticket %s of %s was released: %s", h.Key, store.Location(), h.Why)
	if h.Ticket != nil && h.Ticket.Run != "" {
		what += "; " + RunNote(ctx, store, h.Ticket.Run)
	}
	return what
}

// RunNote says what became of run id of the table in store, whose lock ticket no live process
// holds, and what to do about it: undo it where the store or its trash keeps what it deleted,
// run VACUUM again where nothing does (run.InfoOf's advice).
func RunNote(ctx context.Context, store storage.Store, id string) string {
	s, err := SummaryOf(ctx, store, id)
	switch {
	case errors.Is(err, storage.ErrNotExist):
		// A run writes its record before its first delete.
		return fmt.Sprintf("its run %s stopped before it wrote its record, so before its first delete: it deleted nothing", id)
	case err != nil:
		return fmt.Sprintf("what became of its run %s could not be read (deltavacuum runs %s says)", id, store.Location())
	case s.Err != "":
		return fmt.Sprintf("its run %s was interrupted, and its record cannot be read", id)
	case s.Status != StatusRunning:
		return fmt.Sprintf("its run %s had recorded its end (%s) before it stopped", id, s.Status)
	}
	return fmt.Sprintf("its run %s was interrupted (its record says RUNNING): %s", id, InterruptedAdvice(s, store.Location()))
}

// planner is the planner of req over the snapshot precheck read and checked (req.checked:
// req.From advanced to the latest version, or the version req pins), before any lock: one
// reading of the log per run.
func planner(ctx context.Context, store storage.Store, req Request) (*vacuum.Planner, error) {
	if req.checked == nil {
		return nil, errors.New("run: planning without the snapshot precheck read")
	}
	return vacuum.NewPlannerFor(ctx, store, req.checked, req.Options)
}

// plan makes the plan of req and checks it against the trash (req.Trash is set to its clean
// form) and the digest expected.
func plan(ctx context.Context, store storage.Store, req *Request) (*vacuum.Plan, *vacuum.Planner, error) {
	p, err := planner(ctx, store, *req)
	if err != nil {
		return nil, nil, err
	}
	if req.Trash != "" {
		// Before the listing, with the snapshot the planner read (no second log replay).
		if req.Trash, err = vacuum.TrashFolder(p.Snapshot(), req.Trash); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", store.Location(), err)
		}
	}
	pl, err := p.Plan(ctx)
	if err != nil && req.LiteFallback && req.Mode == vacuum.ModeLite && errors.Is(err, vacuum.ErrCannotVacuumLite) && ctx.Err() == nil {
		// LITE refused before listing or deleting anything: plan FULL from the same snapshot.
		req.Mode = vacuum.ModeFull
		if p, err = vacuum.NewPlannerFor(ctx, store, p.Snapshot(), req.Options); err != nil {
			return nil, nil, err
		}
		pl, err = p.Plan(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	pl.Trash = req.Trash // in the digest: moved is not deleted
	req.notes = retentionNotes(pl)
	if req.ExpectPlan != "" {
		if err := vacuum.CheckDigest(pl, req.ExpectPlan); err != nil {
			pl.Close()
			return nil, nil, err
		}
	}
	return pl, p, nil
}

// dryRun is the DRY RUN: the plan, nothing deleted, nothing written, no lock. It reads and
// checks the table as a real run does before its lock (precheck), readers included.
func dryRun(ctx context.Context, store storage.Store, req Request) (*vacuum.Result, error) {
	snap, err := precheck(ctx, store, &req)
	if err != nil {
		return nil, err
	}
	// Its pins, which a real run reads from the listing that admits it to the lock.
	pins, err := ListPins(ctx, store, req.Now, req.Discover.MaxPin)
	if err != nil {
		return nil, err
	}
	before := len(req.found.Readers)
	if err := req.found.addPins(store.Location(), pins); err != nil {
		return nil, err
	}
	req.Options.Readers = append(req.Options.Readers, req.found.Readers[before:]...)
	req.checked = snap
	pl, _, err := plan(ctx, store, &req)
	if err != nil {
		return nil, err
	}
	req.Counters.SetPhase("done")
	res := vacuum.DryRun(pl)
	res.Warnings = append(res.Warnings, req.notes...)
	if req.found != nil {
		res.Warnings = append(res.Warnings, req.found.Notes...)
	}
	rc := Recovery(ctx, store)
	res.Reclaim = vacuum.NewReclaim(rc, req.Trash, pl.SizeOfDataToDelete)
	res.Undo = vacuum.NewUndoability(rc, req.Trash, !req.NoRunRecord)
	return res, nil
}

// Recovery is what the table's store keeps of deleted objects (one request on object stores;
// nothing on local disk).
func Recovery(ctx context.Context, store storage.Store) storage.Recovery {
	if p, ok := store.(storage.RecoveryProber); ok {
		return p.Recovery(ctx)
	}
	return storage.Recovery{Kind: storage.RecoveryUnknown, Detail: "this store cannot tell whether it keeps deleted objects"}
}

// TrashCopyCost is the warning of a trashed run on an object store.
const TrashCopyCost = "--trash on an object store copies each file on the server, then deletes the original: " +
	"a COPY request (billed as a PUT) and a DELETE per file, and the bytes are stored twice for a moment"

// realRun is the real run r, under the table's lock (its ticket names the run record, "" for
// none). Until it writes its record (or, without one, commits START or deletes), nothing but
// the lock is written: r.wrote says when that is no longer so.
func realRun(ctx context.Context, r *Run) (*vacuum.Result, error) {
	store, req, lk, start := r.store, r.req, r.lock, r.start
	id := lk.Ticket().Run
	// Planned from the snapshot read before the lock: one reading of the log per run. What was
	// committed since is read by the re-check after START, before anything is deleted
	// (vacuum.Execute), as what is committed during the run is.
	req.checked = r.pre
	pl, p, err := plan(ctx, store, &req)
	if err != nil {
		return nil, err
	}
	// A plan whose temporary file no longer reads back as written is refused whole, before the
	// run is recorded and before anything is deleted.
	if err := pl.Files.Verify(); err != nil {
		return vacuum.Failed(pl), err
	}
	rc := Recovery(ctx, store)
	var del vacuum.Deleter = store
	if req.Trash != "" {
		trash := vacuum.RunTrash(req.Trash, id)
		if err := vacuum.CheckTrashPlace(ctx, store, trash); err != nil {
			return nil, err
		}
		ts, err := NewTrashStore(store, trash)
		if errors.Is(err, storage.ErrUnsupported) {
			return nil, fmt.Errorf("--trash on %s: %w", store.Location(), err)
		}
		if err != nil {
			return nil, err
		}
		del = ts
	}
	var rec *recorder
	if id != "" {
		if rec, err = newRecorder(store, id, pl, rc, req.Trash, start); err != nil {
			return nil, err
		}
		r.wrote = true
		if err := rec.begin(ctx); err != nil {
			return nil, err
		}
		del = rec.deleter(del)
	}
	r.wrote = true
	// Every batch of deletes first confirms that the run still holds the table.
	del = lk.Guard(del)
	res, endVersion, err := execute(ctx, store, pl, p.Snapshot(), del, lk, req)
	if res != nil {
		res.Warnings = append(res.Warnings, req.notes...)
		if req.found != nil {
			res.Warnings = append(res.Warnings, req.found.Notes...)
		}
		res.RunID = id
		trash := ""
		if rec != nil {
			trash = rec.rec.Trash
		}
		res.Reclaim = vacuum.NewReclaim(rc, trash, res.SizeOfDeletedData)
		res.Undo = vacuum.NewUndoability(rc, trash, id != "")
		if w := res.Reclaim.Warning(); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
		if _, onDisk := store.(*local.Store); trash != "" && !onDisk {
			res.Warnings = append(res.Warnings, TrashCopyCost)
		}
	}
	if rec != nil {
		if ferr := rec.finish(ctx, res, endVersion, time.Now()); ferr != nil {
			err = errors.Join(err, fmt.Errorf("the run ended, but its record was not updated: it still lists the planned files as RUNNING, and undo --unfinished brings back what of them is missing: %w", ferr))
		}
	}
	return res, err
}

// execute commits VACUUM START (when logging is on), deletes through del, commits VACUUM END
// and records the coverage of the log; it returns the version of END, when there is one.
func execute(ctx context.Context, store storage.Store, pl *vacuum.Plan, snap *deltalog.Snapshot, del vacuum.Deleter, lk *Lock, req Request) (*vacuum.Result, *int64, error) {
	exec := req.Exec
	exec.Deleter = del
	logging := LoggingDefault(store.Location())
	if req.Logging != nil {
		logging = *req.Logging
	}
	var h *history
	if logging {
		h = &history{location: store.Location(), snap: snap, opts: commitOptionsFor(pl, req.Commit)}
		exec.Counters.SetPhase("recording the run")
		st, err := h.start(ctx, store, pl)
		if err != nil {
			return vacuum.Failed(pl), nil, err
		}
		exec.Start = st
	}
	res, err := vacuum.Execute(ctx, store, pl, exec)
	// Once every delete is done, an interrupt has nothing left to stop: the run ends as it
	// went (confirmed, recorded, covered), and only a lost lock (its cause, which Confirm
	// reads first) fails it.
	fin := context.WithoutCancel(ctx)
	if err == nil && res.Status == vacuum.StatusCompleted {
		// A run reports success only while it still holds the table.
		cctx, cancel := context.WithTimeout(fin, heartbeatIOTimeout)
		cerr := lk.Confirm(cctx)
		cancel()
		if cerr != nil {
			res.Status, err = vacuum.StatusFailed, cerr
		}
	}
	if logging && !LoggingDefault(store.Location()) {
		res.Warnings = append(res.Warnings, S3LoggingWarning)
	}
	var end *int64
	if h != nil {
		var endErr error
		if end, endErr = h.end(ctx, store, res); endErr != nil {
			return res, nil, errors.Join(err, endErr)
		}
	}
	if err == nil {
		if cerr := vacuum.RecordCoverage(fin, store, res); cerr != nil {
			err = fmt.Errorf("vacuum of %s completed, but %w", pl.Table, cerr)
		}
	}
	return res, end, err
}

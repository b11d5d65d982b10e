package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Run is one change to a table under the table's lock: a real VACUUM, an undo, a purge of a
// trash, a pin. Start begins every one of them, the same way, for every front end (the CLI,
// SQL, the library, the service, the workers of a sharded run, undo and trash purge); no lock
// is handed in from outside. A Run ends once: Vacuum or Do does its work and releases the
// lock; Close gives it up unused.
type Run struct {
	store storage.Store
	req   Request
	lock  *Lock
	start time.Time
	// pre is the snapshot a VACUUM read and checked before taking the lock.
	pre *deltalog.Snapshot
	// wrote is set once the run wrote anything beside its lock (a record, a commit, a delete):
	// a run that ends before that leaves the table's folder as it found it.
	wrote bool
	ended bool
}

// Start validates req, checks the table for what can be checked without the lock, and takes
// the table's lock for req.Purpose (a VACUUM by default). A refusal here writes nothing,
// anywhere: a folder that is not a Delta table, a retention shorter than the table's with the
// safety check on, an unsupported feature, a broken log, a trash folder that cannot be, a
// sharded run's version beyond the log are refused before the lock is taken; a table another
// process holds is refused by the lock, which leaves the lock folder as it found it.
//
// For a VACUUM, the snapshot read here is the one the run plans from: the log is read once per
// run, and what is committed after it is read by the re-check before anything is deleted. Undo, purge and pins check what they need
// before they call Start (a record that exists, a trash folder of the right form) and pass
// their Purpose.
func Start(ctx context.Context, store storage.Store, req Request) (*Run, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", store.Location(), err)
	}
	if req.DryRun {
		return nil, fmt.Errorf("%s: %w", store.Location(), &RequestError{Field: "dryRun", Err: errors.New("a DRY RUN takes no lock and writes nothing: it is not started")})
	}
	if req.Purpose == "" {
		req.Purpose = PurposeVacuum
	}
	r := &Run{store: store, req: req, start: req.now()}
	r.req.Now = r.start // the planning instant, read once
	if r.req.Commit.Now == nil && r.req.Clock != nil {
		r.req.Commit.Now = r.req.Clock
	}
	id := ""
	if req.Purpose == PurposeVacuum {
		pre, err := precheck(ctx, store, &r.req)
		if err != nil {
			return nil, err
		}
		r.pre = pre
		id = r.req.NewRunID(r.start)
	}
	lo := r.req.lockOptions(id, r.start)
	lo.Purpose = req.Purpose
	lk, err := Acquire(ctx, store, lo)
	if err != nil {
		return nil, err
	}
	r.lock = lk
	if req.Purpose == PurposeVacuum {
		if err := r.addPins(ctx); err != nil {
			return nil, errors.Join(err, r.Close(ctx))
		}
	}
	return r, nil
}

// precheck reads the snapshot a VACUUM of req plans from and refuses, before the lock, what it
// alone decides (vacuum.Check), a trash folder that cannot be (vacuum.TrashFolder) and a log
// another format's converter writes (CheckConverted); it finds the table's readers
// (FindReaders), whose needs the plan keeps. The snapshot given in req.From is advanced to the
// newest version instead of read again.
func precheck(ctx context.Context, store storage.Store, req *Request) (*deltalog.Snapshot, error) {
	var (
		snap *deltalog.Snapshot
		err  error
	)
	if req.From != nil && req.Version == nil {
		snap, err = deltalog.LoadFrom(ctx, store, req.From)
	} else {
		snap, err = vacuum.LoadSnapshot(ctx, store, req.Options)
	}
	if err != nil {
		return nil, err
	}
	if err := vacuum.Check(snap, req.Options); err != nil {
		return nil, err
	}
	if req.Trash != "" {
		if _, err := vacuum.TrashFolder(snap, req.Trash); err != nil {
			return nil, fmt.Errorf("%s: %w", store.Location(), err)
		}
	}
	if err := CheckConverted(ctx, store, snap); err != nil {
		return nil, err
	}
	found, err := findReaders(ctx, store, snap, req.Discover)
	if err != nil {
		return nil, err
	}
	req.found = found
	req.Options.Readers = append(req.Options.Readers, found.Readers...)
	return snap, nil
}

// addPins adds the table's pins to what r keeps: read from the listing that admitted r to the
// lock (no pin can be written while r holds it). A pin that cannot be trusted refuses the run.
func (r *Run) addPins(ctx context.Context) error {
	pins := ReadPins(ctx, r.store, r.lock.pinKeys, r.req.Now, r.req.Discover.MaxPin)
	found := r.req.found
	before := len(found.Readers)
	if err := found.addPins(r.store.Location(), pins); err != nil {
		return err
	}
	r.req.Options.Readers = append(r.req.Options.Readers, found.Readers[before:]...)
	return nil
}

// ID is the run's record id ("" when it keeps none: not a VACUUM, or NoRunRecord).
func (r *Run) ID() string { return r.lock.Ticket().Run }

// Snapshot is the snapshot a VACUUM read before taking the lock (nil for other purposes).
func (r *Run) Snapshot() *deltalog.Snapshot { return r.pre }

// TakenOver are the tickets of processes found dead that the run's lock deleted to take the
// table: their runs, if they kept a record, were interrupted.
func (r *Run) TakenOver() []Holding { return r.lock.TakenOver() }

// errEnded refuses a second end of a run.
var errEnded = errors.New("the run has ended already")

// Vacuum runs the VACUUM r was started for, in order: plans from the snapshot read before the
// lock, writes its run record, commits VACUUM START, re-reads
// the log and deletes (vacuum.Execute) through its deleter (the store, or a trash), each batch
// after confirming the lock, commits VACUUM END, records in _last_vacuum_info what it covered,
// writes its record again with what it deleted, and releases the lock.
func (r *Run) Vacuum(ctx context.Context) (*vacuum.Result, error) {
	if r.ended {
		return nil, errEnded
	}
	if r.req.Purpose != PurposeVacuum {
		return nil, fmt.Errorf("%s: a run started for %s does not vacuum", r.store.Location(), r.req.Purpose)
	}
	r.ended = true
	// A run whose lock can no longer be shown to hold is stopped between batches (its cause is
	// ErrLockLost, in the error of the run).
	rctx, stop := r.lock.Bind(ctx)
	res, err := realRun(rctx, r)
	stop()
	if rerr := r.release(ctx); rerr != nil && res != nil {
		res.Warnings = append(res.Warnings, rerr.Error())
	}
	if res != nil {
		for _, h := range r.lock.TakenOver() {
			res.Warnings = append(res.Warnings, TakeoverNote(context.WithoutCancel(ctx), r.store, h))
		}
	}
	return res, err
}

// Do runs fn under the lock (its context is cancelled, with the lock's cause, as soon as the
// lock is lost) and releases the lock. fn says, through wrote, whether it changed anything
// beside the lock; if not, the folder is left as it was found.
func (r *Run) Do(ctx context.Context, fn func(ctx context.Context) (wrote bool, err error)) error {
	if r.ended {
		return errEnded
	}
	r.ended = true
	rctx, stop := r.lock.Bind(ctx)
	wrote, err := fn(rctx)
	stop()
	r.wrote = wrote
	return errors.Join(err, r.release(ctx))
}

// Close ends a run that did nothing: its lock is released and the lock folders it made are
// removed. Safe after Vacuum or Do (it does nothing then).
func (r *Run) Close(ctx context.Context) error {
	if r == nil || r.ended {
		return nil
	}
	r.ended = true
	return r.release(ctx)
}

// release releases the lock; a run that wrote nothing else leaves the folder as it found it.
func (r *Run) release(ctx context.Context) error {
	err := r.lock.Release(ctx)
	if !r.wrote && err == nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), heartbeatIOTimeout)
		defer cancel()
		r.lock.tidy.restore(rctx)
	}
	return err
}

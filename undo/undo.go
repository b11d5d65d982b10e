package undo

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/deltavacuum/deltavacuum/run"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Options control an undo.
type Options struct {
	// DryRun says what would be restored and restores nothing.
	DryRun bool
	// Unfinished allows the undo of a run whose record says it is still running (it was
	// killed): the files it planned are restored where the store still keeps them.
	Unfinished bool
	// Concurrency bounds the restores in flight (default 16).
	Concurrency int
	// Now is the clock (zero: time.Now()).
	Now time.Time
	// StaleAfter is the stale limit of the table's lock, which a real undo holds (0:
	// run.DefaultStaleAfter).
	StaleAfter time.Duration
	// Snapshot is the table's latest snapshot: the undo of a trashed run whose trash fails
	// vacuum.TrashFolder is refused (a planted record naming a partition folder as its trash
	// would move live files), and no file is restored into a folder the table hides, where
	// VACUUM never deletes. Required.
	Snapshot *deltalog.Snapshot
}

// ErrIncomplete is returned (wrapped) when an undo could not restore every file.
var ErrIncomplete = errors.New("not every file of the run was restored")

// ErrNotUndoable is matched (errors.Is) by the refusal of an undo that can bring nothing back:
// the run's state (run.InfoOf) says so, before anything is looked at or written.
var ErrNotUndoable = errors.New("nothing an undo can bring back")

// NotUndoableError is the refusal of an undo of a run that can bring nothing back: its trash
// was purged, nothing kept what it deleted, an undo brought it all back already, it deleted
// nothing. Why is the run's state's own words (run.RunInfo.Undo).
type NotUndoableError struct {
	Run, Table, Why string
}

func (e *NotUndoableError) Error() string {
	return fmt.Sprintf("run %s of %s %s; nothing was changed", e.Run, e.Table, e.Why)
}

// Unwrap gives ErrNotUndoable.
func (e *NotUndoableError) Unwrap() error { return ErrNotUndoable }

// Check refuses what Undo would refuse of run id of the table in store before it looks at a
// file, so that a caller can refuse it before it takes the table's lock (a refusal changes
// nothing): a record that cannot be read, one that names as its trash a folder the table of
// snap does not hide (a planted record naming a partition folder would move live files), and a
// run whose state says an undo can bring nothing back (Undoable).
func Check(ctx context.Context, store storage.Store, id string, snap *deltalog.Snapshot) error {
	rec, err := run.ReadRecord(ctx, store, id)
	if err != nil {
		return err
	}
	return check(ctx, store, rec, snap)
}

func check(ctx context.Context, store storage.Store, rec *run.Record, snap *deltalog.Snapshot) error {
	if rec.Trash != "" {
		if _, err := vacuum.TrashFolder(snap, strings.TrimSuffix(rec.Trash, rec.ID+"/")); err != nil {
			return fmt.Errorf("run %s of %s names %s as its trash: %w; the record is not used", rec.ID, store.Location(), rec.Trash, err)
		}
	}
	// An undo that can bring nothing back is refused before it looks at a file: one line, and
	// the run's state stays what it was (no report is written).
	return Undoable(ctx, store, rec.ID)
}

// Undoable refuses, with a *NotUndoableError, the undo of run id of the table in store when its
// state (run.InfoOf) says an undo can bring nothing back; a record that cannot be read is
// refused with the reason. It reads the record's header, its last undo and its purge note.
func Undoable(ctx context.Context, store storage.Store, id string) error {
	sum, err := run.SummaryOf(ctx, store, id)
	if err != nil {
		return err
	}
	if sum.Err != "" {
		return fmt.Errorf("run %s of %s: %s", id, store.Location(), sum.Err)
	}
	if u := run.InfoOf(sum, false).Undo; u != nil && u.Possible == vacuum.UndoNo {
		return &NotUndoableError{Run: id, Table: store.Location(), Why: u.Why}
	}
	return nil
}

// Undo restores what run id of the table in store deleted: files in the run's trash are
// moved back; otherwise the store's recovery (versioning, soft delete) brings each file back.
// A file that is at its path now is never replaced. The report lists every file; unless a
// dry run, it is also kept beside the record (deltavacuum runs shows the run as undone).
func Undo(ctx context.Context, store storage.Store, id string, opts Options) (*run.UndoReport, error) {
	rec, err := run.ReadRecord(ctx, store, id)
	if err != nil {
		return nil, err
	}
	if opts.Snapshot == nil {
		return nil, errors.New("undo: no snapshot of the table")
	}
	if rec.Status == run.StatusRunning && !opts.Unfinished {
		return nil, fmt.Errorf("run %s of %s has not finished: it is running, or it was interrupted. If no vacuum runs on this table now, undo it with --unfinished (a real undo takes the table's lock, which a live run holds)", id, store.Location())
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 16
	}
	rep := &run.UndoReport{Run: id, Table: store.Location(), At: opts.Now.UTC(), DryRun: opts.DryRun, Files: make([]run.UndoFile, len(rec.Files))}
	var restore func(ctx context.Context, e run.Entry) (string, string)
	if err := check(ctx, store, rec, opts.Snapshot); err != nil {
		return nil, err
	}
	switch {
	case rec.Trash != "":
		rep.Via = run.ViaTrash
		mover, ok := store.(storage.Mover)
		if !ok {
			return nil, fmt.Errorf("%s cannot move files back from the trash %s", store.Location(), rec.Trash)
		}
		restore = func(ctx context.Context, e run.Entry) (string, string) {
			return fromTrash(ctx, store, mover, rec.Trash+e.Path, e, opts.DryRun)
		}
	default:
		rep.Via = run.ViaRecovery
		r, ok := store.(storage.Restorer)
		restore = func(ctx context.Context, e run.Entry) (string, string) {
			if !ok || !rec.Recovery.Restorable() && rec.Recovery.Kind != storage.RecoveryUnknown {
				// A file an interrupted run never reached is still at its path: present.
				if _, err := store.Stat(ctx, e.Path); err == nil {
					return run.OutcomePresent, "it is at its path: the run never deleted it"
				}
				return run.OutcomeLost, "the store kept nothing of it (" + rec.Recovery.Detail + "); a run with --trash can be undone on such a store"
			}
			return fromRecovery(ctx, store, r, e, opts.DryRun)
		}
	}
	sem := make(chan struct{}, opts.Concurrency)
	var wg sync.WaitGroup
	for i, e := range rec.Files {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out, why := run.OutcomeFailed, ctx.Err()
			if dir := storage.Dir(e.Path); why == nil && dir != "" && vacuum.HiddenIn(opts.Snapshot, dir) {
				why = fmt.Errorf("refused: VACUUM never deletes in the hidden folder %s, so no run can have deleted it", dir)
			}
			if why == nil {
				var w string
				out, w = restore(ctx, e)
				rep.Files[i] = run.UndoFile{Path: e.Path, Size: e.Size, Outcome: out, Why: relative(store, w)}
				return
			}
			rep.Files[i] = run.UndoFile{Path: e.Path, Size: e.Size, Outcome: out, Why: errText(store, why)}
		}()
	}
	wg.Wait()
	// A checksum companion is the .<name>.crc of another file of the run (older records say
	// so by a size of -1 too).
	companion := map[string]bool{}
	for _, e := range rec.Files {
		companion[vacuum.ChecksumCompanion(e.Path)] = true
	}
	for i := range rep.Files {
		f := &rep.Files[i]
		f.Companion = f.Size < 0 || companion[f.Path]
		switch f.Outcome {
		case run.OutcomeRestored, run.OutcomeWouldRestore:
			rep.NumRestored++
			rep.BytesRestored += max(f.Size, 0)
			if f.Companion {
				rep.NumCompanions++
			}
		case run.OutcomePresent:
			rep.NumPresent++
		case run.OutcomeLost:
			rep.NumLost++
		default:
			rep.NumFailed++
		}
	}
	if !opts.DryRun {
		if err := run.WriteUndoReport(ctx, store, rep); err != nil {
			return rep, err
		}
	}
	if rep.NumLost+rep.NumFailed > 0 && !opts.DryRun { // a dry run reports, it does not fail
		return rep, fmt.Errorf("undo of run %s of %s: %w: %d restored, %d not restorable, %d failed (see the list)", id, store.Location(), ErrIncomplete, rep.NumRestored, rep.NumLost, rep.NumFailed)
	}
	return rep, nil
}

// fromTrash moves a file back from the trash.
func fromTrash(ctx context.Context, store storage.Store, m storage.Mover, trashed string, e run.Entry, dryRun bool) (string, string) {
	if dryRun {
		if _, err := store.Stat(ctx, trashed); err != nil {
			if _, err := store.Stat(ctx, e.Path); err == nil {
				return run.OutcomePresent, "it is at its path, not in the trash"
			}
			return run.OutcomeLost, "not in the trash any more, nor at its path"
		}
		if _, err := store.Stat(ctx, e.Path); err == nil {
			return run.OutcomePresent, "a file is at its path now; it would be left as it is"
		}
		return run.OutcomeWouldRestore, ""
	}
	err := m.Move(ctx, trashed, e.Path)
	switch {
	case err == nil:
		return run.OutcomeRestored, ""
	case errors.Is(err, storage.ErrNotDir):
		return run.OutcomeFailed, notDirWhy(err)
	case errors.Is(err, storage.ErrExist):
		return run.OutcomePresent, "a file is at its path now; it is left as it is, and the trashed copy stays at " + trashed
	case errors.Is(err, storage.ErrNotExist):
		if _, err := store.Stat(ctx, e.Path); err == nil {
			return run.OutcomePresent, "already back at its path"
		}
		// Lost only when the trashed copy is not there either: a move answers for two names.
		switch _, serr := store.Stat(ctx, trashed); {
		case serr == nil:
			return run.OutcomeFailed, "not moved back (" + err.Error() + "), although it is in the trash at " + trashed + ", where it stays: undo again"
		case !errors.Is(serr, storage.ErrNotExist):
			return run.OutcomeFailed, "not moved back (" + err.Error() + "), and whether it is still in the trash at " + trashed + " could not be told: " + serr.Error()
		}
		return run.OutcomeLost, "not in the trash any more, nor at its path"
	}
	return run.OutcomeFailed, err.Error()
}

// notDirWhy explains a restore refused because a file stands where a folder on the way to the
// file (or to its trashed copy) must be: nothing was moved.
func notDirWhy(err error) string {
	return "not restored: a file stands where a folder is needed (" + err.Error() + "); nothing was moved: move that file out of the way, then undo again"
}

// fromRecovery brings a file back through the store's versioning or soft delete.
func fromRecovery(ctx context.Context, store storage.Store, r storage.Restorer, e run.Entry, dryRun bool) (string, string) {
	if dryRun {
		if _, err := store.Stat(ctx, e.Path); err == nil {
			return run.OutcomePresent, "a file is at its path now; it would be left as it is"
		}
		return run.OutcomeWouldRestore, ""
	}
	d := storage.Deleted{Key: e.Path, Size: e.Size}
	if e.ModTime != 0 {
		d.ModTime = time.UnixMilli(e.ModTime)
	}
	err := r.Restore(ctx, d)
	switch {
	case err == nil:
		return run.OutcomeRestored, ""
	case errors.Is(err, storage.ErrNotDir):
		return run.OutcomeFailed, notDirWhy(err)
	case errors.Is(err, storage.ErrExist):
		return run.OutcomePresent, "a file is at its path now (restored before, or written again); it is left as it is"
	case errors.Is(err, storage.ErrNotExist):
		return run.OutcomeLost, err.Error()
	case errors.Is(err, storage.ErrUnsupported):
		return run.OutcomeLost, err.Error()
	}
	return run.OutcomeFailed, err.Error()
}

// errText is err as a file's outcome says it: the paths in it relative to the table (a local
// store's errors name files by their absolute paths).
func errText(store storage.Store, err error) string { return relative(store, err.Error()) }

// relative rewrites the absolute paths of the table's files in msg (a local store's errors
// carry them) relative to the table's root.
func relative(store storage.Store, msg string) string {
	u, err := url.Parse(store.Location())
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return msg
	}
	root := filepath.FromSlash(strings.TrimSuffix(u.Path, "/"))
	return strings.ReplaceAll(msg, root+string(filepath.Separator), "")
}

package vacuum

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// ExecOptions control the executor.
type ExecOptions struct {
	// BatchSize is the number of keys per Delete call (default 1000, rounded up to a multiple
	// of the store's batch size when it has one: 1024 on Azure, whose batches hold 256).
	BatchSize int
	// Concurrency is the number of Delete calls in flight (default 8, or the store's own
	// bound on requests in flight when it has a higher one: an object store's concurrency).
	Concurrency int
	// Start is the VACUUM START commit the caller recorded in the table history before calling
	// Execute (nil: the run is not recorded): the log is re-read up to and including it before
	// anything is deleted.
	Start *Start
	// Deleter deletes the files and directories (nil: the store). A run that moves its files
	// to a trash passes the trash here; the log is still read from the store.
	Deleter Deleter
	// Counters, when set, receive live counts for progress displays.
	Counters *Counters
}

// Start is a VACUUM START commit.
type Start struct {
	Version int64
	// Base, when set, is the snapshot START was built on (deltalog.CommitFrom): when it holds
	// every commit after the plan up to START, the re-check takes them from it instead of
	// listing the log and reading them again.
	Base *deltalog.Snapshot
	// Size, when not 0, is the size of the commit the caller wrote as START: found at that
	// size, it is not read back (it holds a commitInfo alone, and put-if-absent wrote it).
	Size int64
}

// Deleter is the one way the executor deletes (pebble's Cleaner): Delete has the contract of
// storage.Store.Delete. A Deleter that is also a storage.ConditionalDeleter deletes a file only
// while it is the version listed, where the listing gave one.
type Deleter interface {
	Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error)
}

// Status of a run.
const (
	StatusCompleted = "COMPLETED"
	StatusFailed    = "FAILED"
)

// Failure is a key that could not be deleted.
type Failure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Result is what a run did. It embeds the plan it acted on: the planned files and directories
// less those a commit made after planning made it keep (section 13 of the contract), which
// are listed in Dropped with the reason.
//
// Every field docs/cli.md lists for --json is always present (null or [] when empty).
type Result struct {
	*Plan
	DryRun                bool   `json:"dryRun"`
	Status                string `json:"status"`
	NumDeletedFiles       int64  `json:"numDeletedFiles"`
	NumAlreadyGone        int64  `json:"numAlreadyGoneFiles"`
	NumDeletedDirectories int64  `json:"numDeletedDirectories"`
	// SizeOfDeletedData is the size of the files this run deleted (not of those already gone
	// or failed), as the plan recorded them; NumDeletedChecksumFiles and
	// SizeOfDeletedChecksumFiles count the checksum companions deleted with them.
	SizeOfDeletedData          int64     `json:"sizeOfDeletedData"`
	NumDeletedChecksumFiles    int64     `json:"numDeletedChecksumFiles"`
	SizeOfDeletedChecksumFiles int64     `json:"sizeOfDeletedChecksumFiles"`
	Dropped                    []Dropped `json:"droppedByRecheck"`
	// StartVersion is the version of the VACUUM START commit of a recorded run: no file a
	// commit before it protects is deleted.
	StartVersion *int64 `json:"startVersion"`
	// RecheckedThrough is the newest version the re-check of the log had read when the last
	// delete was sent: commits after it are the window no VACUUM closes (docs/design.md).
	RecheckedThrough *int64    `json:"recheckedThroughVersion"`
	Failed           []Failure `json:"failed"`
	// NotReached are the planned files a run that stopped part-way (interrupted, cancelled, its
	// lock lost) did not delete: those it had sent that the store did not delete, and every one
	// it never sent. Nothing happened to them; the next run plans them again.
	NotReached []string `json:"notReached"`
	// Warnings are what the user should know of the run's safety that is not an error.
	Warnings []string `json:"warnings,omitempty"`
	// Requests are the storage requests of the run, on stores that count them.
	Requests *storage.RequestCounts `json:"requests,omitempty"`
	// Reclaim says when the bytes deleted (planned, in a dry run) stop being billed.
	Reclaim *Reclaim `json:"storageReclaim"`
	// Undo says whether deltavacuum undo can bring back what the run deletes (would delete, in
	// a dry run), and how.
	Undo *Undoability `json:"undo"`
	// RunID names the run record of a real run (deltavacuum runs, deltavacuum undo).
	RunID string `json:"runId"`

	// retentionRaised is set when a metaData committed during the run raised the retention.
	retentionRaised bool
}

// DryRun returns the result of a DRY RUN: the plan, nothing deleted.
func DryRun(plan *Plan) *Result {
	return &Result{Plan: plan, DryRun: true, Status: StatusCompleted}
}

// Failed returns the result of a run of plan that stopped before deleting anything.
func Failed(plan *Plan) *Result {
	return &Result{Plan: plan, Status: StatusFailed}
}

// ErrPartialFailure is returned (wrapped) when some keys could not be deleted.
var ErrPartialFailure = errors.New("some files could not be deleted")

// Execute deletes what plan lists: files (with their checksum companions) in concurrent
// batches, then directories bottom-up. First it records the run (RecordStart) and re-reads
// every commit made since planning; before each further batch it looks for newer commits
// again. A planned file or directory that a newer commit references, that a raised retention
// makes too new, or that a newer metaData hides, is kept and reported in Result.Dropped. A key
// already gone counts as gone, not as an error, once a Stat confirms it is not at its path;
// one whose folder is a file now (storage.ErrNotDir) is a failure. Failures are reported in
// the result; the error is then non-nil too.
func Execute(ctx context.Context, store storage.Store, plan *Plan, opts ExecOptions) (*Result, error) {
	del := opts.Deleter
	if del == nil {
		del = store
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = defaultBatchSize(del)
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = defaultConcurrency(del)
	}
	res := Failed(plan)
	// A plan whose temporary file no longer reads back as written is refused whole, before
	// anything is deleted.
	if err := plan.Files.Verify(); err != nil {
		return res, err
	}
	counters := opts.Counters
	defer func() {
		if res.Status == StatusCompleted {
			counters.SetPhase("done")
		} else {
			counters.SetPhase("stopped")
		}
	}()
	tl, err := newTail(store, plan)
	if err != nil {
		return res, err
	}
	recorded := int64(-1)
	var base *deltalog.Snapshot
	if opts.Start != nil {
		recorded, base = opts.Start.Version, opts.Start.Base
		res.StartVersion = &recorded
		tl.startSize = opts.Start.Size
	}
	ex := &executor{store: store, del: del, plan: plan, opts: opts, res: res, tail: tl, keepDirs: map[string]bool{}}
	counters.SetPhase("re-checking the log")
	if err := tl.catchUp(ctx, recorded, base); err != nil {
		if ctx.Err() == nil {
			return res, err
		}
		// Stopped before the first delete: every planned file is one it did not reach.
		if nerr := ex.notReachedFrom(0); nerr != nil {
			return res, errors.Join(err, nerr)
		}
		return res, &StoppedError{Table: plan.Table, NotReached: int64(len(res.NotReached)), Err: context.Cause(ctx)}
	}
	counters.SetPhase("deleting")
	err = ex.deleteFiles(ctx)
	if err == nil {
		err = ex.deleteDirs(ctx)
	}
	acted, actErr := ex.acted()
	res.Plan = acted
	err = errors.Join(err, actErr)
	checked := tl.next - 1
	res.RecheckedThrough = &checked
	res.retentionRaised = tl.raisedAt >= 0
	if err != nil {
		return res, &StoppedError{Table: plan.Table, Deleted: res.NumDeletedFiles, NotReached: int64(len(res.NotReached)), Err: err}
	}
	if len(res.Failed) > 0 {
		return res, fmt.Errorf("vacuum of %s: %w: %d of %d files and directories (see the failed list); what remains is what this run could not delete, and running VACUUM again plans it afresh",
			plan.Table, ErrPartialFailure, len(res.Failed), res.Plan.Files.Len()+len(res.Plan.Dirs))
	}
	res.Status = StatusCompleted
	return res, nil
}

// StoppedError is the error of a run that stopped before it deleted every planned file: it was
// interrupted (Ctrl-C, SIGTERM, a cancel), lost its lock, or a request of the store failed.
// Err is the cause (context.Canceled for an interrupt, matched by errors.Is); the message says
// what was done and what was not, in words.
type StoppedError struct {
	Table      string
	Deleted    int64 // files the run deleted
	NotReached int64 // planned files it did not delete (Result.NotReached)
	Err        error
}

func (e *StoppedError) Error() string {
	what := "stopped"
	if errors.Is(e.Err, context.Canceled) {
		what = "was interrupted"
	}
	msg := fmt.Sprintf("vacuum of %s %s after deleting %s", e.Table, what, countFiles(e.Deleted))
	if e.NotReached > 0 {
		msg += fmt.Sprintf("; %s not deleted, untouched: run VACUUM again to delete them", countFiles(e.NotReached))
	}
	if errors.Is(e.Err, context.Canceled) {
		return msg // an interrupt: its Go words ("context canceled") say nothing more
	}
	return msg + ": " + e.Err.Error()
}

func (e *StoppedError) Unwrap() error { return e.Err }

// countFiles is "1 file" or "N files".
func countFiles(n int64) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// executor deletes one plan.
type executor struct {
	store storage.Store // the table's, for reads
	del   Deleter
	plan  *Plan
	opts  ExecOptions
	tail  *tail // used by the goroutine that sends the batches only

	mu       sync.Mutex // guards res and keepDirs while batches run
	res      *Result
	keepDirs map[string]bool // directories (ending in '/') with a file kept or failed below
	dropped  map[string]bool // keys of dropped files and directories, and the directories above
}

func (ex *executor) drop(d Dropped, dir bool) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.dropLocked(d, dir)
}

// dropLocked is drop with ex.mu held.
func (ex *executor) dropLocked(d Dropped, dir bool) {
	ex.res.Dropped = append(ex.res.Dropped, d)
	if ex.dropped == nil {
		ex.dropped = map[string]bool{}
	}
	key := d.Path
	if dir {
		key += "/"
	}
	ex.dropped[key] = true
	ex.keepAbove(key)
	for p := storage.Dir(key); p != "" && !ex.dropped[p]; p = storage.Dir(p) {
		ex.dropped[p] = true
	}
}

// keepAbove marks every directory above key as one that must stay. ex.mu is held.
func (ex *executor) keepAbove(key string) {
	for d := storage.Dir(key); d != ""; d = storage.Dir(d) {
		if ex.keepDirs[d] {
			return
		}
		ex.keepDirs[d] = true
	}
}

// fail records a key that could not be deleted: failed, or not reached when the run stopped
// (interrupted, cancelled, its lock lost) before the store deleted it. ex.mu is held.
func (ex *executor) fail(key string, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		ex.res.NotReached = append(ex.res.NotReached, key)
	} else {
		ex.res.Failed = append(ex.res.Failed, Failure{Path: key, Error: err.Error()})
	}
	ex.keepAbove(key)
}

// deleteFiles sends the files in batches, at most Concurrency at a time. Before each batch is
// sent it probes the log for commits made since the last look and leaves out what they keep.
func (ex *executor) deleteFiles(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	workers := make(chan struct{}, ex.opts.Concurrency)
	var wg sync.WaitGroup
	files := ex.plan.Files
	// A batch starts with a free worker and a fresh probe of the log, and takes files until
	// it holds BatchSize of those the log still lets go.
	var batch []File
	taken := 0
	// placed counts the files whose fate is decided (dropped, or in a batch that is sent): a
	// run that stops has not reached the files after them.
	placed := 0
	var batchFailed atomic.Bool
	sendErr := files.Each(func(f File) error {
		taken++
		if batch == nil {
			select {
			case workers <- struct{}{}:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			if err := ex.tail.probe(ctx); err != nil {
				<-workers
				return stopCause(ctx, err)
			}
			batch = make([]File, 0, min(ex.opts.BatchSize, files.Len()-taken+1))
		}
		placed++
		if d, keep := ex.tail.keepFile(&f); keep {
			ex.drop(d, false)
		} else {
			if f.Checksum != "" {
				// The companion is asked about as a file of its own: a newer commit may
				// name it. The file goes; the companion stays.
				if d, keep := ex.tail.keepFile(&File{Path: f.Checksum, eligible: f.eligible}); keep {
					ex.drop(d, false)
					f.Checksum = ""
				}
			}
			batch = append(batch, f)
		}
		if len(batch) == ex.opts.BatchSize {
			ex.send(ctx, &wg, workers, cancel, &batchFailed, batch)
			batch = nil
		}
		return nil
	})
	switch {
	case batch == nil:
	case len(batch) > 0:
		ex.send(ctx, &wg, workers, cancel, &batchFailed, batch)
	default:
		<-workers
	}
	wg.Wait()
	if sendErr == nil && !batchFailed.Load() {
		// Every planned file was sent and every batch went through: an interrupt that came
		// after the last delete found nothing left to stop.
		return nil
	}
	if err := ex.notReachedFrom(placed); err != nil {
		return errors.Join(sendErr, err)
	}
	if sendErr != nil {
		return sendErr
	}
	return context.Cause(ctx)
}

// stopCause is the error of a probe of the log that failed: when the run was stopping (a batch
// failed, the lock was lost, an interrupt), the probe was cut short by the stop, and the
// stop's cause says why; its own words would be "context canceled".
func stopCause(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// notReachedFrom adds to the files not reached every planned file from the index placed on,
// which the run never sent.
func (ex *executor) notReachedFrom(placed int) error {
	i := 0
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.plan.Files.Each(func(f File) error {
		if i >= placed {
			ex.res.NotReached = append(ex.res.NotReached, f.Path)
			ex.keepAbove(f.Path)
		}
		i++
		return nil
	})
}

// send deletes a batch in its own goroutine, which holds a worker; a batch that fails sets
// failed and stops the others.
func (ex *executor) send(ctx context.Context, wg *sync.WaitGroup, workers chan struct{}, cancel context.CancelCauseFunc, failed *atomic.Bool, batch []File) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() { <-workers }()
		if err := ex.deleteBatch(ctx, batch); err != nil {
			failed.Store(true)
			cancel(err)
		}
	}()
}

// deleteBatch deletes one batch of files. A checksum companion follows its file only after
// the file itself is gone, so that a failure never leaves a file without its checksum.
func (ex *executor) deleteBatch(ctx context.Context, batch []File) error {
	keys := make([]string, len(batch))
	for i, f := range batch {
		keys[i] = f.Path
	}
	results, err := ex.deleteListed(ctx, batch, keys)
	if len(results) < len(batch) {
		// The deleter answered for none (or only some) of the batch: a stop before it sent it
		// (the lock confirmed first, the run interrupted), or a request that failed whole.
		why := err
		if why == nil {
			why = fmt.Errorf("the store answered for %d of %d files", len(results), len(batch))
		}
		stopped := ctx.Err() != nil
		ex.mu.Lock()
		for _, f := range batch[len(results):] {
			if stopped {
				ex.res.NotReached = append(ex.res.NotReached, f.Path) // the run stopped: never sent
				ex.keepAbove(f.Path)
				continue
			}
			ex.fail(f.Path, why)
			if ex.opts.Counters != nil {
				ex.opts.Counters.Failed.Add(1)
			}
		}
		ex.mu.Unlock()
	}
	ex.confirmGone(ctx, results)
	counters := ex.opts.Counters
	var companions []string
	var companionSizes []int64
	ex.mu.Lock()
	for i, r := range results {
		switch {
		case r.Err != nil && errors.Is(r.Err, storage.ErrChanged):
			// Written again since the listing: kept, with its companion.
			ex.dropLocked(Dropped{Path: r.Key, Reason: DropChanged, Version: -1}, false)
			continue
		case r.Err != nil:
			ex.fail(r.Key, r.Err)
		case r.Gone:
			ex.res.NumAlreadyGone++
		default:
			ex.res.NumDeletedFiles++
			ex.res.SizeOfDeletedData += batch[i].Size
		}
		if counters != nil {
			if r.Err != nil {
				counters.Failed.Add(1)
			} else {
				counters.Deleted.Add(1)
				counters.DeletedBytes.Add(batch[i].Size)
			}
		}
		if r.Err == nil && batch[i].Checksum != "" {
			companions = append(companions, batch[i].Checksum)
			companionSizes = append(companionSizes, batch[i].ChecksumSize)
		}
	}
	ex.mu.Unlock()
	if err != nil {
		return err
	}
	if len(companions) == 0 {
		return nil
	}
	results, err = ex.del.Delete(ctx, companions)
	ex.mu.Lock()
	for i, r := range results {
		switch {
		case r.Err != nil:
			ex.fail(r.Key, r.Err)
		case !r.Gone && i < len(companionSizes):
			ex.res.NumDeletedChecksumFiles++
			ex.res.SizeOfDeletedChecksumFiles += companionSizes[i]
		}
	}
	ex.mu.Unlock()
	return err
}

// confirmGone fails each file the store reported already gone that is at its path all the
// same: a store that took another problem for the file's absence (a file where its folder or
// the trash folder must be, a move that failed on its target) would otherwise have it counted
// gone, its checksum companion deleted, and the run end COMPLETED with the file still there.
// It costs a Stat per file gone, which few are (deleted since the listing).
func (ex *executor) confirmGone(ctx context.Context, results []storage.DeleteResult) {
	for i := range results {
		r := &results[i]
		if !r.Gone || r.Err != nil {
			continue
		}
		switch _, err := ex.store.Stat(ctx, r.Key); {
		case errors.Is(err, storage.ErrNotExist):
		case err == nil:
			r.Gone, r.Err = false, fmt.Errorf("%s: the store reported it already gone, but it is there: not deleted", r.Key)
		default:
			r.Gone, r.Err = false, fmt.Errorf("%s: the store reported it already gone, and whether it is still there could not be told: %w", r.Key, err)
		}
	}
}

// deleteListed deletes the files of a batch, each on the condition that it is still the
// version listed where the store can (storage.ConditionalDeleter) and the file has one.
func (ex *executor) deleteListed(ctx context.Context, batch []File, keys []string) ([]storage.DeleteResult, error) {
	cd, ok := ex.del.(storage.ConditionalDeleter)
	if !ok {
		return ex.del.Delete(ctx, keys)
	}
	versions := make([]string, len(batch))
	conditional := false
	for i, f := range batch {
		versions[i] = f.Version
		conditional = conditional || f.Version != ""
	}
	if !conditional {
		return ex.del.Delete(ctx, keys)
	}
	return cd.DeleteIfUnchanged(ctx, keys, versions)
}

// deleteDirs removes the planned directories bottom-up (the plan lists children before
// parents), each only when empty, probing the log first and again every BatchSize
// directories.
func (ex *executor) deleteDirs(ctx context.Context) error {
	for i := range ex.plan.Dirs {
		d := &ex.plan.Dirs[i]
		if i%ex.opts.BatchSize == 0 {
			if err := ex.tail.probe(ctx); err != nil {
				return stopCause(ctx, err)
			}
		}
		key := d.Path + "/"
		if ex.keepDirs[key] {
			continue
		}
		if dr, keep := ex.tail.keepDir(d); keep {
			ex.drop(dr, true)
			continue
		}
		results, err := ex.del.Delete(ctx, []string{key})
		if err != nil {
			return err
		}
		switch r := results[0]; {
		case r.Err == nil && !r.Gone:
			ex.res.NumDeletedDirectories++
		case r.Err != nil && errors.Is(r.Err, storage.ErrNotEmpty):
			// Something was written into it since the listing: keep it.
			ex.keepAbove(key)
		case r.Err != nil:
			ex.fail(key, r.Err)
		}
	}
	return nil
}

// acted returns the plan as the run acted on it: without what it dropped, with the cutoff and
// retention it ended with (earlier and longer when a newer metaData raised the retention).
func (ex *executor) acted() (*Plan, error) {
	if len(ex.dropped) == 0 && ex.tail.raisedAt < 0 {
		return ex.plan, nil
	}
	out := *ex.plan
	out.Cutoff, out.RetentionHours = ex.tail.cutoff.UTC(), ex.tail.run.Hours()
	out.NumFilesToDelete, out.SizeOfDataToDelete = 0, 0
	out.NumChecksumFiles, out.SizeOfChecksumFiles = 0, 0
	skipped := 0
	err := ex.plan.Files.Each(func(f File) error {
		if ex.dropped[f.Path] {
			skipped++
			return nil
		}
		out.NumFilesToDelete++
		out.SizeOfDataToDelete += f.Size
		if f.Checksum != "" && !ex.dropped[f.Checksum] {
			out.NumChecksumFiles++
			out.SizeOfChecksumFiles += f.ChecksumSize
		}
		return nil
	})
	out.Files = ex.plan.Files.without(ex.dropped, skipped)
	out.Dirs = []Dir{}
	for _, d := range ex.plan.Dirs {
		if !ex.dropped[d.Path+"/"] {
			out.Dirs = append(out.Dirs, d)
		}
	}
	return &out, err
}

// defaultConcurrency is 8 Delete calls in flight, or the store's bound on its requests in
// flight when higher, so that an object store's concurrency option reaches the deletes (the
// store still bounds the requests).
func defaultConcurrency(del Deleter) int {
	if c, ok := del.(interface{ RequestConcurrency() int }); ok {
		return max(8, c.RequestConcurrency())
	}
	return 8
}

// defaultBatchSize is 1000 keys per Delete call, rounded up to a multiple of the store's own
// batch so that every request but the last is full.
func defaultBatchSize(del Deleter) int {
	const n = 1000
	b, ok := del.(storage.DeleteBatcher)
	if !ok {
		return n
	}
	size := b.DeleteBatchSize()
	if size <= 1 || size >= n {
		return max(n, size)
	}
	return (n + size - 1) / size * size
}

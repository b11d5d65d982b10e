package vacuum

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// ExecOptions control the executor.
type ExecOptions struct {
	// BatchSize is the number of keys per Delete call (default 1000, rounded up to a multiple
	// of the store's batch size when it has one: 1024 on Azure, whose batches hold 256).
	BatchSize int
	// Concurrency is the number of Delete calls in flight (default 8).
	Concurrency int
	// BeforeDelete, when set, runs after the log tail was re-checked and before the first
	// delete (the run is recorded there); an error stops the run with nothing deleted.
	BeforeDelete func(ctx context.Context, plan *Plan) error
	// Counters, when set, receive live counts for progress displays.
	Counters *Counters
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

// Result is what a run did. It embeds the plan it acted on; files a newer commit references
// were dropped from it before deleting (section 13 of the contract) and are listed in Dropped.
type Result struct {
	*Plan
	DryRun                bool      `json:"dryRun"`
	Status                string    `json:"status"`
	NumDeletedFiles       int64     `json:"numDeletedFiles"`
	NumAlreadyGone        int64     `json:"numAlreadyGoneFiles"`
	NumDeletedDirectories int64     `json:"numDeletedDirectories"`
	Dropped               []string  `json:"droppedByRecheck,omitempty"`
	Failed                []Failure `json:"failed,omitempty"`
	// Requests are the storage requests of the run, on stores that count them.
	Requests *storage.RequestCounts `json:"requests,omitempty"`
}

// DryRun returns the result of a DRY RUN: the plan, nothing deleted.
func DryRun(plan *Plan) *Result {
	return &Result{Plan: plan, DryRun: true, Status: StatusCompleted}
}

// ErrPartialFailure is returned (wrapped) when some keys could not be deleted.
var ErrPartialFailure = errors.New("some files could not be deleted")

// Execute re-checks the log tail, then deletes what plan lists: files (with their checksum
// companions) in concurrent batches, then directories bottom-up. A key already gone counts as
// gone, not as an error. Failures are reported in the result; the error is then non-nil too.
func Execute(ctx context.Context, store storage.Store, plan *Plan, opts ExecOptions) (*Result, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = defaultBatchSize(store)
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	res := &Result{Plan: plan, Status: StatusFailed}
	counters := opts.Counters
	counters.SetPhase("re-checking the log")
	defer counters.SetPhase("done")
	dropped, err := recheck(ctx, store, plan)
	if err != nil {
		return res, err
	}
	if len(dropped) > 0 {
		res.Plan = withoutReferenced(plan, dropped)
		for k := range dropped {
			res.Dropped = append(res.Dropped, k)
		}
	}
	plan = res.Plan
	if opts.BeforeDelete != nil {
		if err := opts.BeforeDelete(ctx, plan); err != nil {
			return res, err
		}
	}

	counters.SetPhase("deleting")
	// Files, in batches. A checksum companion follows its file in the same batch only after
	// the file itself is gone, so a failure never leaves a file without its checksum.
	var mu sync.Mutex
	failedDirs := map[string]bool{}
	fail := func(key string, err error) {
		res.Failed = append(res.Failed, Failure{Path: key, Error: err.Error()})
		for d := storage.Dir(key); d != ""; d = storage.Dir(d) {
			failedDirs[d] = true
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for start := 0; start < len(plan.Files); start += opts.BatchSize {
		batch := plan.Files[start:min(start+opts.BatchSize, len(plan.Files))]
		g.Go(func() error {
			keys := make([]string, len(batch))
			for i, f := range batch {
				keys[i] = f.Path
			}
			results, err := store.Delete(gctx, keys)
			var companions []string
			mu.Lock()
			for i, r := range results {
				switch {
				case r.Err != nil:
					fail(r.Key, r.Err)
				case r.Gone:
					res.NumAlreadyGone++
				default:
					res.NumDeletedFiles++
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
				}
			}
			mu.Unlock()
			if err != nil {
				return err
			}
			if len(companions) == 0 {
				return nil
			}
			results, err = store.Delete(gctx, companions)
			mu.Lock()
			for _, r := range results {
				if r.Err != nil {
					fail(r.Key, r.Err)
				}
			}
			mu.Unlock()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return res, fmt.Errorf("vacuum of %s interrupted after deleting %d files: %w", plan.Table, res.NumDeletedFiles, err)
	}

	// Directories, bottom-up (the plan lists children before parents).
	for _, d := range plan.Dirs {
		key := d.Path + "/"
		if failedDirs[key] {
			continue
		}
		results, err := store.Delete(ctx, []string{key})
		if err != nil {
			return res, fmt.Errorf("vacuum of %s interrupted: %w", plan.Table, err)
		}
		switch r := results[0]; {
		case r.Err == nil && !r.Gone:
			res.NumDeletedDirectories++
		case r.Err != nil && errors.Is(r.Err, storage.ErrNotEmpty):
			// Something was written into it since the listing: keep it.
			for p := storage.Dir(key); p != ""; p = storage.Dir(p) {
				failedDirs[p] = true
			}
		case r.Err != nil:
			fail(key, r.Err)
		}
	}
	if len(res.Failed) > 0 {
		return res, fmt.Errorf("vacuum of %s: %w: %d of %d (see the failed list); the files that remain are still unreferenced, so running VACUUM again is safe",
			plan.Table, ErrPartialFailure, len(res.Failed), len(plan.Files))
	}
	res.Status = StatusCompleted
	if v := plan.LatestCommitOutsideRetention; v != nil {
		// Everything the log removed up to v is now gone: later LITE runs start after it.
		// A FULL run records it too [safer]: the reference writes {} after FULL, which
		// blocks later LITE runs.
		if prev, err := deltalog.ReadLastVacuumInfo(ctx, store); err == nil && (prev == nil || *prev < *v) {
			if err := deltalog.WriteLastVacuumInfo(ctx, store, *v); err != nil {
				return res, fmt.Errorf("vacuum of %s completed, but %w", plan.Table, err)
			}
		}
	}
	return res, nil
}

// defaultBatchSize is 1000 keys per Delete call, rounded up to a multiple of the store's own
// batch so that every request but the last is full.
func defaultBatchSize(store storage.Store) int {
	const n = 1000
	b, ok := store.(storage.DeleteBatcher)
	if !ok {
		return n
	}
	size := b.DeleteBatchSize()
	if size <= 1 || size >= n {
		return max(n, size)
	}
	return (n + size - 1) / size * size
}

// recheck re-reads the log after the planned version and returns the candidate keys a newer
// commit references. It refuses to go on when the log tail cannot be read exactly.
func recheck(ctx context.Context, store storage.Store, plan *Plan) (map[string]bool, error) {
	seg, err := deltalog.ListLog(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("re-checking the log of %s before deleting: %w; nothing was deleted", plan.Table, err)
	}
	if seg.Version == plan.Version {
		return nil, nil
	}
	if seg.Version < plan.Version {
		return nil, fmt.Errorf("re-checking the log of %s before deleting: the latest version is %d, older than the planned %d; nothing was deleted", plan.Table, seg.Version, plan.Version)
	}
	root, err := deltalog.ParseRoot(plan.Table)
	if err != nil {
		return nil, err
	}
	candidates := make(map[string]bool, len(plan.Files))
	for _, f := range plan.Files {
		candidates[f.Path] = false
	}
	referenced := map[string]bool{}
	next := plan.Version + 1
	for _, c := range seg.AllCommits {
		if c.Version < next {
			continue
		}
		if c.Version != next {
			break
		}
		p, err := deltalog.CommitRefs(ctx, store, root, c, func(key string) {
			if _, ok := candidates[key]; ok {
				referenced[key] = true
			}
		})
		if err != nil {
			return nil, fmt.Errorf("re-checking the log of %s before deleting: %w; nothing was deleted", plan.Table, err)
		}
		if p != nil {
			snap := &deltalog.Snapshot{Location: plan.Table, Protocol: *p}
			if err := snap.CheckVacuum(); err != nil {
				return nil, fmt.Errorf("the protocol of %s changed after planning: %w", plan.Table, err)
			}
		}
		next++
	}
	if next <= seg.Version {
		return nil, fmt.Errorf("re-checking the log of %s before deleting: version %d is missing; nothing was deleted", plan.Table, next)
	}
	return referenced, nil
}

// withoutReferenced returns a copy of plan without the files in drop and without the
// directories above them.
func withoutReferenced(plan *Plan, drop map[string]bool) *Plan {
	out := *plan
	out.Files = []File{}
	out.NumFilesToDelete, out.SizeOfDataToDelete = 0, 0
	keepDirs := map[string]bool{}
	for _, f := range plan.Files {
		if drop[f.Path] {
			for d := storage.Dir(f.Path); d != ""; d = storage.Dir(d) {
				keepDirs[strings.TrimSuffix(d, "/")] = true
			}
			continue
		}
		out.Files = append(out.Files, f)
		out.NumFilesToDelete++
		out.SizeOfDataToDelete += f.Size
	}
	out.Dirs = []Dir{}
	for _, d := range plan.Dirs {
		if !keepDirs[d.Path] {
			out.Dirs = append(out.Dirs, d)
		}
	}
	return &out
}

package vacuum

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/deltavacuum/deltavacuum/storage"
)

// nestedProbes bounds the store requests in flight while looking for nested tables.
const nestedProbes = 8

// errFound stops a walk at its first entry.
var errFound = errors.New("found")

// takeBackNested asks the store, for every folder that holds a planned file or directory
// (and each folder above it, up to the root), whether it holds a _delta_log of its own, and
// takes back what was planned in the folders that do. A listing sees a nested table's
// _delta_log and the planner skips the folder as it walks; an inventory need not list it (a
// report filtered on a suffix, a query that keeps the data files), so with an inventory the
// store itself is asked, one request or two per folder.
func (p *Planner) takeBackNested(ctx context.Context, plan *Plan) error {
	folders, err := plannedFolders(plan)
	if err != nil {
		return err
	}
	if len(folders) == 0 {
		return nil
	}
	found := make([]bool, len(folders))
	errs := make([]error, len(folders))
	sem := make(chan struct{}, nestedProbes)
	var wg sync.WaitGroup
	for i, f := range folders {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			found[i], errs[i] = hasDeltaLog(ctx, p.store, f)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("looking for nested tables in the folders the inventory names: %w", err)
	}
	var nested []string
	for i, f := range folders {
		// folders is sorted, so a folder comes after every folder above it: keep only the
		// outermost nested table.
		if found[i] && (len(nested) == 0 || !strings.HasPrefix(f, nested[len(nested)-1])) {
			nested = append(nested, f)
		}
	}
	if len(nested) == 0 {
		return nil
	}
	inNested := func(path string) bool {
		for _, n := range nested {
			if strings.HasPrefix(path, n) {
				return true
			}
		}
		return false
	}
	files, err := plan.Files.filter(func(f File) bool {
		if !inNested(f.Path) {
			return true
		}
		plan.NumFilesToDelete--
		plan.SizeOfDataToDelete -= f.Size
		if f.Checksum != "" {
			plan.NumChecksumFiles--
			plan.SizeOfChecksumFiles -= f.ChecksumSize
		}
		if c := p.opts.Counters; c != nil {
			c.Candidates.Add(-1)
		}
		return false
	})
	if err != nil {
		return err
	}
	_ = plan.Files.Close()
	plan.Files = files
	dirs := plan.Dirs[:0]
	for _, d := range plan.Dirs {
		if !inNested(d.Path + "/") {
			dirs = append(dirs, d)
		}
	}
	plan.Dirs = dirs
	for _, n := range nested {
		t := strings.TrimSuffix(n, "/")
		if !slices.Contains(plan.NestedTables, t) {
			plan.NestedTables = append(plan.NestedTables, t)
		}
	}
	slices.Sort(plan.NestedTables)
	return nil
}

// plannedFolders returns, sorted, every folder key ("a/", "a/b/") that holds a planned file
// or directory or is one, and the folders above them; never the root.
func plannedFolders(plan *Plan) ([]string, error) {
	set := map[string]struct{}{}
	add := func(dir string) { // dir: a folder key, "" for the root
		for dir != "" {
			if _, ok := set[dir]; ok {
				return // and so are the folders above it
			}
			set[dir] = struct{}{}
			dir = storage.Dir(dir)
		}
	}
	err := plan.Files.Each(func(f File) error {
		add(storage.Dir(f.Path))
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, d := range plan.Dirs {
		add(d.Path + "/")
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out, nil
}

// hasDeltaLog reports whether the folder holds a _delta_log: an entry of that name (a file or
// a link counts, as in a listing) or a directory of that name, empty or not.
func hasDeltaLog(ctx context.Context, store storage.Store, folder string) (bool, error) {
	key := folder + "_delta_log"
	switch _, err := store.Stat(ctx, key); {
	case err == nil, errors.Is(err, storage.ErrSymlink):
		return true, nil
	case !errors.Is(err, storage.ErrNotExist):
		return false, err
	}
	err := store.Walk(ctx, key+"/", func(storage.Object) error { return errFound })
	switch {
	case err == nil, errors.Is(err, errFound), errors.Is(err, storage.ErrSymlink):
		return true, nil
	case errors.Is(err, storage.ErrNotExist):
		return false, nil
	}
	return false, err
}

// nestedTableLog reports whether a hidden entry named name, listed in the folder parent
// ("" for the root), makes that folder another Delta table (saved into this one by mistake):
// a _delta_log of its own, a directory or a link to one. Its files are live in it: the walk
// takes back what it planned in the folder already (names sorting before "_delta_log") and
// skips the rest [safer].
func nestedTableLog(name, parent string) bool { return name == "_delta_log" && parent != "" }

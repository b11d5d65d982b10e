package vacuum

import (
	"context"
	"errors"
	"fmt"

	"github.com/deltavacuum/deltavacuum/storage"
)

// lazyListing walks a store that can skip describing entries (storage.LazyWalker: local
// disk, where each entry's size and time cost an fstatat): a file the log protects is kept
// whatever its size and time, so only the others are described. With a million live files
// and a few candidates, most of those calls go.
type lazyListing struct {
	store storage.LazyWalker
	need  func(key string) bool
}

func (l lazyListing) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	return l.store.WalkLazy(ctx, prefix, l.need, fn)
}

// prunedListing walks a store that can leave out, unlisted, the directories the planner skips
// (storage.PrunedWalker: the object stores, whose listings hold many directories a page):
// every hidden directory (_delta_log/ first), whose contents the planner never looks at.
type prunedListing struct {
	store storage.PrunedWalker
	skip  func(dir string) bool
}

func (l prunedListing) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	return l.store.WalkPruned(ctx, prefix, l.skip, fn)
}

// listingOf is what a FULL plan lists: the caller's listing when given, else the store, lazily
// when it can be and nobody observes the verdicts (an observer is told every entry's size).
func (p *Planner) listingOf() Walker {
	if p.opts.Listing != nil {
		return p.opts.Listing
	}
	if lw, ok := p.store.(storage.LazyWalker); ok && p.opts.Observe == nil {
		return lazyListing{store: lw, need: func(key string) bool { return !p.keep.has(p.hash(key)) }}
	}
	if pw, ok := p.store.(storage.PrunedWalker); ok {
		// planListing returns SkipDir for every hidden directory, whatever else it sees.
		return prunedListing{store: pw, skip: func(dir string) bool { return p.hidden.hidden(storage.Base(dir)) }}
	}
	return p.store
}

// describe gives a file listed without its size and time (storage.Object.NoStat) both, from
// the store, before any rule but "protected by the log" looks at it: a candidate is never
// planned, nor kept as too new, on a time it was not listed with. gone is true when the file
// is not there any more. A file that became a directory meanwhile fails the listing.
func (p *Planner) describe(ctx context.Context, o storage.Object) (_ storage.Object, gone bool, err error) {
	st, err := p.store.Stat(ctx, o.Key)
	switch {
	case errors.Is(err, storage.ErrNotExist):
		return o, true, nil
	case err != nil:
		return o, false, err
	case st.IsDir:
		return o, false, fmt.Errorf("%s changed from a file to a directory while it was listed; run again", o.Key)
	}
	if st.IsLink {
		// Where it points is not looked at here: as if inside the table, which refuses the
		// run rather than delete a link through which live files are named.
		st.LinkIntoStore = true
	}
	st.Key = o.Key
	return st, false, nil
}

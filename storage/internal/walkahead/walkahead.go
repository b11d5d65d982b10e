// Package walkahead walks a tree of directories in name order, depth first, while the
// listings of the next directories are fetched ahead, concurrently. The object stores use it
// to hide request latency and the local store to overlap its system calls with the caller's
// work on another core. The order of the walk is the order of a sequential one.
package walkahead

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Listing is one directory, listed.
type Listing struct {
	// Children are sorted by name, a file before a directory of the same name; directory
	// keys end in '/'.
	Children []storage.Object
	// Entries counts everything the listing saw (a directory's own marker object included);
	// zero means the directory may not exist.
	Entries int
}

// ListFunc lists the directory key dir ("" is the root). When a directory's modification
// time is only known from its own listing (an object store's marker object), the function
// calls found with it as soon as it is known, before the rest of the listing; it may call
// found with the zero time, or not at all, when there is none.
type ListFunc func(ctx context.Context, dir string, found func(modTime time.Time)) (Listing, error)

// MaxBuffered bounds the entries listed ahead and not walked yet (a few hundred bytes each):
// no directory is listed ahead while more are buffered, which bounds the memory of huge
// partitions.
const MaxBuffered = 1 << 20

type future struct {
	first   chan struct{} // closed once the directory's modification time is known
	done    chan struct{}
	cancel  context.CancelFunc
	modTime time.Time // set before first is closed
	l       Listing
	err     error
}

// walker is one walk. Its context is passed to each call, never stored.
type walker struct {
	sem      chan struct{}
	list     ListFunc
	fn       func(storage.Object) error
	buffered atomic.Int64
}

// Walk reports every entry under prefix (a directory key) to fn in name order, depth first,
// a directory before its children; fn returning storage.SkipDir for a directory skips its
// children. Up to concurrency listings run at a time, ahead of fn. exists, when set, is
// asked whether prefix exists when its listing is empty (it returns an error wrapping
// storage.ErrNotExist when not).
func Walk(ctx context.Context, prefix string, concurrency int, list ListFunc, exists func(context.Context) error, fn func(storage.Object) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &walker{sem: make(chan struct{}, max(concurrency, 1)), list: list, fn: fn}
	f := w.start(ctx, prefix)
	<-f.done
	if f.err != nil {
		return f.err
	}
	w.buffered.Add(-int64(len(f.l.Children)))
	if prefix != "" && f.l.Entries == 0 && exists != nil {
		if err := exists(ctx); err != nil {
			return err
		}
	}
	return w.walk(ctx, f.l)
}

func (w *walker) start(ctx context.Context, dir string) *future {
	ctx, cancel := context.WithCancel(ctx)
	f := &future{first: make(chan struct{}), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(f.done)
		firstClosed := false
		closeFirst := func() {
			if !firstClosed {
				firstClosed = true
				close(f.first)
			}
		}
		defer closeFirst()
		select {
		case w.sem <- struct{}{}:
		case <-ctx.Done():
			f.err = ctx.Err()
			return
		}
		defer func() { <-w.sem }()
		f.l, f.err = w.list(ctx, dir, func(t time.Time) {
			if !firstClosed {
				f.modTime = t
				closeFirst()
			}
		})
		w.buffered.Add(int64(len(f.l.Children)))
	}()
	return f
}

// walk reports the children of one listed directory, recursively.
func (w *walker) walk(ctx context.Context, l Listing) error {
	lookahead := cap(w.sem)
	futures := map[int]*future{}
	defer func() {
		for _, f := range futures {
			f.cancel()
		}
	}()
	next := 0 // the next child index whose listing may be started ahead
	for i, o := range l.Children {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !o.IsDir {
			if err := w.fn(o); err != nil && !errors.Is(err, storage.SkipDir) {
				return err
			}
			continue
		}
		// Start this directory's listing and those of the next few sibling directories.
		f := futures[i]
		if f == nil {
			f = w.start(ctx, o.Key)
			futures[i] = f
		}
		for next = max(next, i+1); next < len(l.Children) && len(futures) < lookahead && w.buffered.Load() < MaxBuffered; next++ {
			if c := l.Children[next]; c.IsDir {
				futures[next] = w.start(ctx, c.Key)
			}
		}
		if o.ModTime.IsZero() {
			select {
			case <-f.first:
			case <-ctx.Done():
				return ctx.Err()
			}
			o.ModTime = f.modTime
		}
		err := w.fn(o)
		if errors.Is(err, storage.SkipDir) {
			f.cancel()
			delete(futures, i)
			go func() { <-f.done; w.buffered.Add(-int64(len(f.l.Children))) }()
			continue
		}
		if err != nil {
			return err
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		delete(futures, i)
		f.cancel()
		w.buffered.Add(-int64(len(f.l.Children)))
		if f.err != nil {
			if errors.Is(f.err, context.Canceled) && ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("listing %s: %w", o.Key, f.err)
		}
		if err := w.walk(ctx, f.l); err != nil {
			return err
		}
	}
	return nil
}

package blobstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// listing is one directory, listed with a delimiter.
type listing struct {
	children []storage.Object // sorted by name, a file before a directory of the same name
	marker   *Entry           // the directory's own marker object (name ending in '/'), if any
	entries  int              // objects and prefixes seen, the marker included
}

// future is a listing under way.
type future struct {
	first  chan struct{} // closed once the first page is in (the marker, if any, is known)
	done   chan struct{}
	cancel context.CancelFunc
	marker *Entry // set before first is closed
	l      listing
	err    error
}

type walker struct {
	s   *Store
	ctx context.Context
	sem chan struct{}
	fn  func(storage.Object) error
	// buffered is the number of entries listed ahead and not walked yet: no directory is
	// listed ahead while it is over maxBuffered, which bounds the memory of huge partitions.
	buffered atomic.Int64
}

// maxBuffered bounds the entries listed ahead of the walk (about 150 bytes each).
const maxBuffered = 1 << 20

// Walk implements storage.Store. Each directory is listed with a delimiter, page by page, and
// its entries sorted by name before they are reported; the listings of the next directories
// are fetched ahead, concurrently (up to Config.Concurrency requests), while fn runs.
func (s *Store) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	if !storage.ValidKey(prefix) || (prefix != "" && !strings.HasSuffix(prefix, "/")) {
		return fmt.Errorf("invalid directory key %q", prefix)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &walker{s: s, ctx: ctx, sem: make(chan struct{}, s.cfg.Concurrency), fn: fn}
	f := w.start(prefix)
	<-f.done
	if f.err != nil {
		return f.err
	}
	w.buffered.Add(-int64(len(f.l.children)))
	if prefix != "" && f.l.entries == 0 {
		if _, err := s.Stat(ctx, prefix); err != nil {
			if errors.Is(err, storage.ErrNotExist) {
				return fmt.Errorf("%w: directory %s", storage.ErrNotExist, prefix)
			}
			return err
		}
	}
	return w.walk(f.l)
}

func (w *walker) start(dir string) *future {
	ctx, cancel := context.WithCancel(w.ctx)
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
		f.l, f.err = w.s.list(ctx, dir, func(marker *Entry) {
			f.marker = marker
			closeFirst()
		})
		w.buffered.Add(int64(len(f.l.children)))
	}()
	return f
}

// list lists the directory key dir (relative to the root). onFirst is called after the first
// page with the directory's marker, if the page had it.
func (s *Store) list(ctx context.Context, dir string, onFirst func(*Entry)) (listing, error) {
	full := s.cfg.Root + dir
	var l listing
	dirs := map[string]int{} // key -> index in l.children
	addDir := func(key string, mod time.Time) {
		if i, ok := dirs[key]; ok {
			if l.children[i].ModTime.IsZero() {
				l.children[i].ModTime = mod
			}
			return
		}
		dirs[key] = len(l.children)
		l.children = append(l.children, storage.Object{Key: key, IsDir: true, ModTime: mod})
	}
	pages := 0
	err := s.b.List(ctx, full, true, 0, func(p Page) error {
		for _, e := range p.Entries {
			if !strings.HasPrefix(e.Name, full) {
				continue
			}
			l.entries++
			rest := e.Name[len(full):]
			if rest == "" {
				if dir != "" {
					m := e
					l.marker = &m
				}
				continue
			}
			name, tail, slash := strings.Cut(rest, "/")
			switch {
			case name == "" || name == "." || name == "..":
				// Not a valid key (an empty or dot component): never reported, never deleted.
			case slash && tail == "":
				addDir(dir+name+"/", e.ModTime) // a marker listed in its parent
			case slash:
				// A name below a subdirectory in a delimited listing: not expected; the
				// subdirectory's own listing reports it.
			case e.Dir:
				addDir(dir+name+"/", e.ModTime)
			default:
				l.children = append(l.children, storage.Object{Key: dir + name, Size: e.Size, ModTime: e.ModTime})
			}
		}
		for _, p := range p.Prefixes {
			if !strings.HasPrefix(p, full) {
				continue
			}
			l.entries++
			name := strings.TrimSuffix(p[len(full):], "/")
			if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
				continue
			}
			addDir(dir+name+"/", time.Time{})
		}
		pages++
		if pages == 1 && onFirst != nil {
			onFirst(l.marker)
		}
		return nil
	})
	if err != nil {
		return listing{}, err
	}
	if pages == 0 && onFirst != nil {
		onFirst(l.marker)
	}
	sort.SliceStable(l.children, func(i, j int) bool {
		a, b := l.children[i], l.children[j]
		an, bn := storage.Base(a.Key), storage.Base(b.Key)
		if an != bn {
			return an < bn
		}
		return !a.IsDir && b.IsDir
	})
	return l, nil
}

// walk reports the children of one listed directory, recursively.
func (w *walker) walk(l listing) error {
	lookahead := cap(w.sem)
	futures := map[int]*future{}
	defer func() {
		for _, f := range futures {
			f.cancel()
		}
	}()
	next := 0 // the next child index whose listing may be started ahead
	for i, o := range l.children {
		if err := w.ctx.Err(); err != nil {
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
			f = w.start(o.Key)
			futures[i] = f
		}
		for next = max(next, i+1); next < len(l.children) && len(futures) < lookahead && w.buffered.Load() < maxBuffered; next++ {
			if c := l.children[next]; c.IsDir {
				futures[next] = w.start(c.Key)
			}
		}
		if o.ModTime.IsZero() {
			select {
			case <-f.first:
			case <-w.ctx.Done():
				return w.ctx.Err()
			}
			if f.marker != nil {
				o.ModTime = f.marker.ModTime
			}
		}
		err := w.fn(o)
		if errors.Is(err, storage.SkipDir) {
			f.cancel()
			delete(futures, i)
			go func() { <-f.done; w.buffered.Add(-int64(len(f.l.children))) }()
			continue
		}
		if err != nil {
			return err
		}
		select {
		case <-f.done:
		case <-w.ctx.Done():
			return w.ctx.Err()
		}
		delete(futures, i)
		f.cancel()
		w.buffered.Add(-int64(len(f.l.children)))
		if f.err != nil {
			if errors.Is(f.err, context.Canceled) && w.ctx.Err() != nil {
				return w.ctx.Err()
			}
			return fmt.Errorf("listing %s: %w", o.Key, f.err)
		}
		if err := w.walk(f.l); err != nil {
			return err
		}
	}
	return nil
}

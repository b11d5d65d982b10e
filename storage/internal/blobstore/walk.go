package blobstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/internal/walkahead"
)

// Walk implements storage.Store. Where the backend lists in a known order (FlatLister), the
// tree is listed without a delimiter, many directories a page, in ranges listed in parallel
// when it is large (flatwalk.go); otherwise each directory is listed apart (walkDelimited).
func (s *Store) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	return s.WalkPruned(ctx, prefix, nil, fn)
}

// WalkPruned implements storage.PrunedWalker.
func (s *Store) WalkPruned(ctx context.Context, prefix string, skip func(dir string) bool, fn func(storage.Object) error) error {
	if !storage.ValidKey(prefix) || (prefix != "" && !strings.HasSuffix(prefix, "/")) {
		return fmt.Errorf("invalid directory key %q", prefix)
	}
	if fl, ok := s.b.(FlatLister); ok && !s.cfg.Delimited {
		if l := fl.FlatListing(ctx, false); l.Orders != 0 {
			reported := 0
			err := s.flat(ctx, prefix, l, skip, func(o storage.Object) error {
				reported++
				return fn(o)
			})
			var oe *OrderError
			if errors.As(err, &oe) && reported == 0 {
				// Nothing was reported yet: the walk can still list directory by directory.
				return s.walkDelimited(ctx, prefix, skip, fn)
			}
			return err
		}
	}
	return s.walkDelimited(ctx, prefix, skip, fn)
}

// ListDir implements storage.DirLister: one delimited listing started at from (S3
// StartAfter, GCS startOffset, Azure startFrom on a flat namespace). A service found to
// ignore the start (names before it in its answer) makes this and every later call
// errors.ErrUnsupported; so does one whose FlatListing does not say that it starts
// listings at a name (an Azure hierarchical namespace, an account that does not say which it
// is): where it would start at a name that does not exist (the re-check's) is not known,
// and names past it left out would go unnoticed.
func (s *Store) ListDir(ctx context.Context, dir, from string, limit int, fn func(storage.Object) error) (bool, error) {
	if !storage.ValidKey(dir) || (dir != "" && !strings.HasSuffix(dir, "/")) || strings.Contains(from, "/") {
		return false, fmt.Errorf("invalid directory key %q or name %q", dir, from)
	}
	if fl, ok := s.b.(FlatLister); !ok || s.dirFromIgnored.Load() || (from != "" && !fl.FlatListing(ctx, true).From) {
		return false, fmt.Errorf("listing %s from %q: %w", dir, from, errors.ErrUnsupported)
	}
	full := s.cfg.Root + dir
	var objs []storage.Object
	more := false
	o := ListOptions{Delim: true, Limit: limit}
	if from != "" {
		o.From = full + from
	}
	err := s.b.List(ctx, full, o, func(p Page) error {
		add := func(name string, o storage.Object) {
			if !strings.HasPrefix(name, full) {
				return
			}
			rest := strings.TrimSuffix(name[len(full):], "/")
			if !validName(rest) || strings.Contains(rest, "/") {
				return
			}
			if rest < from {
				if rest <= Before(from) {
					s.dirFromIgnored.Store(true)
				}
				return
			}
			o.Key = dir + rest
			if o.IsDir {
				o.Key += "/"
			}
			objs = append(objs, o)
		}
		for _, e := range p.Entries {
			if e.Dir || strings.HasSuffix(e.Name, "/") {
				add(e.Name, storage.Object{IsDir: true, ModTime: e.ModTime})
				continue
			}
			add(e.Name, storage.Object{Size: e.Size, ModTime: e.ModTime})
		}
		for _, pr := range p.Prefixes {
			add(pr, storage.Object{IsDir: true})
		}
		more = p.Truncated
		return ErrStop
	})
	if err != nil && !errors.Is(err, ErrStop) {
		return false, err
	}
	if s.dirFromIgnored.Load() {
		return false, fmt.Errorf("listing %s from %q: the service ignores where a listing starts: %w", dir, from, errors.ErrUnsupported)
	}
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := storage.Base(objs[i].Key), storage.Base(objs[j].Key)
		return a < b || (a == b && !objs[i].IsDir && objs[j].IsDir)
	})
	if limit > 0 && len(objs) > limit {
		objs, more = objs[:limit], true
	}
	for _, o := range objs {
		if err := fn(o); err != nil {
			return more, err
		}
	}
	return more, nil
}

// walkDelimited lists each directory with a delimiter, page by page, and sorts its entries by
// name before they are reported; the listings of the next directories are fetched ahead,
// concurrently (up to Config.Concurrency requests), while fn runs.
func (s *Store) walkDelimited(ctx context.Context, prefix string, skip func(dir string) bool, fn func(storage.Object) error) error {
	if skip != nil {
		inner := fn
		fn = func(o storage.Object) error {
			err := inner(o)
			if o.IsDir && skip(o.Key) && (err == nil || errors.Is(err, storage.SkipDir)) {
				return storage.SkipDir
			}
			return err
		}
	}
	exists := func(ctx context.Context) error {
		if _, err := s.Stat(ctx, prefix); err != nil {
			if errors.Is(err, storage.ErrNotExist) {
				return fmt.Errorf("%w: directory %s", storage.ErrNotExist, prefix)
			}
			return err
		}
		return nil
	}
	return walkahead.Walk(ctx, prefix, s.cfg.Concurrency, s.list, exists, fn)
}

// list lists the directory key dir (relative to the root). found is called after the first
// page with the modification time of the directory's marker object (zero without one).
func (s *Store) list(ctx context.Context, dir string, found func(time.Time)) (walkahead.Listing, error) {
	full := s.cfg.Root + dir
	var l walkahead.Listing
	var marker time.Time
	dirs := map[string]int{} // key -> index in l.Children
	addDir := func(key string, mod time.Time) {
		if i, ok := dirs[key]; ok {
			if l.Children[i].ModTime.IsZero() {
				l.Children[i].ModTime = mod
			}
			return
		}
		dirs[key] = len(l.Children)
		l.Children = append(l.Children, storage.Object{Key: key, IsDir: true, ModTime: mod})
	}
	pages := 0
	err := s.b.List(ctx, full, ListOptions{Delim: true}, func(p Page) error {
		for _, e := range p.Entries {
			if !strings.HasPrefix(e.Name, full) {
				continue
			}
			l.Entries++
			rest := e.Name[len(full):]
			if rest == "" {
				if dir != "" {
					marker = e.ModTime
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
				o := storage.Object{Key: dir + name, Size: e.Size, ModTime: e.ModTime}
				if s.cfg.ConditionalDeletes {
					o.Version = e.Version
				}
				l.Children = append(l.Children, o)
			}
		}
		for _, p := range p.Prefixes {
			if !strings.HasPrefix(p, full) {
				continue
			}
			l.Entries++
			name := strings.TrimSuffix(p[len(full):], "/")
			if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
				continue
			}
			addDir(dir+name+"/", time.Time{})
		}
		pages++
		if pages == 1 {
			found(marker)
		}
		return nil
	})
	if err != nil {
		return walkahead.Listing{}, err
	}
	if pages == 0 {
		found(marker)
	}
	sort.SliceStable(l.Children, func(i, j int) bool {
		a, b := l.Children[i], l.Children[j]
		an, bn := storage.Base(a.Key), storage.Base(b.Key)
		if an != bn {
			return an < bn
		}
		return !a.IsDir && b.IsDir
	})
	return l, nil
}

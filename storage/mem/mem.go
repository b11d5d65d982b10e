// Package mem is an in-memory storage backend for tests and the synthetic benchmarks. It behaves
// like an object store: directories exist implicitly through the keys below them, or explicitly
// as directory markers (keys ending in '/').
package mem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

type entry struct {
	data    []byte
	modTime time.Time
}

// Store is an in-memory object store. It is safe for concurrent use.
type Store struct {
	location string
	now      func() time.Time

	mu      sync.Mutex
	objects map[string]entry // files and directory markers (keys ending in '/')
}

var _ storage.Store = (*Store)(nil)

// New returns an empty store whose Location is location (for example "mem://table").
func New(location string) *Store {
	return &Store{location: location, now: time.Now, objects: map[string]entry{}}
}

// SetClock sets the clock used for modification times of written objects.
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// Location implements storage.Store.
func (s *Store) Location() string { return s.location }

// PutAt creates or replaces key with data and the given modification time. A key ending in '/'
// creates a directory marker.
func (s *Store) PutAt(key string, data []byte, modTime time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[key] = entry{data: append([]byte(nil), data...), modTime: modTime}
}

// Chtime sets the modification time of an existing key.
func (s *Store) Chtime(key string, modTime time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.objects[key]
	if !ok {
		return fmt.Errorf("%w: %s", storage.ErrNotExist, key)
	}
	e.modTime = modTime
	s.objects[key] = e
	return nil
}

// Keys returns every key, sorted.
func (s *Store) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.objects))
	for k := range s.objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Walk implements storage.Store.
func (s *Store) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	if !storage.ValidKey(prefix) || (prefix != "" && !strings.HasSuffix(prefix, "/")) {
		return fmt.Errorf("invalid directory key %q", prefix)
	}
	s.mu.Lock()
	var keys []string
	snap := map[string]entry{}
	for k, e := range s.objects {
		if strings.HasPrefix(k, prefix) && k != prefix {
			keys = append(keys, k[len(prefix):])
			snap[k] = e
		}
	}
	_, marker := s.objects[prefix]
	s.mu.Unlock()
	if prefix != "" && len(keys) == 0 && !marker {
		return fmt.Errorf("%w: %s", storage.ErrNotExist, prefix)
	}
	sort.Strings(keys)
	return walk(ctx, prefix, keys, snap, fn)
}

// ListDir implements storage.DirLister.
func (s *Store) ListDir(ctx context.Context, dir, from string, limit int, fn func(storage.Object) error) (bool, error) {
	if !storage.ValidKey(dir) || (dir != "" && !strings.HasSuffix(dir, "/")) {
		return false, fmt.Errorf("invalid directory key %q", dir)
	}
	s.mu.Lock()
	seen := map[string]int{} // key -> index in objs
	var objs []storage.Object
	for k, e := range s.objects {
		if !strings.HasPrefix(k, dir) || k == dir {
			continue
		}
		name, rest, isDir := strings.Cut(k[len(dir):], "/")
		if name < from {
			continue
		}
		o := storage.Object{Key: dir + name, Size: int64(len(e.data)), ModTime: e.modTime}
		if isDir {
			o = storage.Object{Key: dir + name + "/", IsDir: true}
			if rest == "" {
				o.ModTime = e.modTime
			}
		}
		if i, ok := seen[o.Key]; ok {
			if isDir && rest == "" {
				objs[i].ModTime = e.modTime // the directory's marker
			}
			continue
		}
		seen[o.Key] = len(objs)
		objs = append(objs, o)
	}
	s.mu.Unlock()
	sort.Slice(objs, func(i, j int) bool {
		a, b := storage.Base(objs[i].Key), storage.Base(objs[j].Key)
		return a < b || (a == b && !objs[i].IsDir && objs[j].IsDir)
	})
	more := false
	if limit > 0 && len(objs) > limit {
		objs, more = objs[:limit], true
	}
	for _, o := range objs {
		if err := ctx.Err(); err != nil {
			return more, err
		}
		if err := fn(o); err != nil {
			return more, err
		}
	}
	return more, nil
}

// walk reports the tree formed by rels (keys relative to dir, sorted).
func walk(ctx context.Context, dir string, rels []string, snap map[string]entry, fn func(storage.Object) error) error {
	type child struct {
		name  string
		isDir bool
		sub   []string
	}
	var children []child
	for _, r := range rels {
		name, rest, isDir := strings.Cut(r, "/")
		if n := len(children); n > 0 && children[n-1].name == name && children[n-1].isDir == isDir {
			if rest != "" {
				children[n-1].sub = append(children[n-1].sub, rest)
			}
			continue
		}
		c := child{name: name, isDir: isDir}
		if rest != "" {
			c.sub = []string{rest}
		}
		children = append(children, c)
	}
	sort.SliceStable(children, func(i, j int) bool { return children[i].name < children[j].name })
	for _, c := range children {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !c.isDir {
			e := snap[dir+c.name]
			if err := fn(storage.Object{Key: dir + c.name, Size: int64(len(e.data)), ModTime: e.modTime}); err != nil && !errors.Is(err, storage.SkipDir) {
				return err
			}
			continue
		}
		key := dir + c.name + "/"
		o := storage.Object{Key: key, IsDir: true, ModTime: snap[key].modTime}
		err := fn(o)
		if errors.Is(err, storage.SkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		if err := walk(ctx, key, c.sub, snap, fn); err != nil {
			return err
		}
	}
	return nil
}

// Stat implements storage.Store.
func (s *Store) Stat(ctx context.Context, key string) (storage.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.objects[key]; ok {
		return storage.Object{Key: key, Size: int64(len(e.data)), ModTime: e.modTime, IsDir: strings.HasSuffix(key, "/")}, nil
	}
	if strings.HasSuffix(key, "/") || key == "" {
		for k := range s.objects {
			if strings.HasPrefix(k, key) {
				return storage.Object{Key: key, IsDir: true}, nil
			}
		}
	}
	return storage.Object{}, fmt.Errorf("%w: %s", storage.ErrNotExist, key)
}

type reader struct {
	data []byte
}

func (r reader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r.data)) {
		return 0, io.EOF
	}
	n := copy(p, r.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (r reader) Close() error { return nil }
func (r reader) Size() int64  { return int64(len(r.data)) }

// Open implements storage.Store.
func (s *Store) Open(ctx context.Context, key string) (storage.Reader, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.objects[key]
	if !ok || strings.HasSuffix(key, "/") {
		return nil, fmt.Errorf("%w: %s", storage.ErrNotExist, key)
	}
	return reader{data: e.data}, nil
}

// Delete implements storage.Store.
func (s *Store) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	res := make([]storage.DeleteResult, len(keys))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range keys {
		res[i].Key = k
		if k == "" || !storage.ValidKey(k) {
			res[i].Err = fmt.Errorf("invalid key %q", k)
			continue
		}
		if err := ctx.Err(); err != nil {
			res[i].Err = err
			continue
		}
		if strings.HasSuffix(k, "/") {
			for other := range s.objects {
				if strings.HasPrefix(other, k) && other != k {
					res[i].Err = fmt.Errorf("%w: %s", storage.ErrNotEmpty, k)
					break
				}
			}
			if res[i].Err != nil {
				continue
			}
		}
		if _, ok := s.objects[k]; !ok {
			res[i].Gone = true
			continue
		}
		delete(s.objects, k)
	}
	return res, ctx.Err()
}

// PutIfAbsent implements storage.Store.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if key == "" || !storage.ValidKey(key) {
		return fmt.Errorf("invalid key %q", key)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[key]; ok {
		return fmt.Errorf("%w: %s", storage.ErrExist, key)
	}
	s.objects[key] = entry{data: append([]byte(nil), data...), modTime: s.now()}
	return nil
}

// Put implements storage.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if key == "" || !storage.ValidKey(key) {
		return fmt.Errorf("invalid key %q", key)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[key] = entry{data: append([]byte(nil), data...), modTime: s.now()}
	return nil
}

var _ storage.Mover = (*Store)(nil)

// Move implements storage.Mover; the file keeps its bytes and modification time.
func (s *Store) Move(ctx context.Context, from, to string) error {
	for _, k := range []string{from, to} {
		if k == "" || strings.HasSuffix(k, "/") || !storage.ValidKey(k) {
			return fmt.Errorf("invalid key %q for a move", k)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.objects[from]
	if !ok {
		return fmt.Errorf("%w: %s", storage.ErrNotExist, from)
	}
	if _, taken := s.objects[to]; taken || from == to {
		return fmt.Errorf("%w: %s", storage.ErrExist, to)
	}
	s.objects[to] = e
	delete(s.objects, from)
	return nil
}

// Recovery implements storage.RecoveryProber: nothing deleted is kept.
func (s *Store) Recovery(context.Context) storage.Recovery {
	return storage.Recovery{Kind: storage.RecoveryNone, Detail: "in memory: a delete keeps nothing"}
}

// Package synthetic is a storage backend that serves the listing of a generated table
// (bench/tablegen) without its data files: only _delta_log/ exists, in a real directory; the
// data and deletion-vector files are computed, entry by entry, while a Walk runs. It lets the
// planner be measured at 10 million files without 10 million inodes, and its memory without
// the listing's.
//
// Deletes of data files are counted and report success without changing anything (the next
// Walk lists the files again); reads and writes under _delta_log/ go to the real directory.
package synthetic

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/deltavacuum/deltavacuum/bench/tablegen"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// Store serves a generated table.
type Store struct {
	t        *tablegen.Table
	log      *local.Store // the directory holding _delta_log/
	location string
	modTime  time.Time

	// Listed counts the entries Walk reported; Deleted the data keys Delete was given.
	Listed, Deleted atomic.Int64
}

var _ storage.Store = (*Store)(nil)

// New returns a store serving table t, whose _delta_log/ is in dir (written by
// t.WriteLog(dir)).
func New(t *tablegen.Table, dir string) (*Store, error) {
	l, err := local.New(dir)
	if err != nil {
		return nil, err
	}
	return &Store{t: t, log: l, location: l.Location(), modTime: t.Time.AddDate(0, 0, -t.AgeDays)}, nil
}

// Create writes the log of t into dir and returns a store serving the table.
func Create(t *tablegen.Table, dir string) (*Store, error) {
	if err := t.WriteLog(dir); err != nil {
		return nil, err
	}
	return New(t, dir)
}

// Location implements storage.Store: the directory holding the log, as a file URI.
func (s *Store) Location() string { return s.location }

func isLog(key string) bool { return strings.HasPrefix(key, deltalog.LogDir) }

// partition returns the partition whose directory key is dir, or -1.
func (s *Store) partition(dir string) int {
	if s.t.Partitions == 0 || !strings.HasPrefix(dir, "date=") || !strings.HasSuffix(dir, "/") {
		return -1
	}
	d, err := time.Parse("2006-01-02", dir[len("date="):len(dir)-1])
	if err != nil {
		return -1
	}
	p := int(d.Sub(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)).Hours() / 24)
	if p < 0 || p >= s.t.Partitions || s.t.Dir(p) != dir {
		return -1
	}
	return p
}

// Walk implements storage.Store.
func (s *Store) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	count := func(o storage.Object) error {
		s.Listed.Add(1)
		return fn(o)
	}
	switch {
	case isLog(prefix):
		return s.log.Walk(ctx, prefix, count)
	case prefix == "":
		return s.walkRoot(ctx, count)
	}
	p := s.partition(prefix)
	if p < 0 {
		return fmt.Errorf("%w: %s", storage.ErrNotExist, prefix)
	}
	return s.walkDir(ctx, p, fn)
}

func (s *Store) dirObject(key string) storage.Object {
	return storage.Object{Key: key, IsDir: true, ModTime: s.modTime}
}

func (s *Store) walkRoot(ctx context.Context, fn func(storage.Object) error) error {
	// "_delta_log" sorts before "date=..." and "deletion_vector_...", which sorts before
	// "part-...".
	switch err := fn(s.dirObject(deltalog.LogDir)); {
	case errors.Is(err, storage.SkipDir):
	case err != nil:
		return err
	default:
		if err := s.log.Walk(ctx, deltalog.LogDir, fn); err != nil {
			return err
		}
	}
	for p := 0; p < s.t.Partitions; p++ {
		switch err := fn(s.dirObject(s.t.Dir(p))); {
		case errors.Is(err, storage.SkipDir):
			continue
		case err != nil:
			return err
		}
		if err := s.walkDir(ctx, p, fn); err != nil {
			return err
		}
	}
	for d := int64(0); d < s.t.DVFiles(); d++ {
		if err := fn(storage.Object{Key: s.t.DVKey(d), Size: tablegen.DVSize, ModTime: s.modTime}); err != nil && !errors.Is(err, storage.SkipDir) {
			return err
		}
	}
	if s.t.Partitions == 0 {
		return s.walkDir(ctx, 0, fn)
	}
	return nil
}

func (s *Store) walkDir(ctx context.Context, p int, fn func(storage.Object) error) error {
	dir := s.t.Dir(p)
	buf := make([]byte, 0, 128)
	n := s.t.DirFiles(p)
	for j := int64(0); j < n; j++ {
		if j%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		buf = s.t.AppendName(append(buf[:0], dir...), s.t.FileID(p, j))
		o := storage.Object{Key: string(buf), Size: tablegen.FileSize, ModTime: s.modTime}
		if err := fn(o); err != nil && !errors.Is(err, storage.SkipDir) {
			return err
		}
	}
	return nil
}

// exists reports whether key names a served data file, DV file or directory.
func (s *Store) exists(key string) (storage.Object, bool) {
	if key == "" {
		return s.dirObject(""), true
	}
	if p := s.partition(key); p >= 0 {
		return s.dirObject(key), true
	}
	dir, name := storage.Dir(key), storage.Base(key)
	if strings.HasPrefix(name, "deletion_vector_") && dir == "" && len(name) > len("deletion_vector_")+8 {
		d, err := strconv.ParseUint(name[len("deletion_vector_"):len("deletion_vector_")+8], 16, 32)
		if err == nil && int64(d) < s.t.DVFiles() && s.t.DVKey(int64(d)) == key {
			return storage.Object{Key: key, Size: tablegen.DVSize, ModTime: s.modTime}, true
		}
		return storage.Object{}, false
	}
	p := 0
	if s.t.Partitions > 0 {
		if p = s.partition(dir); p < 0 {
			return storage.Object{}, false
		}
	} else if dir != "" {
		return storage.Object{}, false
	}
	seq, _, ok := strings.Cut(strings.TrimPrefix(name, "part-"), "-")
	j, err := strconv.ParseInt(seq, 10, 64)
	if !ok || err != nil || j < 0 || j >= s.t.DirFiles(p) || s.t.Key(s.t.FileID(p, j)) != key {
		return storage.Object{}, false
	}
	return storage.Object{Key: key, Size: tablegen.FileSize, ModTime: s.modTime}, true
}

// Stat implements storage.Store.
func (s *Store) Stat(ctx context.Context, key string) (storage.Object, error) {
	if isLog(key) {
		return s.log.Stat(ctx, key)
	}
	if o, ok := s.exists(key); ok {
		return o, nil
	}
	return storage.Object{}, fmt.Errorf("%w: %s", storage.ErrNotExist, key)
}

type emptyReader struct{}

func (emptyReader) ReadAt(p []byte, off int64) (int, error) {
	return 0, errors.New("synthetic data files have no content")
}
func (emptyReader) Close() error { return nil }
func (emptyReader) Size() int64  { return 0 }

// Open implements storage.Store. Data files open as empty readers that fail every read.
func (s *Store) Open(ctx context.Context, key string) (storage.Reader, error) {
	if isLog(key) {
		return s.log.Open(ctx, key)
	}
	if o, ok := s.exists(key); ok && !o.IsDir {
		return emptyReader{}, nil
	}
	return nil, fmt.Errorf("%w: %s", storage.ErrNotExist, key)
}

// Delete implements storage.Store: log keys are deleted for real; data keys are counted and
// reported deleted when they exist, gone otherwise, and keep existing.
func (s *Store) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	res := make([]storage.DeleteResult, len(keys))
	for i, k := range keys {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if isLog(k) {
			r, err := s.log.Delete(ctx, []string{k})
			if err != nil {
				return res, err
			}
			res[i] = r[0]
			continue
		}
		s.Deleted.Add(1)
		_, ok := s.exists(k)
		res[i] = storage.DeleteResult{Key: k, Gone: !ok}
	}
	return res, nil
}

// PutIfAbsent implements storage.Store (only under _delta_log/).
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if !isLog(key) {
		return fmt.Errorf("synthetic store: writes are only allowed under %s, not %s", deltalog.LogDir, key)
	}
	return s.log.PutIfAbsent(ctx, key, data)
}

// Put implements storage.Store (only under _delta_log/).
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if !isLog(key) {
		return fmt.Errorf("synthetic store: writes are only allowed under %s, not %s", deltalog.LogDir, key)
	}
	return s.log.Put(ctx, key, data)
}

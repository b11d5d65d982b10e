package tablegen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/checkpointwriter"
)

// touch creates an empty file at path (unless it exists) with modification time mt.
func touch(path string, mt []syscall.Timespec) error {
	if err := syscall.Mknod(path, syscall.S_IFREG|0o644, 0); err != nil && err != syscall.EEXIST {
		return &fs.PathError{Op: "mknod", Path: path, Err: err}
	}
	if err := syscall.UtimesNano(path, mt); err != nil {
		return &fs.PathError{Op: "utimes", Path: path, Err: err}
	}
	return nil
}

func (t *Table) oldTimes() []syscall.Timespec {
	ts := syscall.NsecToTimespec(t.oldMs * int64(time.Millisecond))
	return []syscall.Timespec{ts, ts}
}

// WriteLocal writes the table into dir, which must not exist or be empty: empty data and
// deletion-vector files with old modification times, the checkpoint, the commits,
// _last_checkpoint and _last_vacuum_info. It saves the spec beside dir (SpecPath).
func (t *Table) WriteLocal(ctx context.Context, dir string, progress func(done int64)) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("%s is not empty; the generator writes only into a new directory", dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		return err
	}
	if err := t.SaveSpec(SpecPath(dir)); err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return t.WriteLog(dir) })
	g.Go(func() error { return t.writeData(ctx, dir, func(Kind) bool { return true }, progress) })
	return g.Wait()
}

// WriteLog writes only _delta_log/ of the table into dir (bench/synthetic serves the data
// files without writing them).
func (t *Table) WriteLog(dir string) error {
	logDir := filepath.Join(dir, "_delta_log")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	ct := t.CommitTime(CheckpointVersion)
	for i := range t.CheckpointParts() {
		key, rows := t.CheckpointPart(i)
		if err := writeParquet(filepath.Join(dir, filepath.FromSlash(key)), rows, ct); err != nil {
			return err
		}
	}
	for v := int64(CheckpointVersion); v <= t.LatestVersion(); v++ {
		if err := t.writeCommitFile(dir, v); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(logDir, "_last_checkpoint"), t.LastCheckpoint(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(logDir, "_last_vacuum_info"), t.LastVacuumInfo(), 0o644)
}

func writeParquet(path string, rows iter.Seq[*deltalog.Action], mt time.Time) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := checkpointwriter.Write(bw, rows); err != nil {
		f.Close()
		return fmt.Errorf("writing the checkpoint: %w", err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Chtimes(path, mt, mt)
}

func (t *Table) writeCommitFile(dir string, v int64) error {
	path := filepath.Join(dir, filepath.FromSlash(deltalog.CommitKey(v)))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := t.WriteCommit(bw, v); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	ct := t.CommitTime(v)
	return os.Chtimes(path, ct, ct)
}

// writeData creates the data files whose kind want accepts, and the deletion-vector files
// (live ones only when want(KindLive)).
func (t *Table) writeData(ctx context.Context, dir string, want func(Kind) bool, progress func(int64)) error {
	mt := t.oldTimes()
	var done atomic.Int64
	parts := int(t.dirs())
	next := atomic.Int64{}
	workers := max(2, runtime.GOMAXPROCS(0)*2)
	g, ctx := errgroup.WithContext(ctx)
	var mu sync.Mutex
	lastReport := time.Now()
	for range workers {
		g.Go(func() error {
			buf := make([]byte, 0, 256)
			for {
				p := int(next.Add(1) - 1)
				if p >= parts {
					return nil
				}
				pdir := filepath.Join(dir, filepath.FromSlash(t.Dir(p)))
				if err := os.MkdirAll(pdir, 0o755); err != nil {
					return err
				}
				prefix := pdir + string(filepath.Separator)
				n := t.DirFiles(p)
				for j := int64(0); j < n; j++ {
					if j%4096 == 0 {
						if err := ctx.Err(); err != nil {
							return err
						}
					}
					gid := t.FileID(p, j)
					if k, _ := t.KindOf(gid); !want(k) {
						continue
					}
					buf = t.AppendName(append(buf[:0], prefix...), gid)
					if err := touch(string(buf), mt); err != nil {
						return err
					}
					if c := done.Add(1); progress != nil && c%65536 == 0 {
						mu.Lock()
						if time.Since(lastReport) > time.Second {
							progress(c)
							lastReport = time.Now()
						}
						mu.Unlock()
					}
				}
			}
		})
	}
	g.Go(func() error {
		first := t.LiveDVFiles()
		if want(KindLive) {
			first = 0
		}
		for d := first; d < t.DVFiles(); d++ {
			if err := touch(filepath.Join(dir, t.DVKey(d)), mt); err != nil {
				return err
			}
		}
		return nil
	})
	return g.Wait()
}

// Reset restores a table written by WriteLocal after a vacuum (or the floor's rm): it puts
// _delta_log/ back as generated (commits after the generated ones and other new files
// removed, _last_vacuum_info rewritten) and re-creates every stale data file, every
// deletion-vector file and the directories a vacuum removed. With verify, it first checks that
// every live file is still there; missing ones are re-created too, and the error (wrapping
// ErrLiveFileMissing) says how many there were.
func (t *Table) Reset(ctx context.Context, dir string, verify bool) error {
	var missing error
	if verify {
		missing = t.verify(dir, true)
	}
	logDir := filepath.Join(dir, "_delta_log")
	ents, err := os.ReadDir(logDir)
	if err != nil {
		return err
	}
	keep := map[string]bool{"_last_checkpoint": true, "_last_vacuum_info": true}
	for i := range t.CheckpointParts() {
		key, _ := t.CheckpointPart(i)
		keep[filepath.Base(key)] = true
	}
	for v := int64(CheckpointVersion); v <= t.LatestVersion(); v++ {
		keep[filepath.Base(deltalog.CommitKey(v))] = true
	}
	for _, e := range ents {
		if !keep[e.Name()] {
			if err := os.RemoveAll(filepath.Join(logDir, e.Name())); err != nil {
				return err
			}
		}
	}
	for name := range keep {
		if _, err := os.Stat(filepath.Join(logDir, name)); err != nil {
			return fmt.Errorf("reset: generated log file %s is gone: %w", name, err)
		}
	}
	if err := os.WriteFile(filepath.Join(logDir, "_last_vacuum_info"), t.LastVacuumInfo(), 0o644); err != nil {
		return err
	}
	if err := t.writeData(ctx, dir, func(k Kind) bool { return k != KindLive }, nil); err != nil {
		return err
	}
	return missing
}

// ErrLiveFileMissing is returned by Verify when a live file is gone.
var ErrLiveFileMissing = errors.New("live files of the generated table are missing")

// Verify checks that every live data file and live deletion-vector file exists.
func (t *Table) Verify(dir string) error { return t.verify(dir, false) }

func (t *Table) verify(dir string, recreate bool) error {
	var missing []string
	n := 0
	mt := t.oldTimes()
	check := func(key string) error {
		p := filepath.Join(dir, filepath.FromSlash(key))
		if _, err := os.Lstat(p); err == nil {
			return nil
		}
		n++
		if len(missing) < 5 {
			missing = append(missing, key)
		}
		if recreate {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			return touch(p, mt)
		}
		return nil
	}
	for g := int64(0); g < t.total; g++ {
		if k, _ := t.KindOf(g); k != KindLive {
			continue
		}
		if err := check(t.Key(g)); err != nil {
			return err
		}
	}
	for d := int64(0); d < t.LiveDVFiles(); d++ {
		if err := check(t.DVKey(d)); err != nil {
			return err
		}
	}
	if n > 0 {
		return fmt.Errorf("%w: %d, e.g. %s", ErrLiveFileMissing, n, strings.Join(missing, ", "))
	}
	return nil
}

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/deltavacuum/deltavacuum/storage/local"
)

// The local backend's per-file system calls, against the alternatives docs/scaling.md
// recommends: stat relative to an open directory (fstatat, as find does) instead of by full
// path, and unlink without a preceding lstat (as rm -f does).

func makeFiles(b *testing.B, n int) (dir string, names []string) {
	b.Helper()
	dir = filepath.Join(b.TempDir(), "date=2020-01-01")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		name := fmt.Sprintf("part-%05d-3f2a1c5e-8b9d-4e1f-a2c3-1234567890ab.c000.snappy.parquet", i)
		if err := syscall.Mknod(filepath.Join(dir, name), syscall.S_IFREG|0o644, 0); err != nil {
			b.Fatal(err)
		}
		names = append(names, name)
	}
	return dir, names
}

func BenchmarkStat(b *testing.B) {
	const n = 10_000
	dir, names := makeFiles(b, n)
	b.Run("lstat-full-path", func(b *testing.B) {
		for b.Loop() {
			for _, name := range names {
				if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/file")
	})
	b.Run("fstatat-dirfd", func(b *testing.B) {
		d, err := os.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		defer d.Close()
		fd := int(d.Fd())
		var st unix.Stat_t
		for b.Loop() {
			for _, name := range names {
				if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/file")
	})
}

func BenchmarkDelete(b *testing.B) {
	const n = 10_000
	for _, mode := range []string{"lstat+remove", "unlink"} {
		b.Run(mode, func(b *testing.B) {
			var total int
			for b.Loop() {
				b.StopTimer()
				dir, names := makeFiles(b, n)
				b.StartTimer()
				for _, name := range names {
					p := filepath.Join(dir, name)
					if mode == "unlink" {
						if err := syscall.Unlink(p); err != nil {
							b.Fatal(err)
						}
						continue
					}
					if _, err := os.Lstat(p); err != nil {
						b.Fatal(err)
					}
					if err := os.Remove(p); err != nil {
						b.Fatal(err)
					}
				}
				total += n
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(total), "ns/file")
		})
	}
}

// BenchmarkStoreDelete deletes 20 000 files in 20 directories through local.Store.Delete, in
// calls of 1 000 keys (the executor's batch): in directory order, as a plan lists them, and
// interleaved, each key in another directory than the one before it (the worst case for a
// store that keeps the parent directory of the previous key open).
func BenchmarkStoreDelete(b *testing.B) {
	const dirs, perDir, batch = 20, 1000, 1000
	ctx := context.Background()
	for _, order := range []string{"dir-order", "interleaved"} {
		b.Run(order, func(b *testing.B) {
			var total int
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				root := b.TempDir()
				keys := make([]string, dirs*perDir)
				for d := range dirs {
					dir := fmt.Sprintf("date=2020-01-%02d", d+1)
					if err := os.Mkdir(filepath.Join(root, dir), 0o755); err != nil {
						b.Fatal(err)
					}
					for i := range perDir {
						key := fmt.Sprintf("%s/part-%05d-3f2a1c5e-8b9d-4e1f-a2c3-1234567890ab.c000.snappy.parquet", dir, i)
						if err := syscall.Mknod(filepath.Join(root, key), syscall.S_IFREG|0o644, 0); err != nil {
							b.Fatal(err)
						}
						if order == "dir-order" {
							keys[d*perDir+i] = key
						} else {
							keys[i*dirs+d] = key
						}
					}
				}
				s, err := local.New(root)
				if err != nil {
					b.Fatal(err)
				}
				before := cpuTime(b)
				b.StartTimer()
				for i := 0; i < len(keys); i += batch {
					res, err := s.Delete(ctx, keys[i:min(i+batch, len(keys))])
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range res {
						if r.Err != nil || r.Gone {
							b.Fatalf("Delete(%q) = %+v", r.Key, r)
						}
					}
				}
				b.StopTimer()
				cpu += cpuTime(b) - before
				b.StartTimer()
				total += len(keys)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(total), "ns/file")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(total), "cpu-ns/file")
		})
	}
}

// cpuTime is the user and system time of the process so far: less sensitive than wall time
// to the load of a shared machine.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

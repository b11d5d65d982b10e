package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
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

package local

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// dirent is one entry of a directory: its key (the directory's key and its name, made as one
// string) and its kind as the directory records it (d_type).
type dirent struct {
	key  string
	kind uint8
}

// regular reports whether the directory says the entry is a regular file. DT_UNKNOWN (some
// file systems record no kinds) is not: such an entry is described by fstatat.
func (d dirent) regular() bool { return d.kind == unix.DT_REG }

// direntHeader is the size of linux_dirent64 before its name: d_ino (8), d_off (8),
// d_reclen (2), d_type (1).
const direntHeader = 19

// direntBufs are the buffers of getdents64, reused across the directories of a walk.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// readDirents reads the entries of the open directory fd (f, which holds it, is not used),
// whose key is dirKey, with getdents64(2), which gives each name's kind with it: what
// Readdirnames reads, with the kinds it drops.
func readDirents(fd int, _ *os.File, dirKey string) ([]dirent, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var out []dirent
	for {
		n, err := ignoringEINTR(func() (int, error) { return unix.Getdents(fd, buf) })
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		for b := buf[:n]; len(b) > 0; {
			if len(b) < direntHeader {
				return nil, errors.New("getdents64: truncated record")
			}
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < direntHeader || reclen > len(b) {
				return nil, errors.New("getdents64: bad record length")
			}
			rec := b[:reclen]
			b = b[reclen:]
			if binary.NativeEndian.Uint64(rec[0:8]) == 0 {
				continue // a deleted entry
			}
			name := rec[direntHeader:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if string(name) == "." || string(name) == ".." || len(name) == 0 {
				continue
			}
			var key strings.Builder // one allocation, where dirKey + string(name) makes two
			key.Grow(len(dirKey) + len(name))
			key.WriteString(dirKey)
			key.Write(name)
			out = append(out, dirent{key: key.String(), kind: rec[18]})
		}
	}
}

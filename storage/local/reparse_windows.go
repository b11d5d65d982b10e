package local

import (
	"io/fs"
	"syscall"
)

// isDirReparsePoint reports a directory that is a reparse point (a junction, a mount point):
// Lstat may report it as a plain directory, and os.Root would follow it. A file that is a
// reparse point (a cloud placeholder, a deduplicated file) is read as a file.
func isDirReparsePoint(fi fs.FileInfo) bool {
	d, ok := fi.Sys().(*syscall.Win32FileAttributeData)
	const want = syscall.FILE_ATTRIBUTE_REPARSE_POINT | syscall.FILE_ATTRIBUTE_DIRECTORY
	return ok && d.FileAttributes&want == want
}

//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package local

import "io/fs"

func isDirReparsePoint(fs.FileInfo) bool { return false }

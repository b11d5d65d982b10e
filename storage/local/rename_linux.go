package local

import "golang.org/x/sys/unix"

// renameNoReplace is renameat2(RENAME_NOREPLACE), or a link then an unlink on file systems
// and kernels without it.
func renameNoReplace(sfd int, sbase string, dfd int, dbase string) error {
	err := ignoringEINTR0(func() error { return unix.Renameat2(sfd, sbase, dfd, dbase, unix.RENAME_NOREPLACE) })
	if err == unix.EINVAL || err == unix.ENOSYS {
		return linkThenUnlink(sfd, sbase, dfd, dbase)
	}
	return err
}

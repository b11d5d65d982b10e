//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package local

// renameNoReplace is a link then an unlink: rename(2) would replace the new name.
func renameNoReplace(sfd int, sbase string, dfd int, dbase string) error {
	return linkThenUnlink(sfd, sbase, dfd, dbase)
}

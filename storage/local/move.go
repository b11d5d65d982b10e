package local

import (
	"context"
	"fmt"
	"strings"

	"github.com/deltavacuum/deltavacuum/storage"
)

var _ storage.Mover = (*Store)(nil)

// movePaths checks the keys of a Move: two files (no trailing '/'), neither the root.
func movePaths(from, to string) (pf, pt string, err error) {
	for _, k := range []string{from, to} {
		if k == "" || strings.HasSuffix(k, "/") || !storage.ValidKey(k) {
			return "", "", fmt.Errorf("invalid key %q for a move: a file key is needed", k)
		}
	}
	if from == to {
		return "", "", fmt.Errorf("move %s onto itself", from)
	}
	return from, to, nil
}

// Move implements storage.Mover: a rename that never replaces to (a hard link to the new
// name, then the old name removed, or renameat2 RENAME_NOREPLACE on Linux), both names
// resolved beneath the root without following links. The file keeps its inode, bytes and
// modification time. Missing directories on the way to to are created.
func (s *Store) Move(ctx context.Context, from, to string) error {
	pf, pt, err := movePaths(from, to)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.move(pf, pt)
}

var _ storage.RecoveryProber = (*Store)(nil)

// Recovery implements storage.RecoveryProber: a local delete frees the space at once.
func (s *Store) Recovery(context.Context) storage.Recovery {
	return storage.Recovery{Kind: storage.RecoveryNone, Detail: "local disk: a delete frees the space at once and keeps nothing"}
}

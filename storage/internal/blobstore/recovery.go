package blobstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Recoverer is implemented by backends that can read what the service keeps of deleted
// objects (bucket versioning, the soft-delete policy) and bring such an object back.
type Recoverer interface {
	// Recovery reads the settings; what it cannot read is storage.RecoveryUnknown.
	Recovery(ctx context.Context) storage.Recovery
	// Restore makes the newest kept copy of the object name current again, as
	// storage.Restorer describes (d.Key is the full name here).
	Restore(ctx context.Context, d storage.Deleted) error
}

// Copier is implemented by backends with a server-side copy.
type Copier interface {
	// Copy copies the object from to the name to, failing with storage.ErrExist when to is
	// taken (a conditional copy where the service has one) and storage.ErrNotExist when
	// from is missing.
	Copy(ctx context.Context, from, to string) error
}

// VersionCopier is implemented by backends whose copies can be pinned to one version of the
// source, and that say which version they copied (GCS: a generation).
type VersionCopier interface {
	// CopyVersion copies version of from ("" for the current one) to to, as Copier.Copy
	// does, and returns the version copied. A version that is no longer there is an error
	// wrapping storage.ErrChanged when another version is at from.
	CopyVersion(ctx context.Context, from, to, version string) (string, error)
}

var (
	_ storage.ConditionalMover = (*Store)(nil)
	_ storage.RecoveryProber   = (*Store)(nil)
	_ storage.Restorer         = (*Store)(nil)
	_ storage.Mover            = (*Store)(nil)
)

// Recovery implements storage.RecoveryProber.
func (s *Store) Recovery(ctx context.Context) storage.Recovery {
	r, ok := s.b.(Recoverer)
	if !ok {
		return storage.Recovery{Kind: storage.RecoveryUnknown, Detail: "this store cannot tell whether it keeps deleted objects"}
	}
	return r.Recovery(ctx)
}

// Restore implements storage.Restorer.
func (s *Store) Restore(ctx context.Context, d storage.Deleted) error {
	if d.Key == "" || strings.HasSuffix(d.Key, "/") || !storage.ValidKey(d.Key) {
		return invalidKey(d.Key)
	}
	r, ok := s.b.(Recoverer)
	if !ok {
		return fmt.Errorf("restore %s: %w: this store keeps no deleted objects", d.Key, storage.ErrUnsupported)
	}
	full := d
	full.Key = s.cfg.Root + d.Key
	return r.Restore(ctx, full)
}

// CanMove reports whether the backend has the server-side copy Move needs.
func (s *Store) CanMove() bool {
	_, ok := s.b.(Copier)
	return ok
}

// Move implements storage.Mover: a server-side copy, then a delete of from. The copy is
// conditional where the service allows it, so nothing at to is replaced; where the backend
// can pin versions (GCS), the delete is conditional on the version copied, so a write that
// lands at from between the two is never deleted (the copy at to is removed again, and the
// move fails with ErrChanged). When the delete of from fails otherwise, the copy is left at
// to and the error says so (from is still there).
func (s *Store) Move(ctx context.Context, from, to string) error {
	return s.MoveIfUnchanged(ctx, from, to, "")
}

// MoveIfUnchanged implements storage.ConditionalMover.
func (s *Store) MoveIfUnchanged(ctx context.Context, from, to, version string) error {
	for _, k := range []string{from, to} {
		if k == "" || strings.HasSuffix(k, "/") || !storage.ValidKey(k) {
			return invalidKey(k)
		}
	}
	vc, pinned := s.b.(VersionCopier)
	vd, _ := s.b.(VersionDeleter)
	pinned = pinned && vd != nil && s.cfg.ConditionalDeletes
	if !pinned {
		if version != "" {
			return fmt.Errorf("move %s: this store cannot move on the condition that the object is unchanged; not moved", from)
		}
		c, ok := s.b.(Copier)
		if !ok {
			return fmt.Errorf("move %s: %w: this store has no server-side copy", from, storage.ErrUnsupported)
		}
		if err := c.Copy(ctx, s.cfg.Root+from, s.cfg.Root+to); err != nil {
			return fmt.Errorf("move %s to %s: %w", from, to, err)
		}
		res, err := s.Delete(ctx, []string{from})
		if err == nil {
			err = res[0].Err
		}
		if err != nil {
			return fmt.Errorf("move %s to %s: copied, but the original could not be deleted (both are there now): %w", from, to, err)
		}
		return nil
	}
	copied, err := vc.CopyVersion(ctx, s.cfg.Root+from, s.cfg.Root+to, version)
	if err != nil {
		return fmt.Errorf("move %s to %s: %w", from, to, err)
	}
	err = vd.DeleteOneIf(ctx, s.cfg.Root+from, copied)
	switch {
	case err == nil, errors.Is(err, storage.ErrNotExist):
		return nil
	case errors.Is(err, storage.ErrChanged):
		// Written again between the copy and the delete: the new object stays; the copy of
		// the old one goes.
		if derr := s.b.DeleteOne(ctx, s.cfg.Root+to); derr != nil && !errors.Is(derr, storage.ErrNotExist) {
			return fmt.Errorf("move %s: %w; the copy of the version before is left at %s (%v)", from, err, to, derr)
		}
		return fmt.Errorf("move %s: %w", from, err)
	}
	return fmt.Errorf("move %s to %s: copied, but the original could not be deleted (both are there now): %w", from, to, err)
}

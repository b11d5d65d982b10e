package storage

import (
	"context"
	"errors"
	"time"
)

// Recovery is what a store keeps of the objects it deletes, as far as its settings could be
// read: on a versioned bucket or with soft delete, a delete keeps a copy that is still billed
// (until a lifecycle rule removes it, or for the soft-delete retention), and that can be
// brought back.
type Recovery struct {
	// Kind is one of the Recovery* constants.
	Kind string `json:"kind"`
	// Days is how long a deleted object stays recoverable, and billed: the soft-delete
	// retention. 0 with RecoveryVersioning: until a lifecycle rule or a user removes the
	// noncurrent version.
	Days int `json:"days,omitempty"`
	// Detail names the setting read (or why it could not be read), for the user.
	Detail string `json:"detail"`
}

// Kinds of Recovery.
const (
	// RecoveryNone: a delete frees the storage at once and nothing can be restored.
	RecoveryNone = "none"
	// RecoveryVersioning: a delete keeps the object as a noncurrent version (S3 and GCS
	// versioning, Azure blob versioning).
	RecoveryVersioning = "versioning"
	// RecoverySoftDelete: a delete keeps the object for Days (Azure blob soft delete, OneLake,
	// GCS soft delete).
	RecoverySoftDelete = "soft-delete"
	// RecoveryUnknown: the settings could not be read (credentials without the permission, an
	// emulator without the API).
	RecoveryUnknown = "unknown"
)

// Reclaimed reports whether a delete frees the storage at once (RecoveryNone).
func (r Recovery) Reclaimed() bool { return r.Kind == RecoveryNone }

// Restorable reports whether deleted objects can be brought back (for Days, when set).
func (r Recovery) Restorable() bool {
	return r.Kind == RecoveryVersioning || r.Kind == RecoverySoftDelete
}

// RecoveryProber is implemented by stores that can tell what they keep of deleted objects.
// It never fails: what it cannot read is RecoveryUnknown, with the reason in Detail.
type RecoveryProber interface {
	Recovery(ctx context.Context) Recovery
}

// Deleted is an object a run deleted, as the run recorded it: what a restore must bring back.
type Deleted struct {
	Key string
	// Size is the size of the deleted object; < 0 when the run did not know it (a checksum
	// companion): then any size matches.
	Size    int64
	ModTime time.Time
}

// SizeMatches reports whether a kept copy of size n can be the object d.
func (d Deleted) SizeMatches(n int64) bool { return d.Size < 0 || d.Size == n }

// Restorer is implemented by stores that can bring back an object that versioning or soft
// delete kept: Restore makes the newest kept copy of d.Key current again, when that copy has
// d's size and no object is at d.Key now. An object written at d.Key since the delete is never
// replaced (ErrExist); no kept copy of that size (the window passed, a lifecycle rule removed
// it, versioning was off) is ErrNotExist. A file where a directory on the way to d.Key must
// be (on a store with directories) is ErrNotDir, neither ErrNotExist (the kept copy may well
// be there) nor ErrExist (nothing is at d.Key).
type Restorer interface {
	Restore(ctx context.Context, d Deleted) error
}

// Mover is implemented by stores that can move a file to another key of the same store
// without reading it through the client: a rename on local disk and on hierarchical-namespace
// accounts, a server-side copy then a delete elsewhere. Move never replaces an existing
// object at to (ErrExist), never follows a symbolic link, and leaves from in place when the
// move fails. A missing from is ErrNotExist, and ErrNotExist always means that from is
// missing: nothing about to ever wraps it (a caller takes it for "the file is gone"). On a
// store with directories, a file where a directory on the way to to must be is ErrNotDir
// (from stays in place), and so is a file on the way to from (as Delete: not taken for a
// missing from).
type Mover interface {
	Move(ctx context.Context, from, to string) error
}

// ConditionalMover is implemented by stores that can move a file only while it is the object
// a listing saw (GCS: the generation): MoveIfUnchanged is Move, except that a file written
// again since (another version at from) is left where it is, with nothing at to, and the
// error wraps ErrChanged. An empty version moves whatever is there, as Move does.
type ConditionalMover interface {
	MoveIfUnchanged(ctx context.Context, from, to, version string) error
}

// CanMove reports whether s moves files: it is a Mover, and (for stores whose backends may
// lack a server-side copy) says it can.
func CanMove(s Store) bool {
	if _, ok := s.(Mover); !ok {
		return false
	}
	if c, ok := s.(interface{ CanMove() bool }); ok {
		return c.CanMove()
	}
	return true
}

// ErrChanged is returned (wrapped) in a DeleteResult when the object at the key is no longer
// the one the listing saw (GCS: another generation): it was written again, and is kept. A
// Reader of an object store returns it (wrapped) when the object it opened was written again
// or deleted before a read (ReadAll opens it again).
var ErrChanged = errors.New("object changed since it was listed")

// ErrUnsupported is returned (wrapped) by Restore and Move on a store that cannot do them.
var ErrUnsupported = errors.ErrUnsupported

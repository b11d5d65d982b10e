package gcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	gcs "cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/internal/blobstore"
)

var (
	_ blobstore.Recoverer = (*backend)(nil)
	_ blobstore.Copier    = (*backend)(nil)
)

// Recovery implements blobstore.Recoverer from the bucket's attributes: object versioning
// (a delete keeps a noncurrent version) and the soft-delete policy (a delete keeps the object
// for its retention; GCS's default is 7 days).
func (b *backend) Recovery(ctx context.Context) storage.Recovery {
	attrs, err := b.bucket.Attrs(ctx)
	if err != nil {
		why := "could not read the bucket's settings"
		var ge *googleapi.Error
		if errors.As(err, &ge) && (ge.Code == http.StatusForbidden || ge.Code == http.StatusUnauthorized) {
			why = "the credentials may not read the bucket's settings (storage.buckets.get)"
		}
		return storage.Recovery{Kind: storage.RecoveryUnknown, Detail: fmt.Sprintf("gs://%s: %s: %v", b.name, why, blobstore.SafeError(err))}
	}
	return recoveryOf(b.name, attrs)
}

// recoveryOf reads versioning and the soft-delete policy of a bucket's attributes.
func recoveryOf(bucket string, attrs *gcs.BucketAttrs) storage.Recovery {
	soft, softKnown := time.Duration(0), attrs.SoftDeletePolicy != nil
	if softKnown {
		soft = attrs.SoftDeletePolicy.RetentionDuration
	}
	days := int(math.Ceil(soft.Hours() / 24))
	switch {
	case attrs.VersioningEnabled && soft > 0:
		return storage.Recovery{Kind: storage.RecoveryVersioning, Detail: fmt.Sprintf(
			"gs://%s has object versioning (deleted objects stay as noncurrent versions until a lifecycle rule or a user removes them) and soft delete for %d days after that", bucket, days)}
	case attrs.VersioningEnabled && !softKnown:
		return storage.Recovery{Kind: storage.RecoveryVersioning, Detail: fmt.Sprintf(
			"gs://%s has object versioning (deleted objects stay as noncurrent versions until a lifecycle rule or a user removes them); its soft-delete policy was not reported", bucket)}
	case attrs.VersioningEnabled:
		return storage.Recovery{Kind: storage.RecoveryVersioning, Detail: fmt.Sprintf(
			"gs://%s has object versioning (deleted objects stay as noncurrent versions until a lifecycle rule or a user removes them); soft delete is off", bucket)}
	case soft > 0:
		return storage.Recovery{Kind: storage.RecoverySoftDelete, Days: days, Detail: fmt.Sprintf(
			"gs://%s has soft delete: deleted objects are kept, and billed, for %d days (softDeletePolicy.retentionDurationSeconds %d)", bucket, days, int64(soft/time.Second))}
	case !softKnown:
		return storage.Recovery{Kind: storage.RecoveryUnknown, Detail: fmt.Sprintf(
			"gs://%s: the bucket's settings carry no softDeletePolicy (an emulator?), so whether deleted objects are kept is unknown; versioning is off", bucket)}
	}
	return storage.Recovery{Kind: storage.RecoveryNone, Detail: fmt.Sprintf("gs://%s has neither object versioning nor soft delete: a delete frees the storage at once", bucket)}
}

// Restore implements blobstore.Recoverer: when nothing is at d.Key, the newest noncurrent
// generation of d.Size (versioning) is copied back to the live name, or else the newest
// soft-deleted generation of d.Size is restored; both with the precondition that no live
// object exists, so that one written since is never replaced.
func (b *backend) Restore(ctx context.Context, d storage.Deleted) error {
	name := d.Key
	if _, err := b.bucket.Object(name).Attrs(ctx); err == nil {
		return fmt.Errorf("restore %s: %w: an object is there now (written since the delete); it is not replaced", name, storage.ErrExist)
	} else if !errors.Is(err, gcs.ErrObjectNotExist) {
		return wrap("restore", name, err)
	}
	kept, err := b.newestKept(ctx, d, &gcs.Query{Versions: true}, func(a *gcs.ObjectAttrs) bool { return !a.Deleted.IsZero() })
	if err != nil {
		return err
	}
	if kept != nil {
		dst := b.bucket.Object(name).If(gcs.Conditions{DoesNotExist: true})
		_, err := dst.CopierFrom(b.bucket.Object(name).Generation(kept.Generation)).Run(ctx)
		return b.restoreErr(ctx, kept, err)
	}
	kept, err = b.newestKept(ctx, d, &gcs.Query{SoftDeleted: true}, func(a *gcs.ObjectAttrs) bool { return !a.SoftDeleteTime.IsZero() })
	if err != nil {
		return err
	}
	if kept != nil {
		_, err := b.bucket.Object(name).Generation(kept.Generation).If(gcs.Conditions{DoesNotExist: true}).Restore(ctx, &gcs.RestoreOptions{})
		return b.restoreErr(ctx, kept, err)
	}
	return fmt.Errorf("restore %s: %w: gs://%s keeps no noncurrent or soft-deleted copy of it of %d bytes (the soft-delete window has passed, a lifecycle rule or a user removed it, or versioning and soft delete were off when it was deleted)",
		name, storage.ErrNotExist, b.name, d.Size)
}

// newestKept returns the generation of exactly d.Key, of d's size, among the objects q lists
// that kept accepts: the one whose modification time is d's (the one the run deleted, when the
// record knows it), else the highest (nil: none).
func (b *backend) newestKept(ctx context.Context, d storage.Deleted, q *gcs.Query, kept func(*gcs.ObjectAttrs) bool) (*gcs.ObjectAttrs, error) {
	name := d.Key
	q.Prefix = name
	if err := q.SetAttrSelection([]string{"Name", "Size", "Generation", "Updated", "Deleted", "SoftDeleteTime", "CRC32C", "MD5"}); err != nil {
		return nil, err
	}
	var best *gcs.ObjectAttrs
	it := b.bucket.Objects(ctx, q)
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return best, nil
		}
		if err != nil {
			return nil, wrap("restore: list", name, err)
		}
		if a.Name != name || !d.SizeMatches(a.Size) || !kept(a) {
			continue
		}
		if !d.ModTime.IsZero() && a.Updated.UnixMilli() == d.ModTime.UnixMilli() {
			return a, nil
		}
		if best == nil || a.Generation > best.Generation {
			best = a
		}
	}
}

// restoreErr is the outcome of bringing back kept. A 412 means an object is live there now:
// the one restored, when the library retried an attempt that had landed (the same bytes),
// or else one written meanwhile, which is never replaced.
func (b *backend) restoreErr(ctx context.Context, kept *gcs.ObjectAttrs, err error) error {
	name, gen := kept.Name, kept.Generation
	if isPreconditionFailed(err) {
		if live, herr := b.bucket.Object(name).Attrs(ctx); herr == nil && sameBytes(live, kept) {
			return nil
		}
		return fmt.Errorf("restore %s: %w: an object was written there meanwhile; generation %d is not brought back", name, storage.ErrExist, gen)
	}
	if err != nil {
		return wrap(fmt.Sprintf("restore (generation %d)", gen), name, err)
	}
	return nil
}

// sameBytes reports whether two objects hold the same bytes, as far as their size and
// checksums tell (CRC32C, and MD5 where both have one: composite objects have none).
func sameBytes(a, b *gcs.ObjectAttrs) bool {
	if a.Size != b.Size || a.CRC32C != b.CRC32C {
		return false
	}
	return len(a.MD5) == 0 || len(b.MD5) == 0 || bytes.Equal(a.MD5, b.MD5)
}

func isPreconditionFailed(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusPreconditionFailed
}

// Copy implements blobstore.Copier: a server-side rewrite of the generation of from read
// first, on the precondition that nothing is at to (ifGenerationMatch=0). A 412 is ErrExist,
// even when it answers a retry of an attempt that landed (the library retries the
// conditional rewrite): the move then fails with both objects there, never with one lost.
func (b *backend) Copy(ctx context.Context, from, to string) error {
	_, err := b.CopyVersion(ctx, from, to, "")
	return err
}

// CopyVersion implements blobstore.VersionCopier: the generation version of from (the
// current one when ""), to to if nothing is there (ifGenerationMatch=0); it returns the
// generation copied.
func (b *backend) CopyVersion(ctx context.Context, from, to, version string) (string, error) {
	var gen int64
	if version == "" {
		src, err := b.bucket.Object(from).Attrs(ctx)
		if err != nil {
			return "", wrap("copy", from, err)
		}
		gen = src.Generation
	} else {
		g, err := strconv.ParseInt(version, 10, 64)
		if err != nil || g <= 0 || strconv.FormatInt(g, 10) != version {
			return "", fmt.Errorf("gcs copy %s: %q is not a generation a listing gives; not copied", from, version)
		}
		gen = g
	}
	dst := b.bucket.Object(to).If(gcs.Conditions{DoesNotExist: true})
	_, err := dst.CopierFrom(b.bucket.Object(from).Generation(gen)).Run(ctx)
	notFound := errors.Is(err, gcs.ErrObjectNotExist)
	var ge *googleapi.Error
	if errors.As(err, &ge) && ge.Code == http.StatusNotFound && !strings.Contains(strings.ToLower(ge.Message), "bucket") {
		notFound = true
	}
	switch {
	case err == nil:
		return strconv.FormatInt(gen, 10), nil
	case isPreconditionFailed(err):
		return "", fmt.Errorf("%w: %s", storage.ErrExist, to)
	case notFound && version != "":
		if _, aerr := b.bucket.Object(from).Attrs(ctx); aerr == nil {
			return "", fmt.Errorf("%w: %s is no longer generation %d", storage.ErrChanged, from, gen)
		}
		return "", fmt.Errorf("%w: %s", storage.ErrNotExist, from)
	case notFound:
		return "", fmt.Errorf("%w: %s", storage.ErrNotExist, from)
	}
	return "", fmt.Errorf("gcs copy %s to %s: %w", from, to, blobstore.SafeError(err))
}

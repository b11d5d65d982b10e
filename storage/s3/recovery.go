package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/internal/blobstore"
)

var (
	_ blobstore.Recoverer = (*backend)(nil)
	_ blobstore.Copier    = (*backend)(nil)
)

// Recovery reads the bucket's versioning (GetBucketVersioning): on a versioned bucket a
// delete adds a delete marker and the object stays, billed, as a noncurrent version.
func (b *backend) Recovery(ctx context.Context) storage.Recovery {
	out, err := b.client.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(b.bucket)})
	if err != nil {
		why := safeError(err).Error()
		if status(err) == http.StatusForbidden || code(err) == "AccessDenied" {
			why = "the credentials may not read the bucket's versioning (s3:GetBucketVersioning)"
		}
		return storage.Recovery{Kind: storage.RecoveryUnknown, Detail: "bucket versioning of " + b.bucket + " unknown: " + why}
	}
	switch out.Status {
	case types.BucketVersioningStatusEnabled:
		return storage.Recovery{Kind: storage.RecoveryVersioning,
			Detail: "bucket " + b.bucket + " is versioned: a delete adds a delete marker and keeps the object as a noncurrent version until a lifecycle rule expires it"}
	case types.BucketVersioningStatusSuspended:
		return storage.Recovery{Kind: storage.RecoveryVersioning,
			Detail: "versioning of bucket " + b.bucket + " is suspended: objects written while it was enabled stay as noncurrent versions when deleted"}
	}
	return storage.Recovery{Kind: storage.RecoveryNone, Detail: "bucket " + b.bucket + " is not versioned: a delete frees the storage at once"}
}

// Restore brings back the object d.Key of a versioned bucket: when its newest version is a
// delete marker directly above a version of d's size, the marker is removed (that version is
// current again, unchanged); otherwise the newest version of d's size is copied back.
func (b *backend) Restore(ctx context.Context, d storage.Deleted) error {
	versions, markers, err := b.versionsOf(ctx, d.Key)
	if err != nil {
		return err
	}
	all := mergeVersions(versions, markers)
	if len(all) == 0 {
		return fmt.Errorf("%w: %s: the bucket holds no version of it (versioning was off when it was deleted, or a lifecycle rule removed it)", storage.ErrNotExist, d.Key)
	}
	if !all[0].marker {
		return fmt.Errorf("%w: %s: an object is there now; it is left as it is", storage.ErrExist, d.Key)
	}
	i := pickVersion(all, d)
	if i >= 0 {
		v := all[i]
		if i == 1 {
			_, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(d.Key), VersionId: aws.String(all[0].id)})
			if err != nil {
				return fmt.Errorf("s3 restore %s: removing the delete marker: %w", d.Key, safeError(err))
			}
			return nil
		}
		_, err := b.client.CopyObject(ctx, &s3.CopyObjectInput{
			Bucket: aws.String(b.bucket), Key: aws.String(d.Key),
			CopySource:  aws.String(copySource(b.bucket, d.Key) + "?versionId=" + url.QueryEscape(v.id)),
			IfNoneMatch: aws.String("*"),
		})
		if err != nil {
			return copyError("restore", d.Key, err)
		}
		return nil
	}
	return fmt.Errorf("%w: %s: no kept version has its size (%d bytes)", storage.ErrNotExist, d.Key, d.Size)
}

// pickVersion returns the index in all (newest first) of the version to bring back: of d's
// size and, when the record knows it, of d's modification time (S3 keeps seconds); failing
// that, the newest of d's size. -1: none.
func pickVersion(all []version, d storage.Deleted) int {
	newest := -1
	for i, v := range all {
		if v.marker || !d.SizeMatches(v.size) {
			continue
		}
		if !d.ModTime.IsZero() && v.at.Unix() == d.ModTime.Unix() {
			return i
		}
		if newest < 0 {
			newest = i
		}
	}
	return newest
}

// version is one entry of ListObjectVersions for one key.
type version struct {
	id     string
	marker bool
	size   int64
	at     time.Time
	latest bool
}

// versionsOf lists the versions and delete markers of exactly the key name.
func (b *backend) versionsOf(ctx context.Context, name string) ([]types.ObjectVersion, []types.DeleteMarkerEntry, error) {
	var versions []types.ObjectVersion
	var markers []types.DeleteMarkerEntry
	in := &s3.ListObjectVersionsInput{Bucket: aws.String(b.bucket), Prefix: aws.String(name)}
	for {
		out, err := b.client.ListObjectVersions(ctx, in)
		if err != nil {
			return nil, nil, fmt.Errorf("s3 list versions of %s: %w", name, safeError(err))
		}
		for _, v := range out.Versions {
			if aws.ToString(v.Key) == name {
				versions = append(versions, v)
			}
		}
		for _, m := range out.DeleteMarkers {
			if aws.ToString(m.Key) == name {
				markers = append(markers, m)
			}
		}
		if !aws.ToBool(out.IsTruncated) {
			return versions, markers, nil
		}
		if aws.ToString(out.NextKeyMarker) == aws.ToString(in.KeyMarker) && aws.ToString(out.NextVersionIdMarker) == aws.ToString(in.VersionIdMarker) {
			return nil, nil, fmt.Errorf("s3 list versions of %s: the store says the listing goes on but gives no next marker", name)
		}
		in.KeyMarker, in.VersionIdMarker = out.NextKeyMarker, out.NextVersionIdMarker
	}
}

// mergeVersions orders the versions and markers of one key newest first: the one S3 calls
// latest, then by time, newest first.
func mergeVersions(vs []types.ObjectVersion, ms []types.DeleteMarkerEntry) []version {
	all := make([]version, 0, len(vs)+len(ms))
	for _, v := range vs {
		all = append(all, version{id: aws.ToString(v.VersionId), size: aws.ToInt64(v.Size), at: aws.ToTime(v.LastModified), latest: aws.ToBool(v.IsLatest)})
	}
	for _, m := range ms {
		all = append(all, version{id: aws.ToString(m.VersionId), marker: true, at: aws.ToTime(m.LastModified), latest: aws.ToBool(m.IsLatest)})
	}
	sortVersions(all)
	return all
}

func sortVersions(all []version) {
	newer := func(a, b version) bool {
		if a.latest != b.latest {
			return a.latest
		}
		return a.at.After(b.at)
	}
	// Insertion sort: a key has few versions, and the order of equal times is kept.
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && newer(all[j], all[j-1]); j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
}

// Copy copies from to to on the server, refusing to replace an object at to (If-None-Match).
func (b *backend) Copy(ctx context.Context, from, to string) error {
	if _, err := b.Head(ctx, to); err == nil {
		return fmt.Errorf("%w: %s", storage.ErrExist, to)
	} else if !errors.Is(err, storage.ErrNotExist) {
		return err
	}
	_, err := b.client.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket: aws.String(b.bucket), Key: aws.String(to),
		CopySource:  aws.String(copySource(b.bucket, from)),
		IfNoneMatch: aws.String("*"),
	})
	if err != nil {
		return copyError("copy", from, err)
	}
	return nil
}

func copyError(op, name string, err error) error {
	switch {
	case status(err) == http.StatusPreconditionFailed || code(err) == "PreconditionFailed":
		return fmt.Errorf("%w: an object was written at %s meanwhile", storage.ErrExist, name)
	case notFound(err):
		return fmt.Errorf("%w: %s", storage.ErrNotExist, name)
	case code(err) == "InvalidRequest" && strings.Contains(err.Error(), "size"):
		return fmt.Errorf("s3 %s %s: the object is too large for a single copy (5 GB): %w", op, name, safeError(err))
	}
	return fmt.Errorf("s3 %s %s: %w", op, name, safeError(err))
}

// copySource is the x-amz-copy-source of bucket/key: every byte but the unreserved ones and
// '/' percent-encoded, so that no '+', '?' or '%' in a key is read as something else.
func copySource(bucket, key string) string {
	const hex = "0123456789ABCDEF"
	src := bucket + "/" + key
	var sb strings.Builder
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~', c == '/':
			sb.WriteByte(c)
		default:
			sb.WriteByte('%')
			sb.WriteByte(hex[c>>4])
			sb.WriteByte(hex[c&15])
		}
	}
	return sb.String()
}

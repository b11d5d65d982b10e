package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Copy implements blobstore.Copier: a server-side Copy Blob within the container, with
// If-None-Match: * on the destination, waited for until the service reports it done.
func (b *backend) Copy(ctx context.Context, from, dstName string) error {
	return b.copyURL(ctx, b.cc.NewBlobClient(from).URL(), from, dstName)
}

// copyURL copies the blob at src (a URL of this account: a blob, or one of its versions; with
// the SAS in its query when the store uses one) to the name to, which must be free. Copy
// Blob (rather than the synchronous Copy Blob From URL, limited to 256 MiB and needing the
// source authorized in the URL) takes blobs of any size, authorized within the account by the
// request's own credentials; it may finish later, so a pending copy is polled until it
// succeeds, fails or is aborted. A copy that does not succeed is an error, and its
// destination (an empty or partial blob) is deleted. On a cancelled context the copy is
// aborted and its destination deleted.
func (b *backend) copyURL(ctx context.Context, src, srcName, dstName string) error {
	op := "copy " + srcName + " to"
	dst := b.cc.NewBlobClient(dstName)
	resp, err := dst.StartCopyFromURL(ctx, src, &blob.StartCopyFromURLOptions{
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}},
	})
	if err != nil {
		var re *azcore.ResponseError
		if errors.As(err, &re) && (re.ErrorCode == "BlobAlreadyExists" || re.StatusCode == http.StatusPreconditionFailed ||
			(re.StatusCode == http.StatusConflict && re.ErrorCode == "")) {
			return fmt.Errorf("%w: %s", storage.ErrExist, dstName)
		}
		werr := wrap(op, dstName, err)
		if pathConflict(werr) {
			return b.notDir(ctx, dstName, werr) // a file on the way to the destination
		}
		return werr
	}
	id := valueOr(resp.CopyID, "")
	status := valueOr(resp.CopyStatus, "")
	wait := b.rec.pollBase
	etag := valueOr(resp.ETag, "")
	desc := ""
	for status == blob.CopyStatusTypePending {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return b.abandonCopy(dst, id, dstName, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
		p, err := dst.GetProperties(ctx, nil)
		if err != nil {
			if ctx.Err() != nil {
				return b.abandonCopy(dst, id, dstName, ctx.Err())
			}
			return wrap(op+" (waiting for the copy)", dstName, err)
		}
		if got := valueOr(p.CopyID, ""); got != id {
			return fmt.Errorf("azure %s %s: the destination now holds copy %q, not ours (%q): it was written by another client", op, dstName, got, id)
		}
		status, desc = valueOr(p.CopyStatus, ""), valueOr(p.CopyStatusDescription, "")
		etag = valueOr(p.ETag, "")
	}
	if status == blob.CopyStatusTypeSuccess {
		return nil
	}
	msg := fmt.Sprintf("azure %s %s: the copy ended %q", op, dstName, status)
	if desc != "" {
		msg += " (" + desc + ")"
	}
	if err := b.deleteCopy(context.WithoutCancel(ctx), dst, dstName, etag); err != nil {
		return fmt.Errorf("%s, and its destination could not be deleted: %w", msg, err)
	}
	return errors.New(msg + "; its destination was deleted")
}

// abandonCopy aborts a pending copy whose caller gave up, and deletes its destination.
func (b *backend) abandonCopy(dst *blob.Client, id, dstName string, cause error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := dst.AbortCopyFromURL(ctx, id, nil); err != nil {
		return fmt.Errorf("copy to %s: %w; the pending copy could not be aborted: %v", dstName, cause, wrap("abort copy", dstName, err))
	}
	if err := b.deleteCopy(ctx, dst, dstName, ""); err != nil {
		return fmt.Errorf("copy to %s: %w; aborted, but its destination could not be deleted: %v", dstName, cause, err)
	}
	return fmt.Errorf("copy to %s: %w (aborted, destination deleted)", dstName, cause)
}

// deleteCopy deletes the destination of a failed copy: only that blob (If-Match its ETag,
// when known), so that a blob written there since by someone else is left.
func (b *backend) deleteCopy(ctx context.Context, dst *blob.Client, name string, etag azcore.ETag) error {
	var opts *blob.DeleteOptions
	if etag != "" {
		opts = &blob.DeleteOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}}}
	}
	_, err := dst.Delete(ctx, opts)
	if err != nil {
		if err := wrap("delete failed copy", name, err); !errors.Is(err, storage.ErrNotExist) {
			return err
		}
	}
	return nil
}

package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/deltavacuum/deltavacuum/storage"
)

var _ storage.Mover = (*Store)(nil)

// Move implements storage.Mover. On a hierarchical-namespace account (ADLS Gen2, OneLake),
// whose HEAD of a file reports x-ms-resource-type, a move is one DFS rename, atomic and
// without copying data, If-None-Match: * on the destination; elsewhere (and with a SAS,
// whose rename source would need the token too, or without a DFS endpoint) it is blobstore's
// server-side copy, then a delete of from. A file on the way to either name (a
// hierarchical-namespace account has directories) is storage.ErrNotDir, never ErrNotExist.
func (s *Store) Move(ctx context.Context, from, to string) error {
	for _, k := range []string{from, to} {
		if k == "" || strings.HasSuffix(k, "/") || !storage.ValidKey(k) {
			return fmt.Errorf("move %s to %s: invalid key %q", from, to, k)
		}
	}
	if s.b.dfs == nil || s.b.rec.sas {
		err := s.Store.Move(ctx, from, to)
		if errors.Is(err, storage.ErrNotExist) {
			err = s.b.notDir(ctx, s.b.rec.root+from, err) // a file where from's folder was
		}
		return err
	}
	src, dst := s.b.rec.root+from, s.b.rec.root+to
	var raw *http.Response
	_, err := s.b.cc.NewBlobClient(src).GetProperties(policy.WithCaptureResponse(ctx, &raw), nil)
	if err != nil {
		err = wrap("head", src, err)
		if errors.Is(err, storage.ErrNotExist) {
			err = s.b.notDir(ctx, src, err) // a file where from's folder was: not a missing from
		}
		return fmt.Errorf("move %s to %s: %w", from, to, err)
	}
	switch raw.Header.Get("x-ms-resource-type") {
	case "file":
	case "directory":
		return fmt.Errorf("move %s to %s: %w: %s is a directory", from, to, storage.ErrNotExist, from)
	default:
		return s.Store.Move(ctx, from, to)
	}
	if err := s.b.ensureParent(ctx, dst); err != nil {
		return fmt.Errorf("move %s to %s: %w", from, to, err)
	}
	if err := s.b.dfs.rename(ctx, src, dst); err != nil {
		var e *Error
		if errors.As(err, &e) && (e.Code == "RenameDestinationParentPathNotFound" || e.Code == "PathConflict") {
			// A problem of to's folder (gone again since ensureParent, or a file on its way):
			// from is still there, and the error must not say it is missing.
			e.kind = nil
			err = s.b.notDir(ctx, dst, err)
		}
		return fmt.Errorf("move %s to %s: %w", from, to, err)
	}
	return nil
}

// rename renames the file src to dst, which must be free (DFS Create Path with
// x-ms-rename-source, "/{filesystem}/{path}" percent-encoded, and If-None-Match: *, which
// applies to the destination).
func (d *dfsClient) rename(ctx context.Context, src, dst string) error {
	u := d.endpoint + "/" + url.PathEscape(d.filesystem) + "/" + escapePath(dst)
	hdr := map[string]string{
		"x-ms-rename-source": "/" + url.PathEscape(d.filesystem) + "/" + escapePath(src),
		"If-None-Match":      "*",
	}
	err := call(ctx, d.pl, http.MethodPut, u, hdr, "rename", src, http.StatusCreated)
	var e *Error
	if errors.As(err, &e) && (e.Status == http.StatusPreconditionFailed || e.Code == "PathAlreadyExists") {
		return fmt.Errorf("%w: %s", storage.ErrExist, dst)
	}
	return err
}

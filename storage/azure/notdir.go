package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/deltavacuum/deltavacuum/storage"
)

// A hierarchical-namespace account (ADLS Gen2, OneLake) has directories: a file f stands in
// the way of every path f/..., as on local disk. The service's answers to a request through
// such a file are not all documented, and some say "not found" (a Blob API delete or HEAD of
// f/x: 404), others 409 PathConflict ("the specified path, or an element of the path, exists
// and its resource type is invalid for this operation"), or 404
// RenameDestinationParentPathNotFound for a rename. None of them may read as the file being
// gone (storage.ErrNotDir): where one could, the folders on the way are looked at (a HEAD
// each, which says x-ms-resource-type: file only on such an account; a flat account has no
// directories, and there a blob f and a blob f/x are unrelated).

// notDirError is a file of a hierarchical-namespace account met where a directory must be.
type notDirError struct{ name, file string }

func (e *notDirError) Error() string {
	return fmt.Sprintf("azure %s: %s, on the way to it, is a file, not a directory", e.name, e.file)
}

func (e *notDirError) Unwrap() error { return storage.ErrNotDir }

// resourceKind is what a HEAD of name says it is: "file" or "directory" on a
// hierarchical-namespace account (a folder blob counts as a directory anywhere), "" for a blob
// of a flat account; exists is false when nothing is there.
func (b *backend) resourceKind(ctx context.Context, name string) (kind string, exists bool, err error) {
	var raw *http.Response
	resp, err := b.cc.NewBlobClient(name).GetProperties(policy.WithCaptureResponse(ctx, &raw), nil)
	if err != nil {
		if err := wrap("head", name, err); !errors.Is(err, storage.ErrNotExist) {
			return "", false, err
		}
		return "", false, nil
	}
	if raw != nil {
		kind = raw.Header.Get("x-ms-resource-type")
	}
	if kind != "directory" && isDir(resp.Metadata, kind, valueOr(resp.ContentLength, 0)) {
		kind = "directory"
	}
	return kind, true, nil
}

// fileOnTheWay returns the nearest folder on the way to name (a full name; its ancestors up to
// and including the store's root) that is a file of a hierarchical-namespace account, or ""
// when there is none, the account is flat, or it cannot be told. seen, when set, remembers
// the answers of one call (keys in one folder share them).
func (b *backend) fileOnTheWay(ctx context.Context, name string, seen map[string]string) string {
	var walked []string
	found := ""
	for dir := strings.TrimSuffix(storage.Dir(name), "/"); dir != "" && strings.HasPrefix(dir+"/", b.rec.root); dir = strings.TrimSuffix(storage.Dir(dir), "/") {
		if f, ok := seen[dir]; ok {
			found = f
			break
		}
		walked = append(walked, dir)
		kind, exists, err := b.resourceKind(ctx, dir)
		if err != nil || exists && kind != "file" {
			break // a directory (so are those above it), a blob of a flat account, or unknown
		}
		if exists {
			found = dir
			break
		}
	}
	if seen != nil {
		for _, d := range walked {
			seen[d] = found
		}
	}
	return found
}

// notDir returns the error of a request on name that failed with err: storage.ErrNotDir when
// a file of a hierarchical-namespace account is on the way to name, err otherwise.
func (b *backend) notDir(ctx context.Context, name string, err error) error {
	if f := b.fileOnTheWay(ctx, name, nil); f != "" {
		return &notDirError{name: name, file: f}
	}
	return err
}

// pathConflict reports whether err is the service's 409 PathConflict.
func pathConflict(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusConflict && e.Code == "PathConflict"
}

// Delete implements storage.Store: blobstore's delete, then a key reported gone, or refused
// with 409 PathConflict, is ErrNotDir when a file stands on the way to it.
func (s *Store) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	res, err := s.Store.Delete(ctx, keys)
	s.notDirResults(ctx, res)
	return res, err
}

// DeleteIfUnchanged implements storage.ConditionalDeleter, as Delete.
func (s *Store) DeleteIfUnchanged(ctx context.Context, keys, versions []string) ([]storage.DeleteResult, error) {
	res, err := s.Store.DeleteIfUnchanged(ctx, keys, versions)
	s.notDirResults(ctx, res)
	return res, err
}

func (s *Store) notDirResults(ctx context.Context, res []storage.DeleteResult) {
	var seen map[string]string
	for i := range res {
		r := &res[i]
		if !(r.Gone && r.Err == nil) && !pathConflict(r.Err) {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if seen == nil {
			seen = map[string]string{}
		}
		name := s.b.rec.root + strings.TrimSuffix(r.Key, "/")
		if f := s.b.fileOnTheWay(ctx, name, seen); f != "" {
			r.Gone, r.Err = false, &notDirError{name: name, file: f}
		}
	}
}

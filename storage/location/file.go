package location

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// LocalPath returns the local directory a path or file: URI names, made absolute against the
// working directory. file:///p, file:/p and file://localhost/p name /p; file:p and file:../p
// (RFC 8089's relative form, as Hadoop reads it) name p relative to the working directory. A
// file: URI with another host, a query or a fragment, or naming no path at all, is refused:
// read another way it would name another directory, and VACUUM must only ever touch the one
// the user named.
func LocalPath(uri string) (string, error) {
	if uri == "" {
		return "", errors.New("no table given: pass a directory path or a file:// URI")
	}
	p := uri
	if len(uri) >= 5 && strings.EqualFold(uri[:5], "file:") {
		u, err := url.Parse(uri)
		if err != nil {
			return "", fmt.Errorf("table location %q is not a valid file URI: %v", SafeURI(uri), err)
		}
		if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
			return "", fmt.Errorf("table location %s: file URIs must name a local path (file:///path); %q is another host", SafeURI(uri), u.Host)
		}
		if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.HasSuffix(uri, "#") {
			return "", fmt.Errorf("table location %s: a file URI takes no query or fragment; write '?' as %%3F and '#' as %%23 if they are part of the name", SafeURI(uri))
		}
		switch {
		case u.Opaque != "":
			if p, err = url.PathUnescape(u.Opaque); err != nil {
				return "", fmt.Errorf("table location %q: %v", uri, err)
			}
		default:
			p = u.Path
		}
	}
	if p == "" {
		return "", fmt.Errorf("table location %q names no directory", uri)
	}
	abs, err := filepath.Abs(filepath.FromSlash(p))
	if err != nil {
		return "", fmt.Errorf("table location %q: %w", uri, err)
	}
	return abs, nil
}

// Relative says whether uri names a local path relative to the working directory: a path
// that is not absolute (a, ./a, ../a, ~/a: no shell expands it here), or the relative form of
// a file: URI (file:a). Each program that reads such a location finds another place, so a
// location shared between programs (a table property) must not be one. A URI this package
// refuses, or of an object store, is not relative.
func Relative(uri string) bool {
	t, err := parse(uri)
	if err != nil || t.kind != "local" {
		return false
	}
	if t.u == nil {
		return !filepath.IsAbs(filepath.FromSlash(uri))
	}
	return t.u.Opaque != "" && !strings.HasPrefix(t.u.Opaque, "/")
}

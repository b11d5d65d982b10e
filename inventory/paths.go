package inventory

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// root is the table root against which inventory paths are matched.
type root struct {
	uri    string
	scheme string // the scheme as written, lower case ("abfss", "s3a", "file")
	family string // normalised scheme family ("s3", "abfs", "file", ...)
	auth   string // normalised authority ("" for local files)
	user   string // the user part of the authority (the container on Azure)
	host   string // the host part, as written
	path   string // decoded, without trailing '/' ("" for a bucket or container root)
}

// parseRoot parses the table root: a URI such as file:///data/t, s3://bucket/t or
// abfss://c@acct.dfs.core.windows.net/t, or an absolute local path.
func parseRoot(tableRoot string) (root, error) {
	if tableRoot == "" {
		return root{}, fmt.Errorf("inventory: no table root given")
	}
	if !deltalog.HasScheme(tableRoot) {
		if !filepath.IsAbs(tableRoot) {
			return root{}, fmt.Errorf("inventory: table root %q is neither a URI nor an absolute path", tableRoot)
		}
		p := filepath.ToSlash(filepath.Clean(tableRoot))
		return root{uri: tableRoot, scheme: "file", family: "file", path: strings.TrimSuffix(p, "/")}, nil
	}
	u, err := url.Parse(tableRoot)
	if err != nil {
		return root{}, fmt.Errorf("inventory: table root %q: %w", tableRoot, err)
	}
	if u.Opaque != "" {
		return root{}, fmt.Errorf("inventory: table root %q is not a hierarchical URI", tableRoot)
	}
	r := root{uri: tableRoot, scheme: strings.ToLower(u.Scheme), family: deltalog.SchemeFamily(u.Scheme)}
	p := u.Path
	if p != "" && path.Clean(p) != strings.TrimSuffix(p, "/") && p != "/" {
		return root{}, fmt.Errorf("inventory: table root %q is not a clean path", tableRoot)
	}
	r.path = strings.TrimSuffix(p, "/")
	if r.family == "file" {
		if u.Host != "" && u.Host != "localhost" {
			return root{}, fmt.Errorf("inventory: table root %q: file URIs must name a local path (file:///path)", tableRoot)
		}
		return r, nil
	}
	r.host = u.Host
	if u.User != nil {
		r.user = u.User.Username()
	}
	r.auth = deltalog.NormalizeAuthority(u.Scheme, r.user, r.host, u.User != nil)
	return r, nil
}

func (r root) isAzure() bool { return r.family == "abfs" }
func (r root) isS3() bool    { return r.family == "s3" }

// match is where an inventory path lies relative to the table root.
type match uint8

const (
	outside match = iota
	atRoot
	inside
	invalid // inside the root, but not a clean key (empty, "." or ".." components)
)

// key relativises an inventory path, a raw Hadoop path (never percent-decoded): "file:/t/x",
// "file:///t/x" and "/t/x" name the same local file. It returns the key relative to the root,
// with a trailing '/' when the path itself ends in '/'.
func (r root) key(p string) (string, match) {
	var scheme, auth, rest string
	hasAuth := false
	if deltalog.HasScheme(p) {
		i := strings.IndexByte(p, ':')
		scheme, rest = p[:i], p[i+1:]
		if strings.HasPrefix(rest, "//") {
			rest = rest[2:]
			hasAuth = true
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				auth, rest = rest[:j], rest[j:]
			} else {
				auth, rest = rest, ""
			}
		}
	} else {
		rest = p
	}
	switch {
	case scheme == "":
		if r.family != "file" {
			return "", outside // a path without scheme names no object store
		}
	case strings.EqualFold(scheme, "file"):
		if r.family != "file" || hasAuth && auth != "" && !strings.EqualFold(auth, "localhost") {
			return "", outside
		}
	default:
		if deltalog.SchemeFamily(scheme) != r.family {
			return "", outside
		}
		user, host, hasUser := "", auth, false
		if i := strings.LastIndexByte(auth, '@'); i >= 0 {
			user, host, hasUser = auth[:i], auth[i+1:], true
		}
		if deltalog.NormalizeAuthority(scheme, user, host, hasUser) != r.auth {
			return "", outside
		}
	}
	if !strings.HasPrefix(rest, "/") {
		return "", outside
	}
	if rest == r.path || rest == r.path+"/" {
		return "", atRoot
	}
	k, ok := strings.CutPrefix(rest, r.path+"/")
	if !ok {
		return "", outside
	}
	if !cleanKey(strings.TrimSuffix(k, "/")) {
		return k, invalid
	}
	return k, inside
}

// cleanKey reports whether k is a relative key without empty, "." or ".." components.
func cleanKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range strings.Split(k, "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return true
}

// location is where an inventory lives: the root of a store (the file system root, or a bucket or
// container) and the key below it.
type location struct {
	scheme string // "file" for local paths
	host   string // authority, with user info ("" for local files)
	key    string // decoded, without leading or trailing '/'; "" is the store root itself
}

// parseLocation parses an inventory location: a local path, a file: URI or an object-store URI.
func parseLocation(s string) (location, error) {
	if s == "" {
		return location{}, fmt.Errorf("inventory: no location given")
	}
	if !deltalog.HasScheme(s) {
		abs, err := filepath.Abs(s)
		if err != nil {
			return location{}, fmt.Errorf("inventory %s: %w", s, err)
		}
		return location{scheme: "file", key: strings.Trim(filepath.ToSlash(resolveLinks(abs)), "/")}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return location{}, fmt.Errorf("inventory %s: %w", s, err)
	}
	if u.Opaque != "" {
		if !strings.EqualFold(u.Scheme, "file") {
			return location{}, fmt.Errorf("inventory %s: not a hierarchical URI", s)
		}
		// file:relative/path: relative to the working directory.
		return parseLocation(u.Opaque)
	}
	l := location{scheme: strings.ToLower(u.Scheme), host: u.Host}
	if u.User != nil {
		l.host = u.User.String() + "@" + u.Host
	}
	if l.scheme == "file" {
		if u.Host != "" && u.Host != "localhost" {
			return location{}, fmt.Errorf("inventory %s: file URIs must name a local path (file:///path)", s)
		}
		l.host = ""
		l.key = strings.Trim(filepath.ToSlash(resolveLinks(filepath.FromSlash(path.Clean("/"+u.Path)))), "/")
		return l, nil
	}
	l.key = strings.Trim(path.Clean("/"+u.Path), "/")
	return l, nil
}

// resolveLinks resolves the symbolic links in a local inventory's path (/tmp on macOS, say):
// the local store never follows links, and an inventory is only read, never deleted from.
func resolveLinks(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// base is the URI of the store holding the location.
func (l location) base() string { return l.uri("") }

// uri returns the URI of key in the location's store.
func (l location) uri(key string) string {
	u := url.URL{Scheme: l.scheme, Path: "/" + key}
	if i := strings.LastIndexByte(l.host, '@'); i >= 0 {
		u.User = url.User(l.host[:i])
		u.Host = l.host[i+1:]
	} else {
		u.Host = l.host
	}
	s := u.String()
	if l.scheme == "file" && !strings.HasPrefix(s, "file:///") {
		s = "file://" + strings.TrimPrefix(s, "file:")
	}
	return s
}

// String names the location in messages: a local path as a path, others as a URI.
func (l location) String() string {
	if l.scheme == "file" {
		return "/" + l.key
	}
	return l.uri(l.key)
}

// at returns the location of key in the same store.
func (l location) at(key string) location {
	l.key = strings.Trim(key, "/")
	return l
}

// dirKey returns key as a directory prefix for Walk: "" for the root, otherwise key + "/".
func dirKey(key string) string {
	if key == "" {
		return ""
	}
	return key + "/"
}

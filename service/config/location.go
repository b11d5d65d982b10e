package config

import (
	"net/url"
	"path/filepath"
	"strings"

	"github.com/deltavacuum/deltavacuum/storage/location"
)

// LocationKey is loc in the form two spellings of one location share: a local path made
// absolute and clean; a URI with its scheme's aliases as one (s3a, s3n: s3; abfs: abfss), its
// host in lower case (an Azure account's blob host as its dfs host), its path decoded and
// without a trailing '/'. Two tables of one key are one table.
func LocationKey(loc string) string {
	if kind, err := location.Kind(loc); err == nil && kind == "local" {
		p, err := location.LocalPath(loc)
		if err != nil {
			return loc
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return "file://" + filepath.Clean(p)
	}
	u, err := url.Parse(loc)
	if err != nil {
		return loc
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "s3a", "s3n":
		scheme = "s3"
	case "abfs":
		scheme = "abfss"
	}
	host := strings.Replace(strings.ToLower(u.Host), ".blob.", ".dfs.", 1)
	if u.User != nil {
		host = u.User.String() + "@" + host
	}
	return scheme + "://" + host + "/" + strings.Trim(u.Path, "/")
}

package iceberg

import (
	"fmt"
	"strings"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// resolver makes Iceberg's paths keys of the table. Iceberg writes absolute paths as they
// are (Hadoop's Path.toString: a space as a space, a '%' as a '%'), where the Delta log writes
// RFC 2396 URIs; a path is read both ways and every reading inside the table is reported, so
// that whichever one names the file on disk is kept.
type resolver struct {
	location string
	root     deltalog.Root
	// alias is Iceberg's own location, when it names the table's folder by another URI.
	alias *deltalog.Root
}

func newResolver(store storage.Store, location string) (resolver, error) {
	var (
		r   deltalog.Root
		err error
	)
	if location == "" {
		location = store.Location()
		r, err = deltalog.RootOf(store)
	} else {
		r, err = deltalog.ParseRoot(location)
	}
	if err != nil {
		return resolver{}, fmt.Errorf("reading Iceberg metadata: %w", err)
	}
	return resolver{location: location, root: r}, nil
}

// literal escapes what a URI parser would read as an escape or a delimiter, so that the path
// is read as the characters it holds.
var literal = strings.NewReplacer("%", "%25", "#", "%23", "?", "%3F")

// key reads a path from Iceberg metadata: the key it names in the table (its literal
// reading), other keys it may also name (its reading as a URI), and whether it is inside the
// table at all. A path that cannot be read as a path ('..', a control character) is an error
// wrapping ErrUnreadable.
func (r resolver) key(p string) (key string, others []string, inside bool, err error) {
	key, others, inside, err = readPath(r.root, p)
	if err == nil && !inside && r.alias != nil {
		key, others, inside, err = readPath(*r.alias, p)
	}
	return key, others, inside, err
}

func readPath(root deltalog.Root, p string) (key string, others []string, inside bool, err error) {
	key, inside, err = root.Key(literal.Replace(p))
	if err != nil {
		return "", nil, false, fmt.Errorf("%w: path %q: %v", ErrUnreadable, p, err)
	}
	if !inside {
		return "", nil, false, nil
	}
	if k, in, err := root.Key(p); err == nil && in && k != key {
		others = append(others, k)
	}
	for _, k := range root.OtherReadings(p, key) {
		if !contains(others, k) {
			others = append(others, k)
		}
	}
	return key, others, true, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

package tables

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/deltavacuum/deltavacuum/catalog"
	"github.com/deltavacuum/deltavacuum/session"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/location"
)

// FindTables returns the folders of store (keys ending in '/', or "" for the root itself)
// that are Delta tables: they hold _delta_log/ with a commit or a checkpoint
// (session.TableAt). It does not descend into a table, nor into a folder whose name starts
// with '.' or '_' (hidden, as Delta hides them). One listing per folder, plus one of each
// candidate's _delta_log/. A Fabric lakehouse (a root with a Tables/ folder) is listed as
// Fabric shows it: its Tables/<table> and Tables/<schema>/<table> only (session.LakehouseTables).
func FindTables(ctx context.Context, store storage.Store) ([]string, error) {
	if ok, err := session.TableAt(ctx, store, ""); err != nil || ok {
		if ok {
			return []string{""}, nil
		}
		return nil, err
	}
	if lts, err := session.LakehouseTables(ctx, store); !errors.Is(err, catalog.ErrNotLakehouse) {
		if err != nil {
			return nil, err
		}
		out := make([]string, len(lts))
		for i, lt := range lts {
			out[i] = lt.Rel() + "/"
		}
		return out, nil
	}
	var out []string
	err := store.Walk(ctx, "", func(o storage.Object) error {
		if !o.IsDir || o.Key == "" {
			return nil
		}
		if n := o.Name(); strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
			return storage.SkipDir
		}
		ok, err := session.TableAt(ctx, store, o.Key)
		if err != nil {
			return err
		}
		if ok {
			out = append(out, o.Key)
			return storage.SkipDir
		}
		return nil
	})
	if errors.Is(err, storage.ErrNotExist) {
		return nil, fmt.Errorf("the root %s does not exist (or is not a folder): %w", store.Location(), err)
	}
	return out, err
}

// maxIDLength is the length of a table id the configuration accepts.
const maxIDLength = 128

// DiscoveredID is the id of the table found at rel (a folder key below the root, "" for the
// root itself) of the discover root named root: root, then each folder name with every byte
// other than a lower-case letter, a digit or '-' written _XX (hex), joined by '.'. So ids
// are stable (the same folder always has the same id), distinct for distinct folders (the
// encoding can be read back; '.' only separates, '_' only escapes), and distinct even
// case-insensitively (no upper-case letter is left). An id longer than the limit is cut and
// ends with _z and a hash of the whole folder path (the encoding never writes _z).
func DiscoveredID(root, rel string) string {
	var b strings.Builder
	b.WriteString(root)
	rel = strings.TrimSuffix(rel, "/")
	if rel != "" {
		for _, seg := range strings.Split(rel, "/") {
			b.WriteByte('.')
			for i := 0; i < len(seg); i++ {
				c := seg[i]
				if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' {
					b.WriteByte(c)
				} else {
					fmt.Fprintf(&b, "_%02x", c)
				}
			}
		}
	}
	id := b.String()
	if len(id) <= maxIDLength {
		return id
	}
	sum := sha256.Sum256([]byte(rel))
	cut := id[:maxIDLength-19]
	// Never cut an escape in two: a cut _X would read as another byte.
	if i := strings.LastIndexByte(cut, '_'); i >= 0 && i > len(cut)-3 {
		cut = cut[:i]
	}
	return cut + "_z" + hex.EncodeToString(sum[:8])
}

// tableLocation is the location of the folder rel below root (a path or a URI).
func tableLocation(root, rel string) string {
	rel = strings.TrimSuffix(rel, "/")
	if rel == "" {
		return root
	}
	if kind, _ := location.Kind(root); kind == "local" && !strings.HasPrefix(root, "file:") {
		return strings.TrimSuffix(root, "/") + "/" + rel
	}
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.TrimSuffix(root, "/") + "/" + strings.Join(segs, "/")
}

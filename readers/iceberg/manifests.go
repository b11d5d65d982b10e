package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// manifestFile is what is read of one record of a manifest list (the table spec, "Manifest
// Lists"): the manifest's path.
type manifestFile struct {
	ManifestPath string
}

// The fields read of a manifest entry (the table spec, "Manifests").
const (
	fieldStatus   = "status"
	fieldPath     = "data_file.file_path"
	fieldContent  = "data_file.content"
	fieldFileSize = "data_file.file_size_in_bytes"
)

// Manifest entry statuses: a DELETED entry records a file removed by this very snapshot.
const statusDeleted = 2

// collect adds the metadata files the current metadata references to keep, reads every
// snapshot's manifest list for its manifests, and sets Snapshot. The current snapshot's
// manifest list must be readable; older ones that are missing or unreadable are noted.
func (t *Table) collect(ctx context.Context, store storage.Store, keep map[string]bool) error {
	m := t.meta
	// Iceberg's own location names this folder by another URI (OneLake by ids rather than
	// names, wasbs for abfss): trust it when the current manifest list is found through it.
	if alias, err := deltalog.ParseRoot(*m.Location); err == nil {
		if cur := m.current(); cur != nil && cur.ManifestList != nil {
			if _, _, in, _ := t.res.key(*cur.ManifestList); !in {
				withAlias := t.res
				withAlias.alias = &alias
				if k, _, in, err := withAlias.key(*cur.ManifestList); err == nil && in {
					if _, err := store.Stat(ctx, k); err == nil {
						t.res, t.LocationAlias = withAlias, true
					}
				}
			}
		}
	}
	ref := func(p string) (string, bool, error) {
		k, others, inside, err := t.res.key(p)
		if err != nil {
			return "", false, err
		}
		if !inside {
			t.Outside = append(t.Outside, p)
			return "", false, nil
		}
		keep[k] = true
		for _, o := range others {
			keep[o] = true
		}
		return k, true, nil
	}
	for _, l := range m.MetadataLog {
		if _, _, err := ref(l.MetadataFile); err != nil {
			return fmt.Errorf("%s: metadata-log: %w", t.Current.Key, err)
		}
	}
	for _, s := range append(m.Statistics, m.PartitionStats...) {
		if _, _, err := ref(s.StatisticsPath); err != nil {
			return fmt.Errorf("%s: statistics: %w", t.Current.Key, err)
		}
	}
	cur := m.current()
	for i := range m.Snapshots {
		s := &m.Snapshots[i]
		isCur := s == cur
		var manifests []string
		listKey := ""
		if s.ManifestList != nil && *s.ManifestList != "" {
			k, inside, err := ref(*s.ManifestList)
			if err != nil {
				return fmt.Errorf("%s: snapshot %d: %w", t.Current.Key, *s.SnapshotID, err)
			}
			if !inside {
				if isCur {
					return fmt.Errorf("%w: %s: the current snapshot's manifest list %s lies outside the table %s: it cannot be read here; pass the table's location as Iceberg names it", ErrUnreadable, t.Current.Key, *s.ManifestList, t.res.location)
				}
				continue
			}
			listKey = k
			err = readManifestList(ctx, store, k, t.limitBlock, func(mf manifestFile) error {
				manifests = append(manifests, mf.ManifestPath)
				return nil
			})
			if err != nil {
				if isCur || !(errors.Is(err, storage.ErrNotExist) || errors.Is(err, errNotAvro)) {
					return err
				}
				if errors.Is(err, storage.ErrNotExist) {
					t.Missing = append(t.Missing, k)
				} else {
					t.Notes = append(t.Notes, err.Error())
				}
				continue
			}
		} else {
			manifests = s.Manifests
		}
		for _, p := range manifests {
			if _, _, err := ref(p); err != nil {
				return fmt.Errorf("%s: %w", listKey, err)
			}
		}
		if isCur {
			t.Snapshot = &Snapshot{
				ID:           *s.SnapshotID,
				Timestamp:    time.UnixMilli(*s.TimestampMs).UTC(),
				ManifestList: listKey,
				Summary:      s.Summary,
			}
		}
	}
	return nil
}

// readManifestList streams the records of a manifest list.
func readManifestList(ctx context.Context, store storage.Store, key string, limit int64, fn func(manifestFile) error) error {
	return readAvro(ctx, store, key, limit, "manifest list", []string{"manifest_path"}, func(o *container) error {
		rec := newRecord("manifest_path")
		for {
			ok, err := o.next(rec)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			p, _ := rec.str("manifest_path")
			if p == "" {
				return fmt.Errorf("%w: a manifest without a path", errNotAvro)
			}
			if err := fn(manifestFile{ManifestPath: p}); err != nil {
				return err
			}
		}
	})
}

// readAvro opens an Avro file of the metadata, checks that its records have the fields
// Iceberg writes, and hands it to fn. Errors name the file; an Avro file that is not one is
// ErrUnreadable (and errNotAvro), a missing one storage.ErrNotExist and ErrUnreadable.
func readAvro(ctx context.Context, store storage.Store, key string, limit int64, what string, fields []string, fn func(*container) error) error {
	r, err := store.Open(ctx, key)
	if err != nil {
		if errors.Is(err, storage.ErrNotExist) || errors.Is(err, storage.ErrSymlink) || errors.Is(err, storage.ErrNotRegular) {
			return fmt.Errorf("%w: Iceberg %s %s: %w; Iceberg readers of this table fail the same way: restore it, or let the converter write the metadata again", ErrUnreadable, what, key, err)
		}
		return fmt.Errorf("reading Iceberg %s %s: %w", what, key, err)
	}
	defer r.Close()
	o, err := newOCF(io.NewSectionReader(r, 0, r.Size()), limit)
	if err != nil {
		return wrapAvro(what, key, err)
	}
	defer o.close()
	if !hasFields(o.schema, fields...) {
		return wrapAvro(what, key, fmt.Errorf("%w: its records lack %v", errNotAvro, fields))
	}
	if err := fn(o); err != nil {
		return wrapAvro(what, key, err)
	}
	return nil
}

func wrapAvro(what, key string, err error) error {
	if errors.Is(err, errNotAvro) {
		return fmt.Errorf("%w: Iceberg %s %s: %w; Iceberg readers of this table cannot read it either: let the converter write the metadata again", ErrUnreadable, what, key, err)
	}
	return fmt.Errorf("reading Iceberg %s %s: %w", what, key, err)
}

// DataFile is one file the current snapshot reads.
type DataFile struct {
	// Path is the path as the manifest writes it.
	Path string
	// Key is the key it names in the table; OtherKeys are the keys other readings of the
	// path name (Path read as a URI, with its escapes decoded). All are to be kept.
	Key       string
	OtherKeys []string
	// Outside is true for a path outside the table: Key is then empty.
	Outside bool
	// Content is 0 for data, 1 for position deletes, 2 for equality deletes.
	Content int
	Size    int64
	// Manifest is the key of the manifest that names it.
	Manifest string
}

// DataFiles streams every file the current snapshot reads: the live entries (ADDED or
// EXISTING) of every manifest of its manifest list, data and delete files alike. Manifests
// are read one at a time, block by block. A manifest that is missing or not Avro, or a path
// that cannot be read, is an error matching ErrUnreadable. A table without a current
// snapshot has none.
func (t *Table) DataFiles(ctx context.Context, store storage.Store, fn func(DataFile) error) error {
	cur := t.meta.current()
	if cur == nil {
		return nil
	}
	var paths []string
	if cur.ManifestList != nil && *cur.ManifestList != "" {
		err := readManifestList(ctx, store, t.Snapshot.ManifestList, t.limitBlock, func(mf manifestFile) error {
			paths = append(paths, mf.ManifestPath)
			return nil
		})
		if err != nil {
			return err
		}
	} else {
		paths = cur.Manifests
	}
	for _, p := range paths {
		k, _, inside, err := t.res.key(p)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Snapshot.ManifestList, err)
		}
		if !inside {
			return fmt.Errorf("%w: manifest %s of the current snapshot lies outside the table %s: it cannot be read here", ErrUnreadable, p, t.res.location)
		}
		err = readAvro(ctx, store, k, t.limitBlock, "manifest", []string{"status", "data_file.file_path"}, func(o *container) error {
			rec := newRecord(fieldStatus, fieldPath, fieldContent, fieldFileSize)
			for {
				ok, err := o.next(rec)
				if err != nil {
					return err
				}
				if !ok {
					return nil
				}
				status, ok := rec.num(fieldStatus)
				if !ok {
					return fmt.Errorf("%w: an entry without a status", errNotAvro)
				}
				if status == statusDeleted {
					continue
				}
				if status < 0 || status > statusDeleted {
					return fmt.Errorf("%w: an entry of status %d", errNotAvro, status)
				}
				path, _ := rec.str(fieldPath)
				content, _ := rec.num(fieldContent)
				size, _ := rec.num(fieldFileSize)
				df := DataFile{Path: path, Content: int(content), Size: size, Manifest: k}
				if df.Path == "" {
					return fmt.Errorf("%w: an entry without a file_path", errNotAvro)
				}
				key, others, inside, err := t.res.key(df.Path)
				if err != nil {
					return err
				}
				df.Key, df.OtherKeys, df.Outside = key, others, !inside
				if err := fn(df); err != nil {
					return err
				}
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

package iceberg

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// ErrUnreadable is matched (errors.Is) by every error that means: this table has an Iceberg
// view, and it cannot be read. The caller must refuse to vacuum rather than guess.
var ErrUnreadable = errors.New("the Iceberg metadata cannot be read")

// DefaultMetadataDir is where Iceberg's Hadoop tables, Delta UniForm, XTable and Fabric write
// the metadata of a table: <table>/metadata/.
const DefaultMetadataDir = "metadata/"

// deltaMetadataPathKey is the Delta table property through which UniForm passes Iceberg's
// write.metadata.path to the Iceberg table (Delta's DeltaToIcebergConvert.TableProperties
// copies every delta.universalformat.config.iceberg.* property, prefix stripped; Delta keeps
// the key in lower case).
const deltaMetadataPathKey = "delta.universalformat.config.iceberg.write.metadata.path"

// icebergMetadataPathKey is Iceberg's table property that moves new metadata files
// (TableProperties.WRITE_METADATA_LOCATION).
const icebergMetadataPathKey = "write.metadata.path"

// Options tune Find. The zero value reads <table>/metadata/ with the default limits.
type Options struct {
	// Location is the table's location, against which Iceberg's absolute paths are made keys.
	// Empty: the store's own location.
	Location string
	// DeltaConfiguration is the Delta table's metaData.configuration: a UniForm
	// write.metadata.path set there adds its folder to those read.
	DeltaConfiguration map[string]string
	// MetadataDirs are more folders to read (keys relative to the table root).
	MetadataDirs []string
	// MaxMetadataBytes bounds one metadata.json (inflated, when gzip-compressed) and one
	// version-hint.text. Zero: DefaultMaxMetadataBytes.
	MaxMetadataBytes int64
	// MaxAvroBlockBytes bounds one block of a manifest list or manifest, compressed and
	// inflated. Zero: DefaultMaxAvroBlockBytes.
	MaxAvroBlockBytes int64
}

// Defaults of Options.
const (
	DefaultMaxMetadataBytes  = 256 << 20
	DefaultMaxAvroBlockBytes = 256 << 20
)

// MetadataFile is one Iceberg table metadata file.
type MetadataFile struct {
	Key     string
	Kind    NameKind
	Version int64 // -1 for a name without a version
	// LastUpdated is its last-updated-ms.
	LastUpdated time.Time
}

// Hint describes the version-hint.text that was read.
type Hint struct {
	Key     string
	Content string
	// Used is true when the hint chose the current file; Note says why it was not, or that
	// newer versions were found after it.
	Used bool
	Note string
}

// Ignored is a file named like Iceberg metadata that is not, with the reason.
type Ignored struct {
	Key    string
	Reason string
}

// Snapshot is the current Iceberg snapshot.
type Snapshot struct {
	ID        int64
	Timestamp time.Time
	// ManifestList is the key of its manifest list ("" for a format-version 1 snapshot that
	// lists its manifests inline).
	ManifestList string
	Summary      map[string]string
}

// Conversion says which Delta version a converter turned into the current Iceberg snapshot.
type Conversion struct {
	// Engine is "Delta UniForm" or "Apache XTable".
	Engine string
	// Version is the Delta version converted; nil when the converter recorded only a time
	// (XTable before it recorded sourceIdentifier).
	Version *int64
	// CommitTime is the time of that Delta commit, when recorded (zero otherwise).
	CommitTime time.Time
	// Property names where it was read: "properties.delta-version", "summary.XTABLE_METADATA".
	Property string
	// File is the key of the metadata file it was read from.
	File string
}

// Table is the Iceberg view of a Delta table's folder.
type Table struct {
	// Location is Iceberg's own location field; LocationAlias is true when it differs from
	// the table's location and the current manifest list was found through it (the same
	// folder by another name), so that paths under it are read as keys of this table.
	Location      string
	LocationAlias bool
	FormatVersion int
	TableUUID     string
	Current       MetadataFile
	Hint          *Hint
	// Snapshot is nil for a table without a current snapshot (no data yet).
	Snapshot *Snapshot
	// Conversion is nil when no converter recorded the Delta version (Fabric, or a writer
	// this package does not know): protect by DataFiles instead.
	Conversion *Conversion
	// Properties are the current file's table properties.
	Properties map[string]string
	// MetadataFiles are the keys of every file of the Iceberg metadata inside the table, sorted:
	// every metadata.json that parses, version-hint.text, the metadata files of the
	// metadata-log, statistics files, every snapshot's manifest list and the manifests they
	// name. VACUUM must never delete them.
	MetadataFiles []string
	// Missing are files the metadata references that are not there (an old snapshot's
	// manifest list, an old metadata file of the log): Iceberg readers fail only when they
	// travel back to them.
	Missing []string
	// Outside are metadata paths that lie outside the table's folder, as written.
	Outside []string
	// Ignored are files named like metadata that are not Iceberg metadata.
	Ignored []Ignored
	// Notes say what was seen and tolerated (an unreadable converter property, an old
	// manifest list that is not Avro).
	Notes []string

	res        resolver
	meta       *tableMetadata
	limitBlock int64
}

// candidate is a *.metadata.json seen in a metadata folder.
type candidate struct {
	key     string
	kind    NameKind
	version int64
	meta    *tableMetadata // nil when not Iceberg
	reason  string
}

// Find reads the Iceberg metadata in the table's folder. It returns nil, nil when there is
// none; an error matching ErrUnreadable when there is and it cannot be read; other errors
// (a failed listing, a cancelled context) as they come.
func Find(ctx context.Context, store storage.Store, opts Options) (*Table, error) {
	if opts.MaxMetadataBytes <= 0 {
		opts.MaxMetadataBytes = DefaultMaxMetadataBytes
	}
	if opts.MaxAvroBlockBytes <= 0 {
		opts.MaxAvroBlockBytes = DefaultMaxAvroBlockBytes
	}
	res, err := newResolver(store, opts.Location)
	if err != nil {
		return nil, err
	}
	dirs := []string{DefaultMetadataDir}
	var notes []string
	for _, d := range opts.MetadataDirs {
		dirs = addDir(dirs, d)
	}
	for k, v := range opts.DeltaConfiguration {
		if strings.EqualFold(k, deltaMetadataPathKey) {
			key, _, inside, err := res.key(strings.TrimSuffix(v, "/") + "/x")
			if err != nil || !inside {
				notes = append(notes, fmt.Sprintf("the Delta property %s = %q names no folder inside the table: not read", k, v))
				continue
			}
			dirs = addDir(dirs, storage.Dir(key))
		}
	}

	s := &scan{store: store, limit: opts.MaxMetadataBytes, seen: map[string]bool{}}
	for _, d := range dirs {
		if err := s.readDir(ctx, d); err != nil {
			return nil, err
		}
	}
	var cur *candidate
	for {
		if !s.anyIceberg() {
			return nil, nil
		}
		if cur, err = s.choose(ctx); err != nil {
			return nil, err
		}
		// Iceberg's write.metadata.path moves new metadata files: read that folder too, and
		// choose again over both.
		p, ok := cur.meta.Properties[icebergMetadataPathKey]
		if !ok {
			break
		}
		key, _, inside, err := res.key(strings.TrimSuffix(p, "/") + "/x")
		if err != nil || !inside {
			notes = append(notes, fmt.Sprintf("%s: write.metadata.path = %q is outside the table: not read", cur.key, p))
			break
		}
		d := storage.Dir(key)
		if s.dirs[d] {
			break
		}
		if err := s.readDir(ctx, d); err != nil {
			return nil, err
		}
	}

	m := cur.meta
	t := &Table{
		Location:      *m.Location,
		FormatVersion: *m.FormatVersion,
		Current: MetadataFile{
			Key: cur.key, Kind: cur.kind, Version: cur.version,
			LastUpdated: time.UnixMilli(*m.LastUpdatedMs).UTC(),
		},
		Hint:       s.hintInfo,
		Properties: m.Properties,
		Notes:      append(notes, s.notes...),
		res:        res,
		meta:       m,
		limitBlock: opts.MaxAvroBlockBytes,
	}
	if m.TableUUID != nil {
		t.TableUUID = *m.TableUUID
	}
	t.Ignored = s.ignored()
	keep := map[string]bool{}
	for _, c := range s.cands {
		if c.meta != nil {
			keep[c.key] = true
		}
	}
	for _, h := range s.hints {
		keep[h] = true
	}
	if err := t.collect(ctx, store, keep); err != nil {
		return nil, err
	}
	t.Conversion, t.Notes = conversionOf(t, t.Notes)
	t.MetadataFiles = sortedKeys(keep)
	sort.Strings(t.Missing)
	sort.Strings(t.Outside)
	return t, nil
}

func addDir(dirs []string, d string) []string {
	if d != "" && !strings.HasSuffix(d, "/") {
		d += "/"
	}
	for _, x := range dirs {
		if x == d {
			return dirs
		}
	}
	return append(dirs, d)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

package iceberg

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/strictjson"
)

// tableMetadata is what this package reads of an Iceberg table metadata file (the table spec,
// "Table Metadata Fields"). Every other field is skipped, though its JSON is checked.
type tableMetadata struct {
	FormatVersion     *int              `json:"format-version"`
	TableUUID         *string           `json:"table-uuid"`
	Location          *string           `json:"location"`
	LastUpdatedMs     *int64            `json:"last-updated-ms"`
	Schema            *jsonObject       `json:"schema"`
	Schemas           []jsonObject      `json:"schemas"`
	CurrentSnapshotID *int64            `json:"current-snapshot-id"`
	Snapshots         []snapshotJSON    `json:"snapshots"`
	Properties        map[string]string `json:"properties"`
	MetadataLog       []metadataLogJSON `json:"metadata-log"`
	Statistics        []statisticsJSON  `json:"statistics"`
	PartitionStats    []statisticsJSON  `json:"partition-statistics"`
}

// jsonObject accepts any JSON object and nothing else.
type jsonObject map[string]strictjsonRaw

// strictjsonRaw is any JSON value, checked but not kept.
type strictjsonRaw struct{}

func (strictjsonRaw) UnmarshalJSON([]byte) error { return nil }

type snapshotJSON struct {
	SnapshotID   *int64            `json:"snapshot-id"`
	TimestampMs  *int64            `json:"timestamp-ms"`
	ManifestList *string           `json:"manifest-list"`
	Manifests    []string          `json:"manifests"`
	Summary      map[string]string `json:"summary"`
}

type metadataLogJSON struct {
	TimestampMs  int64  `json:"timestamp-ms"`
	MetadataFile string `json:"metadata-file"`
}

type statisticsJSON struct {
	StatisticsPath string `json:"statistics-path"`
}

// errNotIceberg is the cause of a file that is not Iceberg table metadata.
var errNotIceberg = errors.New("not Iceberg table metadata")

// decodeMetadata parses and checks an Iceberg table metadata file. A gzip-compressed file
// (.gz.metadata.json, or gzip's magic bytes) is inflated first, to at most limit bytes. Any
// error wraps errNotIceberg and says what is wrong.
func decodeMetadata(data []byte, limit int64) (*tableMetadata, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", errNotIceberg, err)
		}
		out, err := io.ReadAll(io.LimitReader(zr, limit+1))
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", errNotIceberg, err)
		}
		if int64(len(out)) > limit {
			return nil, fmt.Errorf("%w: inflates to more than %d bytes", errNotIceberg, limit)
		}
		data = out
	}
	var m tableMetadata
	if err := strictjson.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", errNotIceberg, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%w: %v", errNotIceberg, err)
	}
	return &m, nil
}

// check holds a parsed file to the table spec's required fields, so that JSON that merely
// happens to be named *.metadata.json is not taken for a table.
func (m *tableMetadata) check() error {
	switch {
	case m.FormatVersion == nil:
		return errors.New("no format-version")
	case *m.FormatVersion < 1 || *m.FormatVersion > 3:
		return fmt.Errorf("format-version %d is not 1, 2 or 3", *m.FormatVersion)
	case m.Location == nil || *m.Location == "":
		return errors.New("no location")
	case m.LastUpdatedMs == nil:
		return errors.New("no last-updated-ms")
	case m.Schema == nil && len(m.Schemas) == 0:
		return errors.New("no schema nor schemas")
	case *m.FormatVersion >= 2 && (m.TableUUID == nil || !deltalog.IsUUID(*m.TableUUID)):
		return errors.New("no table-uuid (required from format-version 2 on)")
	case m.TableUUID != nil && !deltalog.IsUUID(*m.TableUUID):
		return fmt.Errorf("table-uuid %q is not a UUID", *m.TableUUID)
	}
	seen := make(map[int64]bool, len(m.Snapshots))
	for i, s := range m.Snapshots {
		switch {
		case s.SnapshotID == nil:
			return fmt.Errorf("snapshot %d has no snapshot-id", i)
		case seen[*s.SnapshotID]:
			return fmt.Errorf("two snapshots have id %d", *s.SnapshotID)
		case s.TimestampMs == nil:
			return fmt.Errorf("snapshot %d has no timestamp-ms", *s.SnapshotID)
		case (s.ManifestList == nil || *s.ManifestList == "") && s.Manifests == nil:
			return fmt.Errorf("snapshot %d has neither a manifest-list nor manifests", *s.SnapshotID)
		case s.ManifestList == nil && *m.FormatVersion >= 2:
			return fmt.Errorf("snapshot %d has no manifest-list (required from format-version 2 on)", *s.SnapshotID)
		}
		seen[*s.SnapshotID] = true
	}
	if id := m.CurrentSnapshotID; id != nil && *id != -1 && !seen[*id] {
		return fmt.Errorf("current-snapshot-id %d is not among its snapshots", *id)
	}
	return nil
}

// current returns the current snapshot, or nil for a table without one (current-snapshot-id
// absent, null or -1).
func (m *tableMetadata) current() *snapshotJSON {
	if m.CurrentSnapshotID == nil || *m.CurrentSnapshotID == -1 {
		return nil
	}
	for i := range m.Snapshots {
		if *m.Snapshots[i].SnapshotID == *m.CurrentSnapshotID {
			return &m.Snapshots[i]
		}
	}
	return nil
}

package deltalog

import (
	"fmt"
	"slices"
	"strings"
)

// Writer features this program supports when it deletes files and appends commitInfo-only
// commits. Each is here because it does not change which files a table references, or
// because this program handles it (deletionVectors, v2Checkpoint, inCommitTimestamp,
// vacuumProtocolCheck). Anything else is refused.
var supportedWriterFeatures = []string{
	"allowColumnDefaults",
	"appendOnly",
	"changeDataFeed",
	"checkConstraints",
	"clustering",
	"collations-preview",
	"columnMapping",
	"deletionVectors",
	"domainMetadata",
	"generatedColumns",
	"icebergCompatV1",
	"icebergCompatV2",
	"identityColumns",
	"inCommitTimestamp",
	"invariants",
	"rowTracking",
	"timestampNtz",
	"typeWidening",
	"typeWidening-preview",
	"v2Checkpoint",
	"vacuumProtocolCheck",
	"variantType",
	"variantType-preview",
	"variantShredding-preview",
}

// Reader features this program understands well enough to know every file the table
// references.
var supportedReaderFeatures = []string{
	"columnMapping",
	"deletionVectors",
	"timestampNtz",
	"typeWidening",
	"typeWidening-preview",
	"v2Checkpoint",
	"vacuumProtocolCheck",
	"variantType",
	"variantType-preview",
	"variantShredding-preview",
}

// catalogManagedFeatures block VACUUM: live files may be named only by unpublished commits.
var catalogManagedFeatures = []string{"catalogManaged", "catalogOwned-preview"}

// SupportedWriterFeatures returns the writer features this program supports.
func SupportedWriterFeatures() []string { return slices.Clone(supportedWriterFeatures) }

// CheckVacuum returns an error when this program must not vacuum (or write to) the table:
// a writer or reader version or feature it does not support, or a catalog-managed table.
func (s *Snapshot) CheckVacuum() error {
	p := s.Protocol
	for _, f := range append(slices.Clone(p.ReaderFeatures), p.WriterFeatures...) {
		if slices.Contains(catalogManagedFeatures, f) {
			return fmt.Errorf("%w: %s: VACUUM is blocked for catalog-managed tables (feature %q): live files may be referenced only by commits the catalog has not published; run VACUUM through the catalog's engine", ErrCatalogManaged, s.Location, f)
		}
	}
	if s.Segment != nil && s.Segment.StagedCommits {
		return fmt.Errorf("%w: %s: _delta_log/_staged_commits/ holds commits: VACUUM is blocked for catalog-managed tables, whose live files may be referenced only by unpublished commits", ErrCatalogManaged, s.Location)
	}
	var unsupported []string
	if p.MinWriterVersion > 7 {
		unsupported = append(unsupported, fmt.Sprintf("writer version %d", p.MinWriterVersion))
	}
	if p.MinReaderVersion > 3 {
		unsupported = append(unsupported, fmt.Sprintf("reader version %d", p.MinReaderVersion))
	}
	if p.MinWriterVersion == 7 {
		for _, f := range p.WriterFeatures {
			if !slices.Contains(supportedWriterFeatures, f) {
				unsupported = append(unsupported, f)
			}
		}
	}
	if p.MinReaderVersion == 3 {
		for _, f := range p.ReaderFeatures {
			if !slices.Contains(supportedReaderFeatures, f) && !slices.Contains(unsupported, f) {
				unsupported = append(unsupported, f)
			}
		}
	}
	if len(unsupported) > 0 {
		return fmt.Errorf("%w: [DELTA_UNSUPPORTED_FEATURES_FOR_WRITE] table %s requires %s, which this version of deltavacuum does not support; nothing was listed or deleted (use an engine that supports them, such as a current Delta Spark)", ErrUnsupportedFeatures, s.Location, strings.Join(unsupported, ", "))
	}
	return nil
}

// HasFeature reports whether the protocol enables a writer feature (table features only).
func (s *Snapshot) HasFeature(name string) bool {
	return slices.Contains(s.Protocol.WriterFeatures, name) || slices.Contains(s.Protocol.ReaderFeatures, name)
}

package deltalog

import (
	"fmt"
	"slices"
	"strings"
)

// Feature is one table feature this program knows, what it does with it and why. A table
// whose protocol names a feature that is not here, or one that is here with Supported false,
// is refused before anything is listed.
type Feature struct {
	Name string
	// Reader is true for reader-writer features (they appear in readerFeatures too).
	Reader bool
	// Supported: VACUUM may delete files of such a table and append its commitInfo-only
	// commits (VACUUM START/END, and the metaData commits of ALTER TABLE).
	Supported bool
	// Why, for VACUUM and for the commits this program writes.
	Why string
}

// Features is every table feature a current Delta Spark can write, each decided on what it
// means for which files a table references and for the commits this program writes (the
// reasons are in docs/design.md too). The list is an allow-list: anything else is refused.
var Features = []Feature{
	{"allowColumnDefaults", false, true, "column defaults only change the rows writers produce; no file reference changes and this program writes no rows"},
	{"appendOnly", false, true, "forbids removing data through the log; VACUUM removes only files the log no longer references and commits no remove (Spark vacuums append-only tables)"},
	{"changeDataFeed", false, true, "change-data files under _change_data/ are named by cdc actions; they are kept while referenced and deleted like data files after (reason change_data)"},
	{"checkConstraints", false, true, "constraints are checked on rows written; this program writes none"},
	{"checkpointProtection", false, true, "restricts how log files and checkpoints are cleaned up; this program never deletes under _delta_log/ and writes no checkpoint"},
	{"clustering", false, true, "liquid clustering is a data layout recorded in domain metadata; files are still named by add actions"},
	{"collations-preview", true, true, "a column type annotation; no file reference changes"},
	{"columnMapping", true, true, "maps logical to physical column names (and may randomize file prefixes); data files are still named by add paths, read exactly"},
	{"deletionVectors", true, true, "deletion-vector files are protected with their data file (u paths, and p paths inside the root); storage types other than u, i, p are refused"},
	{"domainMetadata", false, true, "domain metadata actions name no files; this program's commits carry none"},
	{"generatedColumns", false, true, "generation expressions are evaluated on rows written; this program writes none"},
	{"geospatial", true, true, "a column type; no file reference changes"},
	{"geospatial-dev", true, true, "the preview name of geospatial"},
	{"icebergCompatV1", false, true, "UniForm: Iceberg metadata under metadata/ is hidden when delta.universalFormat.enabledFormats holds iceberg"},
	{"icebergCompatV2", false, true, "as icebergCompatV1"},
	{"icebergCompatV3", false, true, "as icebergCompatV1 (it requires rowTracking, also supported)"},
	{"identityColumns", false, true, "writers update the identity high-water mark when they write rows; this program writes none"},
	{"inCommitTimestamp", false, true, "this program's commits put commitInfo first with a strictly increasing inCommitTimestamp, and LITE orders commits by it"},
	{"invariants", false, true, "invariants are checked on rows written; this program writes none"},
	{"materializePartitionColumns", false, true, "writers also store partition values inside data files: the content of files, not which files the log references; this program writes no data files"},
	{"rowTracking", false, true, "row ids are assigned to the files writers add; this program's commits add no files"},
	{"timestampNtz", true, true, "a column type; no file reference changes"},
	{"typeWidening", true, true, "a column type change; files are not rewritten"},
	{"typeWidening-preview", true, true, "the preview name of typeWidening"},
	{"v2Checkpoint", true, true, "V2 checkpoints and their sidecars are read; this program writes no checkpoint"},
	{"vacuumProtocolCheck", true, true, "requires VACUUM to check the writer features, which this program always does"},
	{"variantShredding", true, true, "a column encoding inside data files; no file reference changes"},
	{"variantShredding-preview", true, true, "the preview name of variantShredding"},
	{"variantType", true, true, "a column type; no file reference changes"},
	{"variantType-preview", true, true, "the preview name of variantType"},

	{"catalogManaged", true, false, "commits are ratified by a catalog: live files may be named only by commits it has not published to _delta_log/ yet"},
	{"catalogOwned-preview", true, false, "the preview name of catalogManaged"},
	{"coordinatedCommits-preview", false, false, "commits go through a commit coordinator: the newest ones may not be backfilled into _delta_log/ yet, so their files would look unreferenced, and a commit written directly would bypass the coordinator"},
	{"adaptiveMetadata-preview", true, false, "requires catalogManaged"},
	{"redirectReaderWriter-preview", true, false, "the table is redirected to another location: this log may no longer be the table's"},
	{"redirectWriterOnly-preview", false, false, "as redirectReaderWriter-preview"},
}

// blockingFeatures are refused with ErrCatalogManaged rather than as unsupported: their
// commits are (or may be) kept outside _delta_log/.
var blockingFeatures = []string{"catalogManaged", "catalogOwned-preview", "coordinatedCommits-preview", "adaptiveMetadata-preview"}

func feature(name string) (Feature, bool) {
	for _, f := range Features {
		if f.Name == name {
			return f, true
		}
	}
	return Feature{}, false
}

// SupportedWriterFeatures returns the writer features this program supports.
func SupportedWriterFeatures() []string {
	var out []string
	for _, f := range Features {
		if f.Supported {
			out = append(out, f.Name)
		}
	}
	return out
}

// CheckVacuum returns an error when this program must not vacuum (or write to) the table:
// a writer or reader version or feature it does not support, or a catalog-managed table.
func (s *Snapshot) CheckVacuum() error {
	p := s.Protocol
	for _, name := range append(slices.Clone(p.ReaderFeatures), p.WriterFeatures...) {
		if slices.Contains(blockingFeatures, name) {
			f, _ := feature(name)
			return fmt.Errorf("%w: %s: VACUUM is blocked for tables with the feature %q: %s; run VACUUM through the engine that manages the table", ErrCatalogManaged, s.Location, name, f.Why)
		}
	}
	if s.Segment != nil && s.Segment.StagedCommits {
		return fmt.Errorf("%w: %s: _delta_log/_staged_commits/ holds commits: VACUUM is blocked for catalog-managed tables, whose live files may be referenced only by unpublished commits", ErrCatalogManaged, s.Location)
	}
	if s.Segment != nil && s.Segment.UnbackfilledCommits {
		return fmt.Errorf("%w: %s: _delta_log/_commits/ holds commits newer than the latest version in _delta_log/ (coordinated commits not backfilled yet): their files would look unreferenced; run VACUUM through the engine that coordinates the table's commits", ErrCatalogManaged, s.Location)
	}
	var unsupported []string
	if p.MinWriterVersion > 7 {
		unsupported = append(unsupported, fmt.Sprintf("writer version %d", p.MinWriterVersion))
	}
	if p.MinReaderVersion > 3 {
		unsupported = append(unsupported, fmt.Sprintf("reader version %d", p.MinReaderVersion))
	}
	if p.MinWriterVersion == 7 {
		for _, name := range p.WriterFeatures {
			if f, ok := feature(name); !ok || !f.Supported {
				unsupported = append(unsupported, name)
			}
		}
	}
	if p.MinReaderVersion == 3 {
		for _, name := range p.ReaderFeatures {
			if f, ok := feature(name); (!ok || !f.Supported || !f.Reader) && !slices.Contains(unsupported, name) {
				unsupported = append(unsupported, name)
			}
		}
	}
	if len(unsupported) > 0 {
		return fmt.Errorf("%w: [DELTA_UNSUPPORTED_FEATURES_FOR_WRITE] table %s requires %s, which this version of deltavacuum does not support; nothing was listed or deleted (use an engine that supports them, such as a current Delta Spark)", ErrUnsupportedFeatures, s.Location, strings.Join(unsupported, ", "))
	}
	return nil
}

// HasFeature reports whether the protocol enables a writer feature (table features only).
func (s *Snapshot) HasFeature(name string) bool { return s.Protocol.hasFeature(name) }

// hasFeature reports whether protocol p names a table feature, as a reader or writer feature.
func (p *Protocol) hasFeature(name string) bool {
	return slices.Contains(p.WriterFeatures, name) || slices.Contains(p.ReaderFeatures, name)
}

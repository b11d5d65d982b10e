package deltalog

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DeletionVector is the deletion-vector descriptor of an add or remove action.
type DeletionVector struct {
	StorageType    string `json:"storageType"`
	PathOrInlineDv string `json:"pathOrInlineDv"`
	Offset         *int32 `json:"offset,omitempty"`
	SizeInBytes    int32  `json:"sizeInBytes"`
	Cardinality    int64  `json:"cardinality"`
}

// UniqueID is the deletion vector's identity in the (path, DV id) key of file actions.
func (dv *DeletionVector) UniqueID() string {
	if dv == nil {
		return ""
	}
	id := dv.StorageType + dv.PathOrInlineDv
	if dv.Offset != nil {
		id += fmt.Sprintf("@%d", *dv.Offset)
	}
	return id
}

// Add is an add action: a data file that is part of the table.
type Add struct {
	Path             string          `json:"path"`
	Size             int64           `json:"size"`
	ModificationTime int64           `json:"modificationTime"`
	DataChange       bool            `json:"dataChange"`
	DeletionVector   *DeletionVector `json:"deletionVector,omitempty"`
	// PartitionValues and Stats are carried for writers (checkpoints, generated tables); the
	// log reader does not need them and a Parquet reader need not fill them.
	PartitionValues map[string]string `json:"partitionValues,omitempty"`
	Stats           string            `json:"stats,omitempty"`

	// records is the numRecords a checkpoint row's statistics hold, when its reader was asked
	// for them (kindStats): the stats column is not kept as a string, only this number.
	records     int64
	recordsRead bool
}

// NumRecords is the number of rows of the add's data file its statistics record (numRecords:
// the physical rows, those a deletion vector marks deleted included), and whether they record
// one. A checkpoint's row holds it only when read with FilesOptions.NumRecords. Statistics
// that cannot be read say nothing: they never make the log corrupt, as no deletion depends on
// them.
func (a *Add) NumRecords() (int64, bool) {
	if a.recordsRead {
		return a.records, a.records >= 0
	}
	return numRecordsOf(a.Stats)
}

// Remove is a remove action: a tombstone for a file that is no longer part of the table.
type Remove struct {
	Path string `json:"path"`
	// DeletionTimestamp is in milliseconds since the epoch; nil when the writer left it out
	// (treated as 0: expired).
	DeletionTimestamp *int64          `json:"deletionTimestamp,omitempty"`
	Size              *int64          `json:"size,omitempty"`
	DataChange        bool            `json:"dataChange"`
	DeletionVector    *DeletionVector `json:"deletionVector,omitempty"`
}

// CDC is a cdc action: a change-data file under _change_data/.
type CDC struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// Format is the metaData format field.
type Format struct {
	Provider string            `json:"provider"`
	Options  map[string]string `json:"options,omitempty"`
}

// Metadata is the metaData action. Raw holds the action as read from a JSON commit (or as
// rebuilt from a checkpoint row), so a writer can change one field and keep every other one,
// including fields this program does not know.
type Metadata struct {
	ID               string            `json:"id"`
	Name             *string           `json:"name,omitempty"`
	Description      *string           `json:"description,omitempty"`
	Format           Format            `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	Configuration    map[string]string `json:"configuration"`
	CreatedTime      *int64            `json:"createdTime,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes exactly (internal/strictjson) and keeps the raw bytes beside the decoded
// fields.
func (m *Metadata) UnmarshalJSON(b []byte) error {
	type plain Metadata
	var p plain
	if err := unmarshalStrict(b, &p); err != nil {
		return err
	}
	*m = Metadata(p)
	m.Raw = append(json.RawMessage(nil), bytes.TrimSpace(b)...)
	return nil
}

// Protocol is the protocol action.
type Protocol struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	MinWriterVersion int      `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures,omitempty"`
	WriterFeatures   []string `json:"writerFeatures,omitempty"`
}

// Sidecar is a V2 checkpoint's pointer to a Parquet file in _delta_log/_sidecars/.
type Sidecar struct {
	Path             string `json:"path"`
	SizeInBytes      int64  `json:"sizeInBytes"`
	ModificationTime int64  `json:"modificationTime"`
}

// CheckpointMetadata marks a V2 checkpoint.
type CheckpointMetadata struct {
	Version int64 `json:"version"`
}

// CommitInfo is the commitInfo action. Only the fields this program reads are decoded; Raw
// holds the whole action.
type CommitInfo struct {
	Timestamp         *int64 `json:"timestamp,omitempty"`
	InCommitTimestamp *int64 `json:"inCommitTimestamp,omitempty"`
	Operation         string `json:"operation,omitempty"`
	// EngineInfo names the engine that wrote the commit ("Apache-Spark/3.5.3 Delta-Lake/3.2.1").
	EngineInfo string `json:"engineInfo,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes exactly (internal/strictjson) and keeps the raw bytes beside the decoded
// fields.
func (c *CommitInfo) UnmarshalJSON(b []byte) error {
	type plain CommitInfo
	var p plain
	if err := unmarshalStrict(b, &p); err != nil {
		return err
	}
	*c = CommitInfo(p)
	c.Raw = append(json.RawMessage(nil), bytes.TrimSpace(b)...)
	return nil
}

// Action is one line of a commit or one row of a checkpoint. Exactly one field is set for the
// actions this program knows; unknown actions leave every field nil.
type Action struct {
	Add                *Add                `json:"add,omitempty"`
	Remove             *Remove             `json:"remove,omitempty"`
	CDC                *CDC                `json:"cdc,omitempty"`
	Metadata           *Metadata           `json:"metaData,omitempty"`
	Protocol           *Protocol           `json:"protocol,omitempty"`
	Sidecar            *Sidecar            `json:"sidecar,omitempty"`
	CheckpointMetadata *CheckpointMetadata `json:"checkpointMetadata,omitempty"`
	CommitInfo         *CommitInfo         `json:"commitInfo,omitempty"`
}

// Kinds selects which actions a reader must produce, so a Parquet reader reads only the
// columns it needs.
type Kinds uint

// The action kinds.
const (
	KindAdd Kinds = 1 << iota
	KindRemove
	KindCDC
	KindMetadata
	KindProtocol
	KindSidecar
	KindCheckpointMetadata
	KindCommitInfo

	KindFiles = KindAdd | KindRemove | KindCDC
	KindAll   = KindFiles | KindMetadata | KindProtocol | KindSidecar | KindCheckpointMetadata | KindCommitInfo

	// kindFilesHere marks a read of a file that must hold its file actions itself: a sidecar
	// or a part of a multi-part checkpoint, never a V2 top-level file that lists sidecars.
	kindFilesHere Kinds = 1 << 30
	// kindDVRequired marks a read of a checkpoint written under a protocol with deletion
	// vectors (the checkpoint's own protocol action): its add and remove groups must have the
	// deletionVector column.
	kindDVRequired Kinds = 1 << 29
	// kindStats marks a read that wants the numRecords of each add's statistics (the stats
	// column, or stats_parsed.numRecords): only then are those columns read.
	kindStats Kinds = 1 << 26
	// kindFileFields marks a read for Snapshot.Files: of the add and remove groups only what a
	// File holds is read (the path, the deletion vector, remove.deletionTimestamp and the
	// sizes), never dataChange or add.modificationTime. Their columns are still checked.
	kindFileFields Kinds = 1 << 28
	// kindNoSize leaves the sizes out of a kindFileFields read too (Snapshot.FileKeys).
	kindNoSize Kinds = 1 << 27
)

// kind returns the kind of a, or 0 for an unknown action.
func (a *Action) kind() Kinds {
	switch {
	case a.Add != nil:
		return KindAdd
	case a.Remove != nil:
		return KindRemove
	case a.CDC != nil:
		return KindCDC
	case a.Metadata != nil:
		return KindMetadata
	case a.Protocol != nil:
		return KindProtocol
	case a.Sidecar != nil:
		return KindSidecar
	case a.CheckpointMetadata != nil:
		return KindCheckpointMetadata
	case a.CommitInfo != nil:
		return KindCommitInfo
	}
	return 0
}

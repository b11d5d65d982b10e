package deltalog

import (
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/parquet-go/parquet-go"
)

// The rows of a checkpoint file. parquet-go derives the Parquet schema from these types with
// Spark's field order, names and optionality: pointers, maps and lists are optional, a nil
// one is null and an empty map or list is present but empty.
type (
	ckptRow struct {
		Txn                *ckptTxn                `parquet:"txn"`
		Add                *ckptAdd                `parquet:"add"`
		Remove             *ckptRemove             `parquet:"remove"`
		MetaData           *ckptMetadata           `parquet:"metaData"`
		Protocol           *ckptProtocol           `parquet:"protocol"`
		CheckpointMetadata *ckptCheckpointMetadata `parquet:"checkpointMetadata"`
		Sidecar            *ckptSidecar            `parquet:"sidecar"`
	}
	ckptTxn struct {
		AppID       *string `parquet:"appId"`
		Version     *int64  `parquet:"version"`
		LastUpdated *int64  `parquet:"lastUpdated"`
	}
	ckptAdd struct {
		Path             *string            `parquet:"path"`
		PartitionValues  map[string]*string `parquet:"partitionValues,optional"`
		Size             *int64             `parquet:"size"`
		ModificationTime *int64             `parquet:"modificationTime"`
		DataChange       *bool              `parquet:"dataChange"`
		Stats            *string            `parquet:"stats"`
		Tags             map[string]*string `parquet:"tags,optional"`
		DeletionVector   *ckptDV            `parquet:"deletionVector"`
	}
	ckptRemove struct {
		Path                 *string            `parquet:"path"`
		DeletionTimestamp    *int64             `parquet:"deletionTimestamp"`
		DataChange           *bool              `parquet:"dataChange"`
		ExtendedFileMetadata *bool              `parquet:"extendedFileMetadata"`
		PartitionValues      map[string]*string `parquet:"partitionValues,optional"`
		Size                 *int64             `parquet:"size"`
		DeletionVector       *ckptDV            `parquet:"deletionVector"`
	}
	ckptDV struct {
		StorageType    *string `parquet:"storageType"`
		PathOrInlineDv *string `parquet:"pathOrInlineDv"`
		Offset         *int32  `parquet:"offset"`
		SizeInBytes    *int32  `parquet:"sizeInBytes"`
		Cardinality    *int64  `parquet:"cardinality"`
	}
	ckptMetadata struct {
		ID               *string            `parquet:"id"`
		Name             *string            `parquet:"name"`
		Description      *string            `parquet:"description"`
		Format           *ckptFormat        `parquet:"format"`
		SchemaString     *string            `parquet:"schemaString"`
		PartitionColumns []*string          `parquet:"partitionColumns,list,optional"`
		Configuration    map[string]*string `parquet:"configuration,optional"`
		CreatedTime      *int64             `parquet:"createdTime"`
	}
	ckptFormat struct {
		Provider *string            `parquet:"provider"`
		Options  map[string]*string `parquet:"options,optional"`
	}
	ckptProtocol struct {
		MinReaderVersion *int32    `parquet:"minReaderVersion"`
		MinWriterVersion *int32    `parquet:"minWriterVersion"`
		ReaderFeatures   []*string `parquet:"readerFeatures,list,optional"`
		WriterFeatures   []*string `parquet:"writerFeatures,list,optional"`
	}
	ckptCheckpointMetadata struct {
		Version *int64             `parquet:"version"`
		Tags    map[string]*string `parquet:"tags,optional"`
	}
	ckptSidecar struct {
		Path             *string            `parquet:"path"`
		SizeInBytes      *int64             `parquet:"sizeInBytes"`
		ModificationTime *int64             `parquet:"modificationTime"`
		Tags             map[string]*string `parquet:"tags,optional"`
	}
)

// pqCheckpointSchema is named like the schemas Spark writes.
var pqCheckpointSchema = parquet.NewSchema("spark_schema", parquet.SchemaOf(new(ckptRow)))

const (
	// ckptBatchRows is how many rows are buffered before they are handed to parquet-go, which
	// amortizes the per-call cost without holding much memory.
	ckptBatchRows = 1024
	// ckptRowGroupRows bounds a row group: parquet-go keeps a row group's compressed pages in
	// memory until it is flushed, so this bounds the writer's memory (tens of MB with long
	// paths) while keeping row groups large like Spark's.
	ckptRowGroupRows = 128 << 10
)

// WriteParquetCheckpoint writes actions, one row each, as a Parquet checkpoint file with the
// schema Spark uses (txn, add, remove, metaData, protocol, plus the checkpointMetadata and
// sidecar columns of V2 checkpoints), snappy-compressed. It streams: actions are consumed one
// at a time and memory is bounded by one row group. A sidecar file is written the same way
// from add and remove actions only.
//
// Fields the Action types do not carry are null (txn, tags, remove.partitionValues,
// remove.extendedFileMetadata); add.partitionValues, metaData.format.options,
// metaData.partitionColumns and metaData.configuration are written empty rather than null when
// unset, as the protocol requires them. Metadata is written from its typed fields, not Raw.
// The actions are copied as they come, so the sequence may reuse them.
func WriteParquetCheckpoint(w io.Writer, actions iter.Seq[*Action]) error {
	pw := parquet.NewGenericWriter[ckptRow](w, pqCheckpointSchema,
		parquet.Compression(&parquet.Snappy),
		// Spark writes version 1 data pages; some readers still handle only those well.
		parquet.DataPageVersion(1),
		parquet.CreatedBy("deltavacuum", "", ""),
	)
	b := newPQCheckpointBatch()
	rowsInGroup := 0
	flush := func() error {
		if _, err := pw.Write(b.rows); err != nil {
			return fmt.Errorf("writing checkpoint: %w", err)
		}
		rowsInGroup += len(b.rows)
		b.reset()
		if rowsInGroup >= ckptRowGroupRows {
			rowsInGroup = 0
			return pw.Flush()
		}
		return nil
	}
	for a := range actions {
		if err := b.add(a); err != nil {
			return err
		}
		if len(b.rows) == ckptBatchRows {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return pw.Close()
}

// pqCheckpointBatch holds the rows of one batch and copies of the actions they point into.
// Slots have a fixed capacity of one batch, so pointers into them stay valid while the batch
// fills; add and remove slots are reused across batches since they dominate big checkpoints.
type pqCheckpointBatch struct {
	rows    []ckptRow
	adds    []pqAddSlot
	removes []pqRemoveSlot
}

type pqAddSlot struct {
	add Add
	dv  pqDVSlot
	row ckptAdd
}

type pqRemoveSlot struct {
	remove    Remove
	timestamp int64
	size      int64
	dv        pqDVSlot
	row       ckptRemove
}

type pqDVSlot struct {
	dv     DeletionVector
	offset int32
	row    ckptDV
}

func newPQCheckpointBatch() *pqCheckpointBatch {
	return &pqCheckpointBatch{
		rows:    make([]ckptRow, 0, ckptBatchRows),
		adds:    make([]pqAddSlot, 0, ckptBatchRows),
		removes: make([]pqRemoveSlot, 0, ckptBatchRows),
	}
}

func (b *pqCheckpointBatch) reset() {
	clear(b.rows)
	b.rows = b.rows[:0]
	b.adds = b.adds[:0]
	b.removes = b.removes[:0]
}

// emptyStringMap is written for maps the protocol requires; parquet-go only reads it.
var emptyStringMap = map[string]*string{}

// add appends the row of one action.
func (b *pqCheckpointBatch) add(a *Action) error {
	if a == nil {
		return errors.New("writing checkpoint: nil action")
	}
	if a.CDC != nil || a.CommitInfo != nil {
		return errors.New("writing checkpoint: a checkpoint cannot hold cdc or commitInfo actions")
	}
	set := 0
	for _, p := range []bool{a.Add != nil, a.Remove != nil, a.Metadata != nil, a.Protocol != nil, a.CheckpointMetadata != nil, a.Sidecar != nil} {
		if p {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("writing checkpoint: an action must have exactly one field set, not %d", set)
	}
	var row ckptRow
	switch {
	case a.Add != nil:
		b.adds = b.adds[:len(b.adds)+1]
		s := &b.adds[len(b.adds)-1]
		s.add = *a.Add
		x := &s.add
		s.row = ckptAdd{
			Path:             &x.Path,
			PartitionValues:  stringMapRow(x.PartitionValues, true),
			Size:             &x.Size,
			ModificationTime: &x.ModificationTime,
			DataChange:       &x.DataChange,
			DeletionVector:   s.dv.set(x.DeletionVector),
		}
		if x.Stats != "" {
			s.row.Stats = &x.Stats
		}
		row.Add = &s.row
	case a.Remove != nil:
		b.removes = b.removes[:len(b.removes)+1]
		s := &b.removes[len(b.removes)-1]
		s.remove = *a.Remove
		x := &s.remove
		s.row = ckptRemove{
			Path:           &x.Path,
			DataChange:     &x.DataChange,
			DeletionVector: s.dv.set(x.DeletionVector),
		}
		if x.DeletionTimestamp != nil {
			s.timestamp = *x.DeletionTimestamp
			s.row.DeletionTimestamp = &s.timestamp
		}
		if x.Size != nil {
			s.size = *x.Size
			s.row.Size = &s.size
		}
		row.Remove = &s.row
	case a.Metadata != nil:
		x := *a.Metadata
		row.MetaData = &ckptMetadata{
			ID:               &x.ID,
			Name:             copyPtr(x.Name),
			Description:      copyPtr(x.Description),
			Format:           &ckptFormat{Provider: &x.Format.Provider, Options: stringMapRow(x.Format.Options, true)},
			SchemaString:     &x.SchemaString,
			PartitionColumns: stringListRow(x.PartitionColumns, true),
			Configuration:    stringMapRow(x.Configuration, true),
			CreatedTime:      copyPtr(x.CreatedTime),
		}
	case a.Protocol != nil:
		x := a.Protocol
		minReader, minWriter := int32(x.MinReaderVersion), int32(x.MinWriterVersion)
		row.Protocol = &ckptProtocol{
			MinReaderVersion: &minReader,
			MinWriterVersion: &minWriter,
			ReaderFeatures:   stringListRow(x.ReaderFeatures, false),
			WriterFeatures:   stringListRow(x.WriterFeatures, false),
		}
	case a.CheckpointMetadata != nil:
		x := *a.CheckpointMetadata
		row.CheckpointMetadata = &ckptCheckpointMetadata{Version: &x.Version}
	case a.Sidecar != nil:
		x := *a.Sidecar
		row.Sidecar = &ckptSidecar{Path: &x.Path, SizeInBytes: &x.SizeInBytes, ModificationTime: &x.ModificationTime}
	}
	b.rows = append(b.rows, row)
	return nil
}

// set copies dv into the slot and returns its row, nil for no deletion vector.
func (s *pqDVSlot) set(dv *DeletionVector) *ckptDV {
	if dv == nil {
		return nil
	}
	s.dv = *dv
	s.row = ckptDV{
		StorageType:    &s.dv.StorageType,
		PathOrInlineDv: &s.dv.PathOrInlineDv,
		SizeInBytes:    &s.dv.SizeInBytes,
		Cardinality:    &s.dv.Cardinality,
	}
	if dv.Offset != nil {
		s.offset = *dv.Offset
		s.row.Offset = &s.offset
	}
	return &s.row
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// stringMapRow converts m for writing; a nil m is null unless required, then empty.
func stringMapRow(m map[string]string, required bool) map[string]*string {
	if len(m) == 0 {
		if m == nil && !required {
			return nil
		}
		return emptyStringMap
	}
	out := make(map[string]*string, len(m))
	for k, v := range m {
		out[k] = &v
	}
	return out
}

// stringListRow converts l for writing; a nil l is null unless required, then empty.
func stringListRow(l []string, required bool) []*string {
	if l == nil && !required {
		return nil
	}
	out := make([]*string, len(l))
	for i := range l {
		v := l[i]
		out[i] = &v
	}
	return out
}

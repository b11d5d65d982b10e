package deltalog

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// The checkpoint schema, as Go types only so that parquet-go derives the Parquet schema with
// Spark's field order, names and optionality (pointers, maps and lists are optional). Values
// are never written through these types: rows are built column by column below.
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
		ID          *string `parquet:"id"`
		Name        *string `parquet:"name"`
		Description *string `parquet:"description"`
		Format      *struct {
			Provider *string            `parquet:"provider"`
			Options  map[string]*string `parquet:"options,optional"`
		} `parquet:"format"`
		SchemaString     *string            `parquet:"schemaString"`
		PartitionColumns []*string          `parquet:"partitionColumns,list,optional"`
		Configuration    map[string]*string `parquet:"configuration,optional"`
		CreatedTime      *int64             `parquet:"createdTime"`
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
	// ckptBatchRows is how many rows are buffered before they are handed to the column
	// writers, which amortizes the per-call cost without holding much memory.
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
// commitInfo and cdc actions have no place in a checkpoint and are an error.
func WriteParquetCheckpoint(w io.Writer, actions iter.Seq[*Action]) error {
	cw := newPQCheckpointWriter()
	pw := parquet.NewWriter(w, pqCheckpointSchema,
		parquet.Compression(&parquet.Snappy),
		// Spark writes version 1 data pages; some readers still handle only those well.
		parquet.DataPageVersion(1),
		parquet.CreatedBy("deltavacuum", "", ""),
	)
	rowsInGroup := 0
	flush := func() error {
		cols := pw.ColumnWriters()
		for i, vals := range cw.cols {
			if len(vals) == 0 {
				continue
			}
			if _, err := cols[i].WriteRowValues(vals); err != nil {
				return fmt.Errorf("writing checkpoint column %s: %w", strings.Join(pqCheckpointSchema.Columns()[i], "."), err)
			}
			clear(vals) // drop references to the batch's strings
			cw.cols[i] = vals[:0]
		}
		rowsInGroup += cw.rows
		cw.rows = 0
		if rowsInGroup >= ckptRowGroupRows {
			rowsInGroup = 0
			return pw.Flush()
		}
		return nil
	}
	for a := range actions {
		if err := cw.row(a); err != nil {
			return err
		}
		if cw.rows >= ckptBatchRows {
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

// ckptLeaf is a leaf column of the checkpoint schema.
type ckptLeaf struct {
	col int // column index
	def int // maximum definition level
}

// ckptGroup is a top-level action column: its leaves are the columns lo to hi-1.
type ckptGroup struct{ lo, hi int }

// pqCheckpointWriter turns actions into per-column values.
type pqCheckpointWriter struct {
	cols [][]parquet.Value
	rows int

	txn, add, remove, metaData, protocol, checkpointMetadata, sidecar ckptGroup

	addPath, addSize, addModTime, addDataChange, addStats ckptLeaf
	addPV, addTags                                        ckptMap
	addDV                                                 ckptDVLeaves

	rmPath, rmTimestamp, rmDataChange, rmExtended, rmSize ckptLeaf
	rmPV                                                  ckptMap
	rmDV                                                  ckptDVLeaves

	mdID, mdName, mdDescription, mdProvider, mdSchema, mdCreated ckptLeaf
	mdOptions, mdConfiguration                                   ckptMap
	mdPartitionColumns                                           ckptLeaf

	pMinReader, pMinWriter, pReaderFeatures, pWriterFeatures ckptLeaf

	cmVersion ckptLeaf
	cmTags    ckptMap

	scPath, scSize, scModTime ckptLeaf
	scTags                    ckptMap
}

// ckptMap is a MAP column: its key and value leaves.
type ckptMap struct{ key, value ckptLeaf }

type ckptDVLeaves struct {
	storageType, pathOrInlineDv, offset, sizeInBytes, cardinality ckptLeaf
}

func newPQCheckpointWriter() *pqCheckpointWriter {
	s := pqCheckpointSchema
	leaf := func(path string) ckptLeaf {
		l, ok := s.Lookup(strings.Split(path, ".")...)
		if !ok {
			panic("checkpoint schema has no column " + path)
		}
		return ckptLeaf{col: l.ColumnIndex, def: l.MaxDefinitionLevel}
	}
	mapLeaves := func(path string) ckptMap {
		return ckptMap{key: leaf(path + ".key_value.key"), value: leaf(path + ".key_value.value")}
	}
	dv := func(path string) ckptDVLeaves {
		return ckptDVLeaves{
			storageType:    leaf(path + ".storageType"),
			pathOrInlineDv: leaf(path + ".pathOrInlineDv"),
			offset:         leaf(path + ".offset"),
			sizeInBytes:    leaf(path + ".sizeInBytes"),
			cardinality:    leaf(path + ".cardinality"),
		}
	}
	group := func(name string) ckptGroup {
		g := ckptGroup{lo: -1}
		for i, p := range s.Columns() {
			if p[0] == name {
				if g.lo < 0 {
					g.lo = i
				}
				g.hi = i + 1
			}
		}
		return g
	}
	return &pqCheckpointWriter{
		cols: make([][]parquet.Value, len(s.Columns())),

		txn:                group("txn"),
		add:                group("add"),
		remove:             group("remove"),
		metaData:           group("metaData"),
		protocol:           group("protocol"),
		checkpointMetadata: group("checkpointMetadata"),
		sidecar:            group("sidecar"),

		addPath:       leaf("add.path"),
		addPV:         mapLeaves("add.partitionValues"),
		addSize:       leaf("add.size"),
		addModTime:    leaf("add.modificationTime"),
		addDataChange: leaf("add.dataChange"),
		addStats:      leaf("add.stats"),
		addTags:       mapLeaves("add.tags"),
		addDV:         dv("add.deletionVector"),

		rmPath:       leaf("remove.path"),
		rmTimestamp:  leaf("remove.deletionTimestamp"),
		rmDataChange: leaf("remove.dataChange"),
		rmExtended:   leaf("remove.extendedFileMetadata"),
		rmPV:         mapLeaves("remove.partitionValues"),
		rmSize:       leaf("remove.size"),
		rmDV:         dv("remove.deletionVector"),

		mdID:               leaf("metaData.id"),
		mdName:             leaf("metaData.name"),
		mdDescription:      leaf("metaData.description"),
		mdProvider:         leaf("metaData.format.provider"),
		mdOptions:          mapLeaves("metaData.format.options"),
		mdSchema:           leaf("metaData.schemaString"),
		mdPartitionColumns: leaf("metaData.partitionColumns.list.element"),
		mdConfiguration:    mapLeaves("metaData.configuration"),
		mdCreated:          leaf("metaData.createdTime"),

		pMinReader:      leaf("protocol.minReaderVersion"),
		pMinWriter:      leaf("protocol.minWriterVersion"),
		pReaderFeatures: leaf("protocol.readerFeatures.list.element"),
		pWriterFeatures: leaf("protocol.writerFeatures.list.element"),

		cmVersion: leaf("checkpointMetadata.version"),
		cmTags:    mapLeaves("checkpointMetadata.tags"),

		scPath:    leaf("sidecar.path"),
		scSize:    leaf("sidecar.sizeInBytes"),
		scModTime: leaf("sidecar.modificationTime"),
		scTags:    mapLeaves("sidecar.tags"),
	}
}

// put appends v to leaf l at definition level def and repetition level rep.
func (w *pqCheckpointWriter) put(l ckptLeaf, v parquet.Value, rep, def int) {
	w.cols[l.col] = append(w.cols[l.col], v.Level(rep, def, l.col))
}

// null appends a null whose deepest defined ancestor has definition level def.
func (w *pqCheckpointWriter) null(l ckptLeaf, def int) {
	w.put(l, parquet.Value{}, 0, def)
}

// absent appends a null for every leaf of a group that is not this row's action.
func (w *pqCheckpointWriter) absent(g ckptGroup) {
	for c := g.lo; c < g.hi; c++ {
		w.cols[c] = append(w.cols[c], parquet.Value{}.Level(0, 0, c))
	}
}

func (w *pqCheckpointWriter) str(l ckptLeaf, s string) {
	w.put(l, parquet.ByteArrayValue([]byte(s)), 0, l.def)
}

func (w *pqCheckpointWriter) optStr(l ckptLeaf, s *string) {
	if s == nil {
		w.null(l, l.def-1)
		return
	}
	w.str(l, *s)
}

func (w *pqCheckpointWriter) i64(l ckptLeaf, v int64) {
	w.put(l, parquet.Int64Value(v), 0, l.def)
}

func (w *pqCheckpointWriter) optI64(l ckptLeaf, v *int64) {
	if v == nil {
		w.null(l, l.def-1)
		return
	}
	w.i64(l, *v)
}

func (w *pqCheckpointWriter) i32(l ckptLeaf, v int32) {
	w.put(l, parquet.Int32Value(v), 0, l.def)
}

func (w *pqCheckpointWriter) boolean(l ckptLeaf, v bool) {
	w.put(l, parquet.BooleanValue(v), 0, l.def)
}

// stringMap writes m as a present MAP (empty when m has no entries), keys in sorted order so
// that the output is deterministic.
func (w *pqCheckpointWriter) stringMap(m ckptMap, kv map[string]string) {
	// The key is required inside the repeated key_value group: its level is key_value's.
	entry := m.key.def
	if len(kv) == 0 {
		w.null(m.key, entry-1)
		w.null(m.value, entry-1)
		return
	}
	for i, k := range slices.Sorted(maps.Keys(kv)) {
		rep := min(i, 1)
		w.put(m.key, parquet.ByteArrayValue([]byte(k)), rep, m.key.def)
		w.put(m.value, parquet.ByteArrayValue([]byte(kv[k])), rep, m.value.def)
	}
}

// nullMap writes a null MAP whose parent is present.
func (w *pqCheckpointWriter) nullMap(m ckptMap) {
	w.null(m.key, m.key.def-2)
	w.null(m.value, m.key.def-2)
}

// stringList writes a LIST of strings; l is its element leaf. A nil list is null when
// nullable, empty otherwise.
func (w *pqCheckpointWriter) stringList(l ckptLeaf, list []string, nullable bool) {
	// element (def) sits in the repeated group list (def-1) in the LIST group (def-2).
	switch {
	case list == nil && nullable:
		w.null(l, l.def-3)
	case len(list) == 0:
		w.null(l, l.def-2)
	default:
		for i, s := range list {
			w.put(l, parquet.ByteArrayValue([]byte(s)), min(i, 1), l.def)
		}
	}
}

func (w *pqCheckpointWriter) deletionVector(d ckptDVLeaves, dv *DeletionVector) {
	if dv == nil {
		for _, l := range []ckptLeaf{d.storageType, d.pathOrInlineDv, d.offset, d.sizeInBytes, d.cardinality} {
			w.null(l, l.def-2)
		}
		return
	}
	w.str(d.storageType, dv.StorageType)
	w.str(d.pathOrInlineDv, dv.PathOrInlineDv)
	if dv.Offset == nil {
		w.null(d.offset, d.offset.def-1)
	} else {
		w.i32(d.offset, *dv.Offset)
	}
	w.i32(d.sizeInBytes, dv.SizeInBytes)
	w.i64(d.cardinality, dv.Cardinality)
}

// row appends the row of one action.
func (w *pqCheckpointWriter) row(a *Action) error {
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
	w.absent(w.txn)
	if x := a.Add; x != nil {
		w.str(w.addPath, x.Path)
		w.stringMap(w.addPV, x.PartitionValues)
		w.i64(w.addSize, x.Size)
		w.i64(w.addModTime, x.ModificationTime)
		w.boolean(w.addDataChange, x.DataChange)
		if x.Stats == "" {
			w.null(w.addStats, w.addStats.def-1)
		} else {
			w.str(w.addStats, x.Stats)
		}
		w.nullMap(w.addTags)
		w.deletionVector(w.addDV, x.DeletionVector)
	} else {
		w.absent(w.add)
	}
	if x := a.Remove; x != nil {
		w.str(w.rmPath, x.Path)
		w.optI64(w.rmTimestamp, x.DeletionTimestamp)
		w.boolean(w.rmDataChange, x.DataChange)
		w.null(w.rmExtended, w.rmExtended.def-1)
		w.nullMap(w.rmPV)
		w.optI64(w.rmSize, x.Size)
		w.deletionVector(w.rmDV, x.DeletionVector)
	} else {
		w.absent(w.remove)
	}
	if x := a.Metadata; x != nil {
		w.str(w.mdID, x.ID)
		w.optStr(w.mdName, x.Name)
		w.optStr(w.mdDescription, x.Description)
		w.str(w.mdProvider, x.Format.Provider)
		w.stringMap(w.mdOptions, x.Format.Options)
		w.str(w.mdSchema, x.SchemaString)
		w.stringList(w.mdPartitionColumns, x.PartitionColumns, false)
		w.stringMap(w.mdConfiguration, x.Configuration)
		w.optI64(w.mdCreated, x.CreatedTime)
	} else {
		w.absent(w.metaData)
	}
	if x := a.Protocol; x != nil {
		w.i32(w.pMinReader, int32(x.MinReaderVersion))
		w.i32(w.pMinWriter, int32(x.MinWriterVersion))
		w.stringList(w.pReaderFeatures, x.ReaderFeatures, true)
		w.stringList(w.pWriterFeatures, x.WriterFeatures, true)
	} else {
		w.absent(w.protocol)
	}
	if x := a.CheckpointMetadata; x != nil {
		w.i64(w.cmVersion, x.Version)
		w.nullMap(w.cmTags)
	} else {
		w.absent(w.checkpointMetadata)
	}
	if x := a.Sidecar; x != nil {
		w.str(w.scPath, x.Path)
		w.i64(w.scSize, x.SizeInBytes)
		w.i64(w.scModTime, x.ModificationTime)
		w.nullMap(w.scTags)
	} else {
		w.absent(w.sidecar)
	}
	w.rows++
	return nil
}

// Package checkpointwriter writes Delta checkpoint files in Parquet, with Spark's schema, from
// deltalog actions. The benchmarks' table generator (bench/tablegen) and tests use it to make
// checkpoints; deltavacuum itself never writes one, which is why it is not part of deltalog's
// API. It must never be imported by the library's packages.
package checkpointwriter

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"
	"unsafe"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// The checkpoint schema, as Go types from which parquet-go derives the Parquet schema with
// Spark's field order, names and optionality (pointers, maps and lists are optional). Rows are
// not written through these types: parquet-go's reflective row writer costs about 2µs a row,
// so cells are built column by column instead (see pqCheckpointWriter).
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
	// ckptBatchRows is how many rows are buffered before they are handed to the column
	// writers, which amortizes the per-call cost without holding much memory.
	ckptBatchRows = 1024
	// RowGroupRows bounds a row group: parquet-go keeps a row group's compressed pages in
	// memory until it is flushed, so this bounds the writer's memory (tens of MB with long
	// paths) while keeping row groups large like Spark's.
	RowGroupRows = 128 << 10
)

// Write writes actions, one row each, as a Parquet checkpoint file with the
// schema Spark uses (txn, add, remove, metaData, protocol, plus the checkpointMetadata and
// sidecar columns of V2 checkpoints), snappy-compressed. It streams: actions are consumed one
// at a time and memory is bounded by one row group. A sidecar file is written the same way
// from add and remove actions only.
//
// Fields the Action types do not carry are null (txn, tags, remove.partitionValues,
// remove.extendedFileMetadata); add.partitionValues, metaData.format.options,
// metaData.partitionColumns and metaData.configuration are written empty rather than null when
// unset, as the protocol requires them. Metadata is written from its typed fields, not Raw.
// Actions are not retained after the sequence moves on, so it may reuse them. After an error
// the output is incomplete.
func Write(w io.Writer, actions iter.Seq[*deltalog.Action]) error {
	return WriteCompressed(w, actions, pqFastSnappy{})
}

// WriteCompressed is Write with another compression codec (&parquet.Zstd, say), for tests and
// benchmarks of readers.
func WriteCompressed(w io.Writer, actions iter.Seq[*deltalog.Action], codec compress.Codec) error {
	cw := newPQCheckpointWriter()
	pw := parquet.NewWriter(w, pqCheckpointSchema,
		parquet.Compression(codec),
		// Spark writes version 1 data pages; some readers still handle only those well.
		parquet.DataPageVersion(1),
		// Like parquet-mr since 1.11, no statistics in page headers (the column index has them).
		parquet.DataPageStatistics(false),
	)
	rowsInGroup := 0
	flush := func() error {
		cw.fillAll()
		cols := pw.ColumnWriters()
		for i, vals := range cw.cols {
			if _, err := cols[i].WriteRowValues(vals); err != nil {
				return fmt.Errorf("writing checkpoint column %s: %w", strings.Join(pqCheckpointSchema.Columns()[i], "."), err)
			}
			clear(vals) // drop the batch's references to strings
			cw.cols[i] = vals[:0]
		}
		rowsInGroup += cw.rows
		cw.rows = 0
		clear(cw.filled[:])
		if rowsInGroup >= RowGroupRows {
			rowsInGroup = 0
			return pw.Flush()
		}
		return nil
	}
	for a := range actions {
		if err := cw.row(a); err != nil {
			return err
		}
		if cw.rows == ckptBatchRows {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if cw.rows > 0 {
		if err := flush(); err != nil {
			return err
		}
	}
	return pw.Close()
}

// pqFastSnappy is the SNAPPY codec with klauspost's fastest Snappy-compatible encoder.
// parquet-go's codec uses the "better" encoder, which took a third of the writer's time for
// files a few percent smaller.
type pqFastSnappy struct{}

func (pqFastSnappy) String() string { return "SNAPPY" }

func (pqFastSnappy) CompressionCodec() format.CompressionCodec { return format.Snappy }

func (pqFastSnappy) Encode(dst, src []byte) ([]byte, error) {
	return s2.EncodeSnappy(dst[:cap(dst)], src), nil
}

func (pqFastSnappy) Decode(dst, src []byte) ([]byte, error) {
	return s2.Decode(dst[:cap(dst)], src)
}

// ckptLeaf is a leaf column of the checkpoint schema.
type ckptLeaf struct {
	col int // column index
	def int // maximum definition level
}

// ckptGroup is a top-level action column: its leaves are the columns lo to hi-1; id indexes
// pqCheckpointWriter.filled.
type ckptGroup struct{ id, lo, hi int }

const ckptNumGroups = 7

// ckptMap is a MAP column: its key and value leaves.
type ckptMap struct{ key, value ckptLeaf }

type ckptDVLeaves struct {
	storageType, pathOrInlineDv, offset, sizeInBytes, cardinality ckptLeaf
}

// pqCheckpointWriter turns actions into the cells of each column, one batch at a time.
type pqCheckpointWriter struct {
	cols [][]parquet.Value
	rows int
	// nulls[c][d] is a null cell of column c whose deepest defined ancestor is at level d.
	nulls [][]parquet.Value
	// Nearly every cell of a checkpoint is null: a row holds one action among seven groups.
	// Rather than append those nulls cell by cell, a group's columns are filled up to the
	// current row only when the group next holds an action (or the batch ends), with a copy
	// from nullRuns[c], a batch worth of row-level nulls of column c.
	nullRuns [][]parquet.Value
	filled   [ckptNumGroups]int // rows of the batch already in each group's columns
	groups   []ckptGroup

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

func newPQCheckpointWriter() *pqCheckpointWriter {
	s := pqCheckpointSchema
	columns := s.Columns()
	w := &pqCheckpointWriter{
		cols:     make([][]parquet.Value, len(columns)),
		nulls:    make([][]parquet.Value, len(columns)),
		nullRuns: make([][]parquet.Value, len(columns)),
	}
	leaf := func(path string) ckptLeaf {
		l, ok := s.Lookup(strings.Split(path, ".")...)
		if !ok {
			panic("checkpoint schema has no column " + path)
		}
		return ckptLeaf{col: l.ColumnIndex, def: l.MaxDefinitionLevel}
	}
	for i, path := range columns {
		w.cols[i] = make([]parquet.Value, 0, ckptBatchRows)
		l := leaf(strings.Join(path, "."))
		for d := range l.def {
			w.nulls[i] = append(w.nulls[i], parquet.NullValue().Level(0, d, i))
		}
		w.nullRuns[i] = slices.Repeat(w.nulls[i][:1], ckptBatchRows)
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
		g := ckptGroup{id: len(w.groups), lo: -1}
		defer func() { w.groups = append(w.groups, g) }()
		for i, p := range columns {
			if p[0] == name {
				if g.lo < 0 {
					g.lo = i
				}
				g.hi = i + 1
			}
		}
		return g
	}

	w.txn = group("txn")
	w.add = group("add")
	w.remove = group("remove")
	w.metaData = group("metaData")
	w.protocol = group("protocol")
	w.checkpointMetadata = group("checkpointMetadata")
	w.sidecar = group("sidecar")

	w.addPath = leaf("add.path")
	w.addPV = mapLeaves("add.partitionValues")
	w.addSize = leaf("add.size")
	w.addModTime = leaf("add.modificationTime")
	w.addDataChange = leaf("add.dataChange")
	w.addStats = leaf("add.stats")
	w.addTags = mapLeaves("add.tags")
	w.addDV = dv("add.deletionVector")

	w.rmPath = leaf("remove.path")
	w.rmTimestamp = leaf("remove.deletionTimestamp")
	w.rmDataChange = leaf("remove.dataChange")
	w.rmExtended = leaf("remove.extendedFileMetadata")
	w.rmPV = mapLeaves("remove.partitionValues")
	w.rmSize = leaf("remove.size")
	w.rmDV = dv("remove.deletionVector")

	w.mdID = leaf("metaData.id")
	w.mdName = leaf("metaData.name")
	w.mdDescription = leaf("metaData.description")
	w.mdProvider = leaf("metaData.format.provider")
	w.mdOptions = mapLeaves("metaData.format.options")
	w.mdSchema = leaf("metaData.schemaString")
	w.mdPartitionColumns = leaf("metaData.partitionColumns.list.element")
	w.mdConfiguration = mapLeaves("metaData.configuration")
	w.mdCreated = leaf("metaData.createdTime")

	w.pMinReader = leaf("protocol.minReaderVersion")
	w.pMinWriter = leaf("protocol.minWriterVersion")
	w.pReaderFeatures = leaf("protocol.readerFeatures.list.element")
	w.pWriterFeatures = leaf("protocol.writerFeatures.list.element")

	w.cmVersion = leaf("checkpointMetadata.version")
	w.cmTags = mapLeaves("checkpointMetadata.tags")

	w.scPath = leaf("sidecar.path")
	w.scSize = leaf("sidecar.sizeInBytes")
	w.scModTime = leaf("sidecar.modificationTime")
	w.scTags = mapLeaves("sidecar.tags")
	return w
}

// put appends the defined cell v to leaf l; rep is 1 for the second and later elements of a
// repeated field.
func (w *pqCheckpointWriter) put(l ckptLeaf, v parquet.Value, rep int) {
	v.SetRepetitionLevel(rep)
	v.SetDefinitionLevel(l.def)
	v.SetColumnIndex(l.col)
	w.cols[l.col] = append(w.cols[l.col], v)
}

// null appends a null whose deepest defined ancestor has definition level def.
func (w *pqCheckpointWriter) null(l ckptLeaf, def int) {
	w.cols[l.col] = append(w.cols[l.col], w.nulls[l.col][def])
}

// fill appends null rows to the columns of g up to, not including, the current row.
func (w *pqCheckpointWriter) fill(g ckptGroup) {
	n := w.rows - w.filled[g.id]
	if n == 0 {
		return
	}
	for c := g.lo; c < g.hi; c++ {
		w.cols[c] = append(w.cols[c], w.nullRuns[c][:n]...)
	}
	w.filled[g.id] = w.rows
}

// present prepares the columns of g for the current row's action.
func (w *pqCheckpointWriter) present(g ckptGroup) {
	w.fill(g)
	w.filled[g.id] = w.rows + 1
}

// fillAll completes every column with null rows up to the end of the batch.
func (w *pqCheckpointWriter) fillAll() {
	for _, g := range w.groups {
		w.fill(g)
	}
}

// stringValue makes a BYTE_ARRAY cell that shares s's bytes: parquet-go copies the bytes into
// its column buffer and never writes to them, and copying every path first would double the
// allocations of a writer that is used for millions of rows.
func stringValue(s string) parquet.Value {
	return parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s)))
}

func (w *pqCheckpointWriter) str(l ckptLeaf, s string) { w.put(l, stringValue(s), 0) }

func (w *pqCheckpointWriter) optStr(l ckptLeaf, s *string) {
	if s == nil {
		w.null(l, l.def-1)
		return
	}
	w.str(l, *s)
}

func (w *pqCheckpointWriter) i64(l ckptLeaf, v int64) { w.put(l, parquet.Int64Value(v), 0) }

func (w *pqCheckpointWriter) optI64(l ckptLeaf, v *int64) {
	if v == nil {
		w.null(l, l.def-1)
		return
	}
	w.i64(l, *v)
}

func (w *pqCheckpointWriter) i32(l ckptLeaf, v int32) { w.put(l, parquet.Int32Value(v), 0) }

func (w *pqCheckpointWriter) boolean(l ckptLeaf, v bool) { w.put(l, parquet.BooleanValue(v), 0) }

// stringMap writes kv as a present MAP, empty when it has no entries, with sorted keys so
// that the output is deterministic.
func (w *pqCheckpointWriter) stringMap(m ckptMap, kv map[string]string) {
	if len(kv) == 0 {
		// The key is required inside the repeated key_value group, so the key's maximum
		// level is key_value's; the MAP group itself is one level up.
		w.null(m.key, m.key.def-1)
		w.null(m.value, m.key.def-1)
		return
	}
	keys := slices.Sorted(maps.Keys(kv))
	for i, k := range keys {
		w.put(m.key, stringValue(k), min(i, 1))
		w.put(m.value, stringValue(kv[k]), min(i, 1))
	}
}

// nullMap writes a null MAP whose parent group is present.
func (w *pqCheckpointWriter) nullMap(m ckptMap) {
	w.null(m.key, m.key.def-2)
	w.null(m.value, m.key.def-2)
}

// stringList writes a LIST of strings whose element leaf is l. A nil list is null when
// nullable, empty otherwise.
func (w *pqCheckpointWriter) stringList(l ckptLeaf, list []string, nullable bool) {
	// The element (l.def) sits in the repeated group "list" (l.def-1) of the LIST (l.def-2).
	switch {
	case list == nil && nullable:
		w.null(l, l.def-3)
	case len(list) == 0:
		w.null(l, l.def-2)
	default:
		for i, s := range list {
			w.put(l, stringValue(s), min(i, 1))
		}
	}
}

func (w *pqCheckpointWriter) deletionVector(d ckptDVLeaves, dv *deltalog.DeletionVector) {
	if dv == nil {
		for _, l := range [...]ckptLeaf{d.storageType, d.pathOrInlineDv, d.offset, d.sizeInBytes, d.cardinality} {
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

// row appends the cells of one action.
func (w *pqCheckpointWriter) row(a *deltalog.Action) error {
	if a == nil {
		return errors.New("writing checkpoint: nil action")
	}
	if a.CDC != nil || a.CommitInfo != nil {
		return errors.New("writing checkpoint: a checkpoint cannot hold cdc or commitInfo actions")
	}
	set := 0
	for _, p := range [...]bool{a.Add != nil, a.Remove != nil, a.Metadata != nil, a.Protocol != nil, a.CheckpointMetadata != nil, a.Sidecar != nil} {
		if p {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("writing checkpoint: an action must have exactly one field set, not %d", set)
	}
	if x := a.Add; x != nil {
		w.present(w.add)
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
	}
	if x := a.Remove; x != nil {
		w.present(w.remove)
		w.str(w.rmPath, x.Path)
		w.optI64(w.rmTimestamp, x.DeletionTimestamp)
		w.boolean(w.rmDataChange, x.DataChange)
		w.null(w.rmExtended, w.rmExtended.def-1)
		w.nullMap(w.rmPV)
		w.optI64(w.rmSize, x.Size)
		w.deletionVector(w.rmDV, x.DeletionVector)
	}
	if x := a.Metadata; x != nil {
		w.present(w.metaData)
		w.str(w.mdID, x.ID)
		w.optStr(w.mdName, x.Name)
		w.optStr(w.mdDescription, x.Description)
		w.str(w.mdProvider, x.Format.Provider)
		w.stringMap(w.mdOptions, x.Format.Options)
		w.str(w.mdSchema, x.SchemaString)
		w.stringList(w.mdPartitionColumns, x.PartitionColumns, false)
		w.stringMap(w.mdConfiguration, x.Configuration)
		w.optI64(w.mdCreated, x.CreatedTime)
	}
	if x := a.Protocol; x != nil {
		w.present(w.protocol)
		w.i32(w.pMinReader, int32(x.MinReaderVersion))
		w.i32(w.pMinWriter, int32(x.MinWriterVersion))
		w.stringList(w.pReaderFeatures, x.ReaderFeatures, true)
		w.stringList(w.pWriterFeatures, x.WriterFeatures, true)
	}
	if x := a.CheckpointMetadata; x != nil {
		w.present(w.checkpointMetadata)
		w.i64(w.cmVersion, x.Version)
		w.nullMap(w.cmTags)
	}
	if x := a.Sidecar; x != nil {
		w.present(w.sidecar)
		w.str(w.scPath, x.Path)
		w.i64(w.scSize, x.SizeInBytes)
		w.i64(w.scModTime, x.ModificationTime)
		w.nullMap(w.scTags)
	}
	w.rows++
	return nil
}

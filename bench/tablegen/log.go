package tablegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strconv"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// FileSize is the size add and remove actions record for a data file (the generated files
// themselves are empty).
const FileSize = 64 << 20

// Protocol returns the table's protocol action.
func (t *Table) Protocol() *deltalog.Protocol {
	if t.DVFraction > 0 {
		return &deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors"}}
	}
	return &deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
}

const schemaString = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},` +
	`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},` +
	`{"name":"value","type":"double","nullable":true,"metadata":{}},` +
	`{"name":"name","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"date","type":"string","nullable":true,"metadata":{}}]}`

// Metadata returns the table's metaData action.
func (t *Table) Metadata() *deltalog.Metadata {
	id := string(appendUUID(nil, t.uuidBytes(3, 0)))
	created := t.oldMs - 3600_000
	m := &deltalog.Metadata{
		ID:               id,
		Format:           deltalog.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString:     schemaString,
		PartitionColumns: []string{},
		Configuration:    map[string]string{},
		CreatedTime:      &created,
	}
	if t.Partitions > 0 {
		m.PartitionColumns = []string{"date"}
	}
	if t.DVFraction > 0 {
		m.Configuration["delta.enableDeletionVectors"] = "true"
	}
	return m
}

// stats returns Spark-like statistics for file g (about 250 bytes).
func (t *Table) stats(g int64) string {
	if t.NoStats {
		return ""
	}
	h := splitmix(uint64(g) ^ t.Seed)
	n := 100_000 + int64(h%900_000)
	lo := int64(g) * 1_000_000
	ts := time.UnixMilli(t.oldMs - int64(h%86_400_000)).UTC()
	var b []byte
	b = append(b, `{"numRecords":`...)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, `,"minValues":{"id":`...)
	b = strconv.AppendInt(b, lo, 10)
	b = append(b, `,"ts":"`...)
	b = ts.AppendFormat(b, "2006-01-02T15:04:05.000Z")
	b = append(b, `","value":-`...)
	b = strconv.AppendFloat(b, float64(h%10_000)/7, 'g', -1, 64)
	b = append(b, `,"name":"a`...)
	b = strconv.AppendUint(b, h%1000, 36)
	b = append(b, `"},"maxValues":{"id":`...)
	b = strconv.AppendInt(b, lo+n-1, 10)
	b = append(b, `,"ts":"`...)
	b = ts.Add(time.Hour).AppendFormat(b, "2006-01-02T15:04:05.000Z")
	b = append(b, `","value":`...)
	b = strconv.AppendFloat(b, float64(h%100_000)/3, 'g', -1, 64)
	b = append(b, `,"name":"z`...)
	b = strconv.AppendUint(b, h%1000, 36)
	b = append(b, `"},"nullCount":{"id":0,"ts":0,"value":`...)
	b = strconv.AppendUint(b, h%17, 10)
	b = append(b, `,"name":0}}`...)
	return string(b)
}

func (t *Table) partitionValues(g int64) map[string]string {
	if t.Partitions == 0 {
		return map[string]string{}
	}
	p, _ := t.Locate(g)
	return map[string]string{"date": t.PartitionValue(p)}
}

// liveDV returns the deletion vector of the live add of rank r, or nil.
func (t *Table) liveDV(r int64) *deltalog.DeletionVector {
	if r >= t.liveDVs {
		return nil
	}
	path, off := t.dvDescriptor(r/DVsPerFile, r%DVsPerFile)
	return &deltalog.DeletionVector{StorageType: "u", PathOrInlineDv: path, Offset: &off, SizeInBytes: 34, Cardinality: 3}
}

func (t *Table) tombDV(s int64) *deltalog.DeletionVector {
	if s >= t.tombDVs {
		return nil
	}
	path, off := t.dvDescriptor(t.LiveDVFiles()+s/DVsPerFile, s%DVsPerFile)
	return &deltalog.DeletionVector{StorageType: "u", PathOrInlineDv: path, Offset: &off, SizeInBytes: 34, Cardinality: 3}
}

// AddAction returns the add action of the live file of rank r.
func (t *Table) AddAction(r int64) *deltalog.Add {
	g := t.id(r)
	return &deltalog.Add{
		Path:             t.Key(g),
		Size:             FileSize,
		ModificationTime: t.oldMs,
		DataChange:       true,
		DeletionVector:   t.liveDV(r),
		PartitionValues:  t.partitionValues(g),
		Stats:            t.stats(g),
	}
}

// RemoveAction returns the remove action of the tombstone of rank s.
func (t *Table) RemoveAction(s int64) *deltalog.Remove {
	g := t.id(t.Live + s)
	ts, size := t.oldMs, int64(FileSize)
	return &deltalog.Remove{Path: t.Key(g), DeletionTimestamp: &ts, Size: &size, DataChange: true, DeletionVector: t.tombDV(s)}
}

// CheckpointActions yields the rows of the checkpoint at CheckpointVersion: protocol,
// metadata, the live adds not written in later commits and the tombstones not written in
// later commits.
func (t *Table) CheckpointActions() iter.Seq[*deltalog.Action] {
	return t.checkpointRows(0, t.CheckpointRows())
}

// checkpointRows yields rows [from, to) of the checkpoint.
func (t *Table) checkpointRows(from, to int64) iter.Seq[*deltalog.Action] {
	return func(yield func(*deltalog.Action) bool) {
		adds := t.Live - t.jsonAdds
		var a deltalog.Action
		for i := from; i < to; i++ {
			switch {
			case i == 0:
				a = deltalog.Action{Protocol: t.Protocol()}
			case i == 1:
				a = deltalog.Action{Metadata: t.Metadata()}
			case i-2 < adds:
				a = deltalog.Action{Add: t.AddAction(i - 2)}
			default:
				a = deltalog.Action{Remove: t.RemoveAction(i - 2 - adds)}
			}
			if !yield(&a) {
				return
			}
		}
	}
}

// CheckpointRows is the number of rows CheckpointActions yields.
func (t *Table) CheckpointRows() int64 { return 2 + t.Live - t.jsonAdds + t.ckptTombs }

// CheckpointParts is the number of files of the checkpoint: one, or a multi-part checkpoint
// of at most CheckpointPartRows rows per part.
func (t *Table) CheckpointParts() int64 {
	if t.CheckpointPartRows <= 0 || t.CheckpointRows() <= t.CheckpointPartRows {
		return 1
	}
	return (t.CheckpointRows() + t.CheckpointPartRows - 1) / t.CheckpointPartRows
}

// CheckpointPart returns the key and the rows of part i (0-based) of the checkpoint.
func (t *Table) CheckpointPart(i int64) (string, iter.Seq[*deltalog.Action]) {
	n := t.CheckpointParts()
	if n == 1 {
		return fmt.Sprintf("%s%020d.checkpoint.parquet", deltalog.LogDir, CheckpointVersion), t.CheckpointActions()
	}
	per := (t.CheckpointRows() + n - 1) / n
	key := fmt.Sprintf("%s%020d.checkpoint.%010d.%010d.parquet", deltalog.LogDir, CheckpointVersion, i+1, n)
	return key, t.checkpointRows(i*per, min((i+1)*per, t.CheckpointRows()))
}

// LatestVersion is the version of the last generated commit.
func (t *Table) LatestVersion() int64 { return CheckpointVersion + int64(t.Commits) }

// CommitTime is the timestamp (and file modification time) of generated commit v.
func (t *Table) CommitTime(v int64) time.Time {
	return time.UnixMilli(t.oldMs).Add(time.Duration(v) * time.Minute)
}

// WriteCommit writes the JSON lines of generated commit v (CheckpointVersion to
// LatestVersion). Commit CheckpointVersion appends a few files already in the checkpoint; each
// later commit adds its share of the JSON adds and removes its share of the JSON tombstones.
func (t *Table) WriteCommit(w io.Writer, v int64) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	k := v - CheckpointVersion - 1 // index among the commits after the checkpoint
	op := "WRITE"
	if k >= 0 && t.jsonTombs > 0 {
		op = "MERGE"
	}
	info := map[string]any{
		"timestamp": t.CommitTime(v).UnixMilli(), "operation": op,
		"operationParameters": map[string]any{"mode": "Append"},
		"isBlindAppend":       op == "WRITE", "engineInfo": "dvbench tablegen",
		"txnId": string(appendUUID(nil, t.uuidBytes(4, uint64(v)))),
	}
	if err := enc.Encode(map[string]any{"commitInfo": info}); err != nil {
		return err
	}
	flush := func() error {
		_, err := w.Write(buf.Bytes())
		buf.Reset()
		return err
	}
	if k < 0 {
		// The last few adds of the checkpoint were appended by this commit.
		end := t.Live - t.jsonAdds
		for r := max(0, end-min(1000, end/100)); r < end; r++ {
			if err := enc.Encode(deltalog.Action{Add: t.AddAction(r)}); err != nil {
				return err
			}
		}
		return flush()
	}
	n := int64(t.Commits)
	for r := t.Live - t.jsonAdds; r < t.Live; r++ {
		if (r-(t.Live-t.jsonAdds))%n != k {
			continue
		}
		if err := enc.Encode(deltalog.Action{Add: t.AddAction(r)}); err != nil {
			return err
		}
		if buf.Len() > 1<<20 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	for s := t.ckptTombs; s < t.Tombstones; s++ {
		if (s-t.ckptTombs)%n != k {
			continue
		}
		if err := enc.Encode(deltalog.Action{Remove: t.RemoveAction(s)}); err != nil {
			return err
		}
		if buf.Len() > 1<<20 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// LastCheckpoint is the content of _delta_log/_last_checkpoint.
func (t *Table) LastCheckpoint() []byte {
	if n := t.CheckpointParts(); n > 1 {
		return fmt.Appendf(nil, `{"version":%d,"size":%d,"parts":%d}`+"\n", CheckpointVersion, t.CheckpointRows(), n)
	}
	return fmt.Appendf(nil, `{"version":%d,"size":%d}`+"\n", CheckpointVersion, t.CheckpointRows())
}

// LastVacuumInfo is the content of _delta_log/_last_vacuum_info: a VACUUM covered the
// commits before the checkpoint (which were then cleaned up), so VACUUM LITE can run.
func (t *Table) LastVacuumInfo() []byte {
	return fmt.Appendf(nil, `{"latestCommitVersionOutsideOfRetentionWindow":%d}`+"\n", CheckpointVersion-1)
}

package deltalog

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/internal/parquetguard"
	"github.com/deltavacuum/deltavacuum/storage"
)

// pqFile is a storage.Reader over a local file.
type pqFile struct {
	*os.File
	size int64
}

func (f pqFile) Size() int64 { return f.size }

func pqOpen(t testing.TB, path string) storage.Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return pqFile{f, st.Size()}
}

// pqMem is a storage.Reader over bytes (bytes.Reader has ReadAt and Size).
type pqMem struct{ *bytes.Reader }

func (pqMem) Close() error { return nil }

func pqBytesReader(b []byte) storage.Reader { return pqMem{bytes.NewReader(b)} }

// pqFixturesPath returns the directory of the shared Delta table fixtures and whether it is
// there (fixtures.Path: DELTAVACUUM_FIXTURES, or ../shared/fixtures/delta-tables).
func pqFixturesPath() (string, error) {
	dir, err := fixtures.Path()
	if err != nil {
		return "", err
	}
	_, err = os.Stat(dir)
	return dir, err
}

// pqFixtures returns the fixtures directory; without it the test fails on CI and is skipped
// elsewhere, with the reason every fixture test gives (fixtures.Dir).
func pqFixtures(t testing.TB) string { return fixtures.Dir(t) }

// pqCheckpointFiles lists every Parquet file in the _delta_log (and _sidecars) of the fixtures.
func pqCheckpointFiles(t testing.TB) []string {
	root := pqFixtures(t)
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") && strings.Contains(filepath.ToSlash(p), "/_delta_log/") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no checkpoint files in the fixtures")
	}
	return files
}

func pqCollect(ctx context.Context, r storage.Reader, want Kinds) ([]*Action, error) {
	var acts []*Action
	err := readParquetActions(ctx, r, want, func(a *Action) error {
		acts = append(acts, a)
		return nil
	})
	return acts, err
}

// pqReadFixture reads a fixture file, relative to the fixtures directory.
func pqReadFixture(t *testing.T, rel string, want Kinds) []*Action {
	t.Helper()
	acts, err := pqCollect(context.Background(), pqOpen(t, filepath.Join(pqFixtures(t), rel)), want)
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return acts
}

func pqKindName(a *Action) string {
	switch a.kind() {
	case KindAdd:
		return "add"
	case KindRemove:
		return "remove"
	case KindMetadata:
		return "metaData"
	case KindProtocol:
		return "protocol"
	case KindSidecar:
		return "sidecar"
	case KindCheckpointMetadata:
		return "checkpointMetadata"
	}
	return fmt.Sprintf("kind %d", a.kind())
}

func pqCounts(acts []*Action) map[string]int {
	c := map[string]int{}
	for _, a := range acts {
		c[pqKindName(a)]++
	}
	return c
}

func pqJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func pqPtr[T any](v T) *T { return &v }

// pqOracle decodes a file with parquet-go's own row reader, independently of the
// column-cursor reader, into one line per action row.
func pqOracle(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	cols := f.Schema().Columns()
	var lines []string
	for _, rg := range f.RowGroups() {
		rows := rg.Rows()
		buf := make([]parquet.Row, 64)
		for {
			n, err := rows.ReadRows(buf)
			for _, row := range buf[:n] {
				vals := map[string]parquet.Value{}
				present := map[string]bool{}
				for _, v := range row {
					path := cols[v.Column()]
					if len(path) > 1 && v.DefinitionLevel() > 0 {
						present[path[0]] = true
					}
					if !v.IsNull() {
						if _, seen := vals[strings.Join(path, ".")]; !seen {
							vals[strings.Join(path, ".")] = v
						}
					}
				}
				str := func(k string) string {
					if v, ok := vals[k]; ok {
						return string(v.ByteArray())
					}
					return "<nil>"
				}
				num := func(k string) string {
					if v, ok := vals[k]; ok {
						return fmt.Sprint(v.Int64())
					}
					return "<nil>"
				}
				dv := func(g string) string {
					if _, ok := vals[g+".deletionVector.storageType"]; !ok {
						return "dv=<nil>"
					}
					off := "<nil>"
					if v, ok := vals[g+".deletionVector.offset"]; ok {
						off = fmt.Sprint(v.Int32())
					}
					return fmt.Sprintf("dv=%s/%s@%s/%s/%s", str(g+".deletionVector.storageType"), str(g+".deletionVector.pathOrInlineDv"),
						off, fmt.Sprint(vals[g+".deletionVector.sizeInBytes"].Int32()), num(g+".deletionVector.cardinality"))
				}
				switch {
				case present["add"]:
					lines = append(lines, fmt.Sprintf("add %s size=%s mtime=%s dc=%v %s", str("add.path"), num("add.size"),
						num("add.modificationTime"), vals["add.dataChange"].Boolean(), dv("add")))
				case present["remove"]:
					lines = append(lines, fmt.Sprintf("remove %s ts=%s size=%s dc=%v %s", str("remove.path"), num("remove.deletionTimestamp"),
						num("remove.size"), vals["remove.dataChange"].Boolean(), dv("remove")))
				case present["metaData"]:
					lines = append(lines, "metaData "+str("metaData.id"))
				case present["protocol"]:
					lines = append(lines, fmt.Sprintf("protocol %d/%d", vals["protocol.minReaderVersion"].Int32(), vals["protocol.minWriterVersion"].Int32()))
				case present["sidecar"]:
					lines = append(lines, fmt.Sprintf("sidecar %s %s", str("sidecar.path"), num("sidecar.sizeInBytes")))
				case present["checkpointMetadata"]:
					lines = append(lines, "checkpointMetadata "+num("checkpointMetadata.version"))
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		rows.Close()
	}
	return lines
}

// pqLine formats an action like pqOracle.
func pqLine(a *Action) string {
	opt := func(p *int64) string {
		if p == nil {
			return "<nil>"
		}
		return fmt.Sprint(*p)
	}
	dv := func(d *DeletionVector) string {
		if d == nil {
			return "dv=<nil>"
		}
		off := "<nil>"
		if d.Offset != nil {
			off = fmt.Sprint(*d.Offset)
		}
		return fmt.Sprintf("dv=%s/%s@%s/%d/%d", d.StorageType, d.PathOrInlineDv, off, d.SizeInBytes, d.Cardinality)
	}
	switch {
	case a.Add != nil:
		x := a.Add
		return fmt.Sprintf("add %s size=%d mtime=%d dc=%v %s", x.Path, x.Size, x.ModificationTime, x.DataChange, dv(x.DeletionVector))
	case a.Remove != nil:
		x := a.Remove
		return fmt.Sprintf("remove %s ts=%s size=%s dc=%v %s", x.Path, opt(x.DeletionTimestamp), opt(x.Size), x.DataChange, dv(x.DeletionVector))
	case a.Metadata != nil:
		return "metaData " + a.Metadata.ID
	case a.Protocol != nil:
		return fmt.Sprintf("protocol %d/%d", a.Protocol.MinReaderVersion, a.Protocol.MinWriterVersion)
	case a.Sidecar != nil:
		return fmt.Sprintf("sidecar %s %d", a.Sidecar.Path, a.Sidecar.SizeInBytes)
	case a.CheckpointMetadata != nil:
		return fmt.Sprintf("checkpointMetadata %d", a.CheckpointMetadata.Version)
	}
	return "?"
}

// TestParquetFixturesMatchOracle reads every checkpoint and sidecar of the fixtures and
// compares each row with parquet-go's generic row reader.
func TestParquetFixturesMatchOracle(t *testing.T) {
	for _, path := range pqCheckpointFiles(t) {
		name, _ := filepath.Rel(pqFixtures(t), path)
		t.Run(name, func(t *testing.T) {
			acts, err := pqCollect(context.Background(), pqOpen(t, path), KindAll)
			if err != nil {
				t.Fatal(err)
			}
			if len(acts) == 0 && pqDecodedColumns(t, path) {
				// A part of a multi-part checkpoint may hold only actions this reader does not
				// decode (txn), and then only their columns (parquet_row_group_skipping).
				t.Fatal("no actions")
			}
			var got []string
			for _, a := range acts {
				got = append(got, pqLine(a))
				if a.Metadata != nil && !json.Valid(a.Metadata.Raw) {
					t.Errorf("metadata Raw is not JSON: %s", a.Metadata.Raw)
				}
			}
			want := pqOracle(t, path)
			if !slices.Equal(got, want) {
				t.Errorf("rows differ from parquet-go's row reader:\ngot  %q\nwant %q", got, want)
			}
			if strings.Contains(filepath.ToSlash(path), "/_sidecars/") {
				for _, a := range acts {
					if a.Add == nil && a.Remove == nil {
						t.Errorf("sidecar holds %s", pqKindName(a))
					}
				}
			}
		})
	}
}

// pqDecodedColumns reports whether the file at path has a column of an action kind this reader
// decodes.
func pqDecodedColumns(t *testing.T, path string) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range f.Root().Columns() {
		switch c.Name() {
		case "add", "remove", "cdc", "metaData", "protocol", "commitInfo", "sidecar", "checkpointMetadata":
			return true
		}
	}
	return false
}

func pqFind(t *testing.T, acts []*Action, match func(*Action) bool) *Action {
	t.Helper()
	for _, a := range acts {
		if match(a) {
			return a
		}
	}
	t.Fatal("action not found")
	return nil
}

func pqAddAt(path string) func(*Action) bool {
	return func(a *Action) bool { return a.Add != nil && a.Add.Path == path }
}

func pqCheckEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\ngot  %s\nwant %s", what, pqJSON(got), pqJSON(want))
	}
}

func pqMetadata(t *testing.T, acts []*Action) *Metadata {
	t.Helper()
	return pqFind(t, acts, func(a *Action) bool { return a.Metadata != nil }).Metadata
}

func pqProtocol(t *testing.T, acts []*Action) *Protocol {
	t.Helper()
	return pqFind(t, acts, func(a *Action) bool { return a.Protocol != nil }).Protocol
}

// pqRawKeys returns the top-level keys of a JSON object, in order.
func pqRawKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("Raw is not an object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestParquetClassicCheckpoint(t *testing.T) {
	acts := pqReadFixture(t, "delta/basic-with-inserts-deletes-checkpoint/_delta_log/00000000000000000010.checkpoint.parquet", KindAll)
	pqCheckEqual(t, "counts", pqCounts(acts), map[string]int{"add": 6, "remove": 5, "metaData": 1, "protocol": 1})
	add := pqFind(t, acts, pqAddAt("part-00000-ca2d0b26-c15c-454f-a933-fc724e15e5f1-c000.snappy.parquet")).Add
	pqCheckEqual(t, "add", add, &Add{
		Path: "part-00000-ca2d0b26-c15c-454f-a933-fc724e15e5f1-c000.snappy.parquet", Size: 500, ModificationTime: 1691426737139,
	})
	rm := pqFind(t, acts, func(a *Action) bool {
		return a.Remove != nil && a.Remove.Path == "part-00000-0869ab64-e69d-407f-80d4-1a2ea1f69d11-c000.snappy.parquet"
	}).Remove
	pqCheckEqual(t, "remove", rm, &Remove{
		Path: "part-00000-0869ab64-e69d-407f-80d4-1a2ea1f69d11-c000.snappy.parquet", DeletionTimestamp: pqPtr[int64](1691426737813), Size: pqPtr[int64](527),
	})
	pqCheckEqual(t, "protocol", pqProtocol(t, acts), &Protocol{MinReaderVersion: 1, MinWriterVersion: 2})
	md := pqMetadata(t, acts)
	if md.ID != "testId" || md.Format.Provider != "parquet" || md.CreatedTime == nil || *md.CreatedTime != 1691426730560 {
		t.Errorf("metadata: %s", pqJSON(md))
	}
	pqCheckEqual(t, "partition columns", md.PartitionColumns, []string{})
	pqCheckEqual(t, "configuration", md.Configuration, map[string]string{})
	if md.Name != nil || md.Description != nil {
		t.Errorf("null name/description read as %v/%v", md.Name, md.Description)
	}
}

func TestParquetDeletionVectorsAndMetadataRaw(t *testing.T) {
	acts := pqReadFixture(t, "delta/dv-partitioned-with-checkpoint/_delta_log/00000000000000000010.checkpoint.parquet", KindAll)
	pqCheckEqual(t, "counts", pqCounts(acts), map[string]int{"add": 18, "remove": 10, "metaData": 1, "protocol": 1})
	withDV := 0
	for _, a := range acts {
		if a.Add != nil && a.Add.DeletionVector != nil || a.Remove != nil && a.Remove.DeletionVector != nil {
			withDV++
		}
	}
	if withDV != 8 {
		t.Errorf("%d actions with a deletion vector, want 8", withDV)
	}
	const path = "part=4/part-00000-69ec928d-3737-4eb3-a3d8-9555a6b55ff5.c000.snappy.parquet"
	add := pqFind(t, acts, pqAddAt(path)).Add
	pqCheckEqual(t, "add", add, &Add{Path: path, Size: 735, ModificationTime: 1688691720000,
		DeletionVector: &DeletionVector{StorageType: "u", PathOrInlineDv: "+V9Oq([R6mTaoM.}Isa)", Offset: pqPtr[int32](1), SizeInBytes: 36, Cardinality: 2}})
	var removes []*Remove
	for _, a := range acts {
		if a.Remove != nil && a.Remove.Path == path {
			removes = append(removes, a.Remove)
		}
	}
	pqCheckEqual(t, "removes of "+path, removes, []*Remove{
		{Path: path, DeletionTimestamp: pqPtr[int64](1688691776979), Size: pqPtr[int64](735),
			DeletionVector: &DeletionVector{StorageType: "u", PathOrInlineDv: "SZYoUv7OW&PVt[Vm4y.s", Offset: pqPtr[int32](1), SizeInBytes: 34, Cardinality: 1}},
		{Path: path, DeletionTimestamp: pqPtr[int64](1688691757817), Size: pqPtr[int64](735)},
	})
	pqCheckEqual(t, "protocol", pqProtocol(t, acts), &Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors"}})

	md := pqMetadata(t, acts)
	pqCheckEqual(t, "partition columns", md.PartitionColumns, []string{"part"})
	pqCheckEqual(t, "configuration", md.Configuration, map[string]string{"delta.enableDeletionVectors": "true"})
	// Raw is the action as Spark writes it in a commit: every column in schema order, null
	// name and description left out, empty options present.
	pqCheckEqual(t, "Raw keys", pqRawKeys(t, md.Raw), []string{"id", "format", "schemaString", "partitionColumns", "configuration", "createdTime"})
	var raw struct {
		Format           json.RawMessage
		PartitionColumns json.RawMessage
		Configuration    json.RawMessage
		CreatedTime      json.RawMessage
	}
	if err := json.Unmarshal(md.Raw, &raw); err != nil {
		t.Fatal(err)
	}
	pqCheckEqual(t, "Raw format", string(raw.Format), `{"provider":"parquet","options":{}}`)
	pqCheckEqual(t, "Raw partitionColumns", string(raw.PartitionColumns), `["part"]`)
	pqCheckEqual(t, "Raw configuration", string(raw.Configuration), `{"delta.enableDeletionVectors":"true"}`)
	pqCheckEqual(t, "Raw createdTime", string(raw.CreatedTime), `1688691715853`)
	var schema map[string]any
	if err := json.Unmarshal([]byte(md.SchemaString), &schema); err != nil || schema["type"] != "struct" {
		t.Errorf("schemaString %q: %v", md.SchemaString, err)
	}
}

// Many tombstones of one file, each with another deletion vector: the (path, DV) key matters.
func TestParquetTombstonesOfOneFile(t *testing.T) {
	acts := pqReadFixture(t, "delta/basic-dv-with-checkpoint/_delta_log/00000000000000000040.checkpoint.parquet", KindAdd|KindRemove)
	pqCheckEqual(t, "counts", pqCounts(acts), map[string]int{"add": 2, "remove": 40})
	ids := map[string]bool{}
	noDV := 0
	for _, a := range acts {
		if a.Remove == nil {
			continue
		}
		if a.Remove.DeletionVector == nil {
			noDV++
		}
		ids[a.Remove.Path+a.Remove.DeletionVector.UniqueID()] = true
	}
	if len(ids) != 40 || noDV != 2 {
		t.Errorf("%d distinct tombstones (want 40), %d without DV (want 2)", len(ids), noDV)
	}
}

// Delta 0.1.0 wrote size, modificationTime and dataChange as required fields, no createdTime,
// and no deletionTimestamp column at all.
func TestParquetDelta010(t *testing.T) {
	acts := pqReadFixture(t, "delta/delta-0.1.0/_delta_log/00000000000000000003.checkpoint.parquet", KindAll)
	pqCheckEqual(t, "counts", pqCounts(acts), map[string]int{"add": 3, "metaData": 1, "protocol": 1})
	const path = "id=4/part-00001-36c738bf-7836-479b-9cc1-7a4934207856.c000.snappy.parquet"
	pqCheckEqual(t, "add", pqFind(t, acts, pqAddAt(path)).Add,
		&Add{Path: path, Size: 362, ModificationTime: 1501109076000, DataChange: true})
	pqCheckEqual(t, "protocol", pqProtocol(t, acts), &Protocol{MinReaderVersion: 1, MinWriterVersion: 1})
	md := pqMetadata(t, acts)
	pqCheckEqual(t, "partition columns", md.PartitionColumns, []string{"id"})
	if md.CreatedTime != nil {
		t.Errorf("createdTime %d, want nil", *md.CreatedTime)
	}
	pqCheckEqual(t, "Raw keys", pqRawKeys(t, md.Raw), []string{"id", "format", "schemaString", "partitionColumns", "configuration"})
}

// Delta 0.2.0 checkpoints have no remove.size column and carry a commitInfo column.
func TestParquetDelta020(t *testing.T) {
	acts := pqReadFixture(t, "delta-rs/delta-0.2.0/_delta_log/00000000000000000003.checkpoint.parquet", KindAll)
	pqCheckEqual(t, "counts", pqCounts(acts), map[string]int{"add": 3, "remove": 4, "metaData": 1, "protocol": 1})
	rm := pqFind(t, acts, func(a *Action) bool {
		return a.Remove != nil && a.Remove.Path == "part-00000-512e1537-8aaa-4193-b8b4-bef3de0de409-c000.snappy.parquet"
	}).Remove
	pqCheckEqual(t, "remove", rm, &Remove{Path: "part-00000-512e1537-8aaa-4193-b8b4-bef3de0de409-c000.snappy.parquet",
		DeletionTimestamp: pqPtr[int64](1564524298213)})
}

func TestParquetSchemaEvolvability(t *testing.T) {
	// A required top-level column "unknown", stats_parsed and remove.tags: all ignored.
	acts := pqReadFixture(t, "delta/transaction_log_schema_evolvability/_delta_log/00000000000000000002.checkpoint.parquet", KindAll)
	pqCheckEqual(t, "counts", pqCounts(acts), map[string]int{"add": 2, "remove": 2, "metaData": 1, "protocol": 1})
	rm := pqFind(t, acts, func(a *Action) bool {
		return a.Remove != nil && strings.HasPrefix(a.Remove.Path, "part-00000-dfb1dd9a")
	}).Remove
	pqCheckEqual(t, "remove", rm, &Remove{Path: "part-00000-dfb1dd9a-0fe2-420e-81d5-a84004aebcee-c000.snappy.parquet",
		DeletionTimestamp: pqPtr[int64](1623255706137), Size: pqPtr[int64](793)})
	pqCheckEqual(t, "configuration", pqMetadata(t, acts).Configuration,
		map[string]string{"delta.checkpoint.writeStatsAsStruct": "true", "delta.checkpoint.writeStatsAsJson": "false"})
}

func TestParquetDatabricksCheckpoint(t *testing.T) {
	acts := pqReadFixture(t, "delta-rs/table_with_deletion_logs/_delta_log/00000000000000000020.checkpoint.parquet", KindAll)
	pqCheckEqual(t, "counts", pqCounts(acts), map[string]int{"add": 1, "remove": 2, "metaData": 1, "protocol": 1})
	const path = "part-00000-cb251d5e-b665-437a-a9a7-fbfc5137c77d.c000.snappy.parquet"
	pqCheckEqual(t, "add", pqFind(t, acts, pqAddAt(path)).Add, &Add{Path: path, Size: 10499, ModificationTime: 1690885056000,
		DeletionVector: &DeletionVector{StorageType: "u", PathOrInlineDv: "Q6Kt3y1b)0MgZSWwPunr", Offset: pqPtr[int32](1), SizeInBytes: 36, Cardinality: 2}})
	pqCheckEqual(t, "protocol", pqProtocol(t, acts), &Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "appendOnly", "invariants"}})
}

func TestParquetMultiPartCheckpoint(t *testing.T) {
	const dir = "delta/multi-part-checkpoint/_delta_log/"
	part1 := pqReadFixture(t, dir+"00000000000000000001.checkpoint.0000000001.0000000002.parquet", KindAll)
	part2 := pqReadFixture(t, dir+"00000000000000000001.checkpoint.0000000002.0000000002.parquet", KindAll)
	pqCheckEqual(t, "part 1", pqCounts(part1), map[string]int{"add": 5, "metaData": 1, "protocol": 1})
	pqCheckEqual(t, "part 2", pqCounts(part2), map[string]int{"add": 5})
	pqCheckEqual(t, "configuration", pqMetadata(t, part1).Configuration, map[string]string{"delta.checkpointInterval": "1"})

	const kdir = "delta-kernel-rs/v1-multi-part-partitioned-struct-stats-only/_delta_log/"
	k1 := pqReadFixture(t, kdir+"00000000000000000005.checkpoint.0000000001.0000000003.parquet", KindAll)
	const path = "part=0/test%25file%25prefix-part-00000-dea8716a-0901-4b81-a9c9-fa6d76ea5ea9.c000.snappy.parquet"
	pqCheckEqual(t, "add", pqFind(t, k1, pqAddAt(path)).Add, &Add{Path: path, Size: 985, ModificationTime: 1774306410880})
	pqCheckEqual(t, "partition columns", pqMetadata(t, k1).PartitionColumns, []string{"part"})
}

func TestParquetV2Checkpoint(t *testing.T) {
	acts := pqReadFixture(t, "delta/v2-checkpoint-parquet/_delta_log/00000000000000000002.checkpoint.e8fa2696-9728-4e9c-b285-634743fdd4fb.parquet", KindAll)
	pqCheckEqual(t, "counts", pqCounts(acts), map[string]int{"checkpointMetadata": 1, "sidecar": 2, "metaData": 1, "protocol": 1})
	pqCheckEqual(t, "first row", acts[0], &Action{CheckpointMetadata: &CheckpointMetadata{Version: 2}})
	pqCheckEqual(t, "sidecars", []*Action{acts[1], acts[2]}, []*Action{
		{Sidecar: &Sidecar{Path: "00000000000000000002.checkpoint.0000000001.0000000002.055454d8-329c-4e0e-864d-7f867075af33.parquet", SizeInBytes: 9268, ModificationTime: 1714496113961}},
		{Sidecar: &Sidecar{Path: "00000000000000000002.checkpoint.0000000002.0000000002.33321cc1-9c55-4d1f-8511-fafe6d2e1133.parquet", SizeInBytes: 9367, ModificationTime: 1714496113961}},
	})
	pqCheckEqual(t, "protocol", pqProtocol(t, acts), &Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{"v2Checkpoint"}, WriterFeatures: []string{"v2Checkpoint", "appendOnly", "invariants"}})
	pqCheckEqual(t, "configuration", pqMetadata(t, acts).Configuration,
		map[string]string{"delta.checkpointInterval": "2", "delta.checkpointPolicy": "v2"})

	sidecar := pqReadFixture(t, "delta/v2-checkpoint-parquet/_delta_log/_sidecars/00000000000000000002.checkpoint.0000000001.0000000002.055454d8-329c-4e0e-864d-7f867075af33.parquet", KindAll)
	pqCheckEqual(t, "sidecar counts", pqCounts(sidecar), map[string]int{"add": 3})
	pqCheckEqual(t, "sidecar add", sidecar[0].Add, &Add{Path: "part-00000-485b0fff-1c7b-4f14-92e9-a72300fcdf88-c000.snappy.parquet", Size: 485, ModificationTime: 1714496111974})
}

// A V2 checkpoint stored under the classic single-file name.
func TestParquetV2UnderClassicName(t *testing.T) {
	acts := pqReadFixture(t, "delta-kernel-rs/v2-classic-checkpoint-parquet/_delta_log/00000000000000000001.checkpoint.parquet", KindAll)
	pqCheckEqual(t, "counts", pqCounts(acts), map[string]int{"checkpointMetadata": 1, "sidecar": 1, "metaData": 1, "protocol": 1})
	pqCheckEqual(t, "sidecar", pqFind(t, acts, func(a *Action) bool { return a.Sidecar != nil }).Sidecar, &Sidecar{
		Path: "00000000000000000001.checkpoint.0000000001.0000000001.e2eb56f9-1c54-4a82-b122-de108e317c20.parquet", SizeInBytes: 9363, ModificationTime: 1739329760839})
	pqCheckEqual(t, "checkpointMetadata", acts[0].CheckpointMetadata, &CheckpointMetadata{Version: 1})
}

func TestParquetProjection(t *testing.T) {
	const rel = "delta/dv-partitioned-with-checkpoint/_delta_log/00000000000000000010.checkpoint.parquet"
	for _, tc := range []struct {
		want Kinds
		got  map[string]int
	}{
		{KindRemove, map[string]int{"remove": 10}},
		{KindAdd, map[string]int{"add": 18}},
		{KindMetadata | KindProtocol, map[string]int{"metaData": 1, "protocol": 1}},
		{KindSidecar | KindCheckpointMetadata | KindCDC | KindCommitInfo, map[string]int{}},
		{0, map[string]int{}},
	} {
		pqCheckEqual(t, fmt.Sprintf("counts for kinds %b", tc.want), pqCounts(pqReadFixture(t, rel, tc.want)), tc.got)
	}
	// A sidecar has no metaData column: nothing to read.
	pqCheckEqual(t, "sidecar metadata", pqCounts(pqReadFixture(t,
		"delta/v2-checkpoint-parquet/_delta_log/_sidecars/00000000000000000002.checkpoint.0000000001.0000000002.055454d8-329c-4e0e-864d-7f867075af33.parquet",
		KindMetadata)), map[string]int{})
}

// pqTracker records the byte ranges read through it.
type pqTracker struct {
	storage.Reader
	mu     sync.Mutex
	ranges [][2]int64
}

func (r *pqTracker) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	r.ranges = append(r.ranges, [2]int64{off, off + int64(len(p))})
	r.mu.Unlock()
	return r.Reader.ReadAt(p, off)
}

// TestParquetColumnProjection checks at the I/O level that reading files and deletion vectors
// never touches the stats, partition values, tags or other unneeded column chunks, and the
// stats only when their numRecords is asked for (kindStats); that a read for Snapshot.Files
// (kindFileFields) leaves out dataChange and add.modificationTime too, and one for
// Snapshot.FileKeys (kindNoSize) the sizes. (The last parquetguard.TailRead bytes are read at
// once to get the footer, so chunks there are exempt.)
func TestParquetColumnProjection(t *testing.T) {
	stats := `{"numRecords":100,"minValues":{"id":1,"name":"aaaaaaaaaaaaaaa"},"maxValues":{"id":100,"name":"zzzzzzzzzzzzzzzz"},"nullCount":{"id":0,"name":3}}`
	gen := func(yield func(*Action) bool) {
		if !yield(&Action{Metadata: &Metadata{ID: "m", Format: Format{Provider: "parquet"}, SchemaString: strings.Repeat("s", 1000)}}) {
			return
		}
		for a := range pqGen(50_000, 9) {
			if a.Add != nil {
				a.Add.Stats = stats + a.Add.Path
				a.Add.PartitionValues = map[string]string{"event_date": a.Add.Path[11:21], "region": "eu-west"}
			}
			if !yield(a) {
				return
			}
		}
	}
	data := pqWrite(t, gen)
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	neededBy := func(want Kinds) map[string]bool {
		needed := map[string]bool{}
		for _, c := range []string{"path", "size", "modificationTime", "dataChange", "deletionVector.storageType", "deletionVector.pathOrInlineDv",
			"deletionVector.offset", "deletionVector.sizeInBytes", "deletionVector.cardinality"} {
			if want&kindFileFields != 0 && (c == "modificationTime" || c == "dataChange") || want&kindNoSize != 0 && c == "size" {
				if c != "modificationTime" {
					continue // the remove's deletionTimestamp is read still
				}
				needed["remove.deletionTimestamp"] = true
				continue
			}
			needed["add."+c] = true
			needed["remove."+strings.Replace(c, "modificationTime", "deletionTimestamp", 1)] = true
		}
		return needed
	}
	for _, want := range []Kinds{KindAdd | KindRemove, KindRemove, KindAdd | kindStats, KindAdd | KindRemove | kindFileFields, KindAdd | KindRemove | kindFileFields | kindNoSize, KindAdd | kindFileFields | kindStats} {
		needed := neededBy(want)
		tr := &pqTracker{Reader: pqBytesReader(data)}
		acts, err := pqCollect(context.Background(), tr, want)
		if err != nil {
			t.Fatal(err)
		}
		if len(acts) == 0 {
			t.Fatal("no actions")
		}
		for _, a := range acts {
			if a.Add == nil || want&kindStats == 0 {
				continue
			}
			if n, ok := a.Add.NumRecords(); n != 100 || !ok {
				t.Fatalf("add %s: numRecords %d, %v; want 100", a.Add.Path, n, ok)
			}
		}
		tailStart := int64(len(data)) - parquetguard.TailRead
		checked := map[string]bool{}
		for _, rg := range f.Metadata().RowGroups {
			for _, c := range rg.Columns {
				col := strings.Join(c.MetaData.PathInSchema, ".")
				start, size := parquetguard.ChunkRange(&c)
				end := start + size
				if end > tailStart {
					continue
				}
				touched := false
				for _, r := range tr.ranges {
					if r[0] < end && r[1] > start {
						touched = true
					}
				}
				need := needed[col] && (want&KindAdd != 0 && strings.HasPrefix(col, "add.") || want&KindRemove != 0 && strings.HasPrefix(col, "remove.")) ||
					want&kindStats != 0 && col == "add.stats" // numRecords, asked for
				if touched != need {
					t.Errorf("kinds %b: column %s read=%v, needed=%v", want, col, touched, need)
				}
				checked[col] = true
			}
		}
		for _, col := range []string{"txn.appId", "add.path", "add.stats", "add.partitionValues.key_value.key", "add.tags.key_value.value", "add.deletionVector.cardinality", "remove.path"} {
			if !checked[col] {
				t.Errorf("column %s not checked; the file is too small for this test", col)
			}
		}
	}
}

// TestParquetPageAtATime reads a checkpoint whose column chunks are read a page at a time
// through small windows, as those of a checkpoint of gigabytes are: the actions must be those
// read with the chunks held whole.
func TestParquetPageAtATime(t *testing.T) {
	data := pqWrite(t, pqGen(50_000, 9))
	read := func(above, window int64, want Kinds) []string {
		defer parquetguard.StreamForTest(above, window)()
		acts, err := pqCollect(context.Background(), pqBytesReader(data), want)
		if err != nil {
			t.Fatal(err)
		}
		lines := make([]string, len(acts))
		for i, a := range acts {
			lines[i] = pqLine(a)
		}
		return lines
	}
	for _, want := range []Kinds{KindAdd | KindRemove, KindAll, KindAdd | KindRemove | kindFileFields | kindNoSize} {
		whole := read(1<<40, 0, want)
		if len(whole) < 50_000 && want&KindAdd != 0 && want&KindRemove != 0 {
			t.Fatalf("kinds %b: %d actions", want, len(whole))
		}
		if streamed := read(8<<10, 1<<10, want); !slices.Equal(streamed, whole) {
			t.Fatalf("kinds %b: the actions read a page at a time differ", want)
		}
	}
}

func pqSeq(acts []*Action) iter.Seq[*Action] { return slices.Values(acts) }

func pqWrite(t testing.TB, acts iter.Seq[*Action]) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteCheckpointForTest(&buf, acts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestParquetWriteRoundTrip(t *testing.T) {
	in := []*Action{
		{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "appendOnly"}}},
		{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{}, WriterFeatures: []string{}}},
		{Metadata: &Metadata{ID: "m1", Name: pqPtr("name"), Description: pqPtr(""), Format: Format{Provider: "parquet", Options: map[string]string{"k": "v"}},
			SchemaString: `{"type":"struct","fields":[]}`, PartitionColumns: []string{"a", "b"},
			Configuration: map[string]string{"delta.enableDeletionVectors": "true", "delta.checkpointInterval": "10"}, CreatedTime: pqPtr[int64](1700000000000)}},
		{Metadata: &Metadata{ID: "m2", Format: Format{Provider: "parquet"}, SchemaString: "{}"}},
		{Add: &Add{Path: "a=1/b=x/part-0.parquet", Size: 10, ModificationTime: 20, DataChange: true, PartitionValues: map[string]string{"a": "1", "b": "x"}, Stats: `{"numRecords":1}`}},
		{Add: &Add{Path: "part-1.parquet", DeletionVector: &DeletionVector{StorageType: "u", PathOrInlineDv: "ab^-aqEH.-t@S}K{vb[*k^", Offset: pqPtr[int32](4), SizeInBytes: 40, Cardinality: 6}}},
		{Add: &Add{Path: "part-2.parquet", Size: -1, DeletionVector: &DeletionVector{StorageType: "i", PathOrInlineDv: "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", SizeInBytes: 40, Cardinality: 1}}},
		{Add: &Add{Path: "dir with spaces/ü%20é.parquet"}},
		{Remove: &Remove{Path: "part-3.parquet", DeletionTimestamp: pqPtr[int64](1600000000000), Size: pqPtr[int64](99), DataChange: true}},
		{Remove: &Remove{Path: "part-4.parquet"}},
		{Remove: &Remove{Path: "part-5.parquet", DeletionTimestamp: pqPtr[int64](0), Size: pqPtr[int64](0),
			DeletionVector: &DeletionVector{StorageType: "p", PathOrInlineDv: "s3://bucket/dv.bin", Offset: pqPtr[int32](0), SizeInBytes: 1, Cardinality: 0}}},
		{CheckpointMetadata: &CheckpointMetadata{Version: 12}},
		{Sidecar: &Sidecar{Path: "00000000000000000012.checkpoint.0000000001.0000000001.uuid.parquet", SizeInBytes: 123, ModificationTime: 456}},
	}
	data := pqWrite(t, pqSeq(in))
	out, err := pqCollect(context.Background(), pqBytesReader(data), KindAll)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("read %d actions, wrote %d", len(out), len(in))
	}
	for i := range in {
		want := *in[i]
		switch {
		case want.Add != nil:
			// The reader projects away partition values and stats.
			a := *want.Add
			a.PartitionValues, a.Stats = nil, ""
			want.Add = &a
		case want.Metadata != nil:
			// Required maps and lists are written empty when unset; Raw is checked below.
			m := *want.Metadata
			if m.Format.Options == nil {
				m.Format.Options = map[string]string{}
			}
			if m.PartitionColumns == nil {
				m.PartitionColumns = []string{}
			}
			if m.Configuration == nil {
				m.Configuration = map[string]string{}
			}
			m.Raw = out[i].Metadata.Raw
			want.Metadata = &m
		}
		pqCheckEqual(t, fmt.Sprintf("action %d", i), out[i], &want)
	}
	pqCheckEqual(t, "Raw 1", string(out[3].Metadata.Raw),
		`{"id":"m1","name":"name","description":"","format":{"provider":"parquet","options":{"k":"v"}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}",`+
			`"partitionColumns":["a","b"],"configuration":{"delta.checkpointInterval":"10","delta.enableDeletionVectors":"true"},"createdTime":1700000000000}`)
	pqCheckEqual(t, "Raw 2", string(out[4].Metadata.Raw),
		`{"id":"m2","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{}}`)

	// The written file reads the same through parquet-go's generic reader.
	path := filepath.Join(t.TempDir(), "c.parquet")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, a := range out {
		lines = append(lines, pqLine(a))
	}
	pqCheckEqual(t, "oracle", pqOracle(t, path), lines)
}

// TestParquetWriteSchema checks the written schema against the shape of Spark's.
func TestParquetWriteSchema(t *testing.T) {
	data := pqWrite(t, pqSeq([]*Action{{Add: &Add{Path: "p"}}}))
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range f.Schema().Columns() {
		leaf, _ := f.Schema().Lookup(c...)
		got = append(got, fmt.Sprintf("%s %v d%d r%d", strings.Join(c, "."), leaf.Node.Type(), leaf.MaxDefinitionLevel, leaf.MaxRepetitionLevel))
	}
	want := []string{
		"txn.appId STRING d2 r0", "txn.version INT(64,true) d2 r0", "txn.lastUpdated INT(64,true) d2 r0",
		"add.path STRING d2 r0", "add.partitionValues.key_value.key STRING d3 r1", "add.partitionValues.key_value.value STRING d4 r1",
		"add.size INT(64,true) d2 r0", "add.modificationTime INT(64,true) d2 r0", "add.dataChange BOOLEAN d2 r0", "add.stats STRING d2 r0",
		"add.tags.key_value.key STRING d3 r1", "add.tags.key_value.value STRING d4 r1",
		"add.deletionVector.storageType STRING d3 r0", "add.deletionVector.pathOrInlineDv STRING d3 r0", "add.deletionVector.offset INT(32,true) d3 r0",
		"add.deletionVector.sizeInBytes INT(32,true) d3 r0", "add.deletionVector.cardinality INT(64,true) d3 r0",
		"remove.path STRING d2 r0", "remove.deletionTimestamp INT(64,true) d2 r0", "remove.dataChange BOOLEAN d2 r0",
		"remove.extendedFileMetadata BOOLEAN d2 r0", "remove.partitionValues.key_value.key STRING d3 r1", "remove.partitionValues.key_value.value STRING d4 r1",
		"remove.size INT(64,true) d2 r0",
		"remove.deletionVector.storageType STRING d3 r0", "remove.deletionVector.pathOrInlineDv STRING d3 r0", "remove.deletionVector.offset INT(32,true) d3 r0",
		"remove.deletionVector.sizeInBytes INT(32,true) d3 r0", "remove.deletionVector.cardinality INT(64,true) d3 r0",
		"metaData.id STRING d2 r0", "metaData.name STRING d2 r0", "metaData.description STRING d2 r0", "metaData.format.provider STRING d3 r0",
		"metaData.format.options.key_value.key STRING d4 r1", "metaData.format.options.key_value.value STRING d5 r1", "metaData.schemaString STRING d2 r0",
		"metaData.partitionColumns.list.element STRING d4 r1", "metaData.configuration.key_value.key STRING d3 r1", "metaData.configuration.key_value.value STRING d4 r1",
		"metaData.createdTime INT(64,true) d2 r0",
		"protocol.minReaderVersion INT(32,true) d2 r0", "protocol.minWriterVersion INT(32,true) d2 r0",
		"protocol.readerFeatures.list.element STRING d4 r1", "protocol.writerFeatures.list.element STRING d4 r1",
		"checkpointMetadata.version INT(64,true) d2 r0", "checkpointMetadata.tags.key_value.key STRING d3 r1", "checkpointMetadata.tags.key_value.value STRING d4 r1",
		"sidecar.path STRING d2 r0", "sidecar.sizeInBytes INT(64,true) d2 r0", "sidecar.modificationTime INT(64,true) d2 r0",
		"sidecar.tags.key_value.key STRING d3 r1", "sidecar.tags.key_value.value STRING d4 r1",
	}
	pqCheckEqual(t, "columns", got, want)
	if n := f.Metadata().RowGroups[0].Columns[0].MetaData.Codec.String(); n != "SNAPPY" {
		t.Errorf("codec %s, want SNAPPY", n)
	}
}

// pqGen yields n add actions (and a remove every removeEvery rows, when positive) with
// realistic ~100-character paths, a fifth of them with a deletion vector.
func pqGen(n, removeEvery int) iter.Seq[*Action] {
	return func(yield func(*Action) bool) {
		rng := rand.New(rand.NewPCG(1, 2))
		var id [16]byte
		uuid := func() string {
			for i := range id {
				id[i] = byte(rng.Uint32())
			}
			h := hex.EncodeToString(id[:])
			return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		}
		for i := range n {
			path := fmt.Sprintf("event_date=2024-%02d-%02d/region=eu-west/part-%05d-%s.c000.snappy.parquet", i%12+1, i%28+1, i%2000, uuid())
			if removeEvery > 0 && i%removeEvery == removeEvery-1 {
				if !yield(&Action{Remove: &Remove{Path: path, DeletionTimestamp: pqPtr(int64(1700000000000 + i)), Size: pqPtr(int64(i)), DataChange: true}}) {
					return
				}
				continue
			}
			a := &Add{Path: path, Size: int64(100000 + i), ModificationTime: int64(1700000000000 + i), DataChange: i%2 == 0}
			if i%5 == 0 {
				a.DeletionVector = &DeletionVector{StorageType: "u", PathOrInlineDv: uuid()[:20], Offset: pqPtr(int32(1 + i%64)), SizeInBytes: 36, Cardinality: int64(1 + i%100)}
			}
			if !yield(&Action{Add: a}) {
				return
			}
		}
	}
}

// TestParquetWriteManyRowGroups writes more rows than one row group holds, reusing one Action
// value for all of them (the writer must copy what it keeps), and reads them back.
func TestParquetWriteManyRowGroups(t *testing.T) {
	n := CheckpointRowGroupRows*2 + 1234
	if testing.Short() {
		n = CheckpointRowGroupRows + 10
	}
	reused := func(yield func(*Action) bool) {
		var a Action
		var add Add
		var dv DeletionVector
		for x := range pqGen(n, 7) {
			a = *x
			if x.Add != nil {
				add = *x.Add
				if x.Add.DeletionVector != nil {
					dv = *x.Add.DeletionVector
					add.DeletionVector = &dv
				}
				a.Add = &add
			}
			if !yield(&a) {
				return
			}
		}
	}
	data := pqWrite(t, reused)
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.RowGroups()) < 2 {
		t.Errorf("%d row groups, want several", len(f.RowGroups()))
	}
	var want []string
	for a := range pqGen(n, 7) {
		if a.Add != nil {
			a.Add.PartitionValues, a.Add.Stats = nil, ""
		}
		want = append(want, pqLine(a))
	}
	i := 0
	err = readParquetActions(context.Background(), pqBytesReader(data), KindAll, func(a *Action) error {
		if i < len(want) && pqLine(a) != want[i] {
			t.Fatalf("row %d: got %s, want %s", i, pqLine(a), want[i])
		}
		i++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if i != n {
		t.Errorf("read %d rows, wrote %d", i, n)
	}
	removes := 0
	err = readParquetActions(context.Background(), pqBytesReader(data), KindRemove, func(a *Action) error {
		if a.Remove == nil {
			t.Fatalf("projection to removes returned %s", pqKindName(a))
		}
		removes++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if removes != n/7 {
		t.Errorf("%d removes, want %d", removes, n/7)
	}
}

func TestParquetWriteEmpty(t *testing.T) {
	data := pqWrite(t, pqSeq(nil))
	acts, err := pqCollect(context.Background(), pqBytesReader(data), KindAll)
	if err != nil || len(acts) != 0 {
		t.Errorf("empty checkpoint read as %d actions, error %v", len(acts), err)
	}
}

func TestParquetWriteRejects(t *testing.T) {
	for _, a := range []*Action{
		nil,
		{},
		{CDC: &CDC{Path: "c"}},
		{CommitInfo: &CommitInfo{}},
		{Add: &Add{Path: "a"}, Remove: &Remove{Path: "a"}},
	} {
		if err := WriteCheckpointForTest(io.Discard, pqSeq([]*Action{a})); err == nil {
			t.Errorf("writing %s: no error", pqJSON(a))
		}
	}
}

// pqWriteRaw writes rows of an arbitrary Go type with parquet-go, to build files the checkpoint
// writer would not.
func pqWriteRaw[T any](t *testing.T, rows ...T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestParquetMetadataUnknownColumns checks that Metadata.Raw keeps metaData columns this
// program does not know, nested ones included, with Spark's JSON conventions.
func TestParquetMetadataUnknownColumns(t *testing.T) {
	type nested struct {
		A *string `parquet:"a"`
	}
	type extra struct {
		Level  *int32             `parquet:"level"`
		Flag   *bool              `parquet:"flag"`
		Ratio  *float64           `parquet:"ratio"`
		Tags   map[string]*string `parquet:"tags,optional"`
		Nested []*nested          `parquet:"nested,list,optional"`
		Big    *uint64            `parquet:"big"`
	}
	type format struct {
		Provider *string            `parquet:"provider"`
		Options  map[string]*string `parquet:"options,optional"`
	}
	type meta struct {
		ID                *string            `parquet:"id"`
		Name              *string            `parquet:"name"`
		Format            *format            `parquet:"format"`
		SchemaString      *string            `parquet:"schemaString"`
		PartitionColumns  []*string          `parquet:"partitionColumns,list,optional"`
		Configuration     map[string]*string `parquet:"configuration,optional"`
		CreatedTime       *int64             `parquet:"createdTime"`
		ClusteringColumns []*string          `parquet:"clusteringColumns,list,optional"`
		Extra             *extra             `parquet:"extra"`
		Numbers           []int64            `parquet:"numbers"`
	}
	type add struct {
		Path *string `parquet:"path"`
	}
	type row struct {
		Add      *add  `parquet:"add"`
		Remove   *add  `parquet:"remove"`
		MetaData *meta `parquet:"metaData"`
	}
	data := pqWriteRaw(t,
		row{Add: &add{Path: pqPtr("x.parquet")}},
		row{MetaData: &meta{
			ID:                pqPtr("id-1"),
			Format:            &format{Provider: pqPtr("parquet"), Options: map[string]*string{"b": pqPtr("2"), "a": nil}},
			SchemaString:      pqPtr(`{"type":"struct"}`),
			PartitionColumns:  []*string{pqPtr("p\"q")},
			Configuration:     map[string]*string{},
			CreatedTime:       pqPtr[int64](-5),
			ClusteringColumns: []*string{pqPtr("c1"), nil},
			Extra: &extra{Level: pqPtr[int32](3), Ratio: pqPtr(0.5), Tags: map[string]*string{},
				Nested: []*nested{{A: pqPtr("x")}, {}, nil}, Big: pqPtr[uint64](1 << 63)},
			Numbers: []int64{1, 2},
		}},
	)
	acts, err := pqCollect(context.Background(), pqBytesReader(data), KindAll)
	if err != nil {
		t.Fatal(err)
	}
	pqCheckEqual(t, "counts", pqCounts(acts), map[string]int{"add": 1, "metaData": 1})
	md := acts[1].Metadata
	pqCheckEqual(t, "Raw", string(md.Raw), `{"id":"id-1","format":{"provider":"parquet","options":{"a":null,"b":"2"}},"schemaString":"{\"type\":\"struct\"}",`+
		`"partitionColumns":["p\"q"],"configuration":{},"createdTime":-5,"clusteringColumns":["c1",null],`+
		`"extra":{"level":3,"ratio":0.5,"tags":{},"nested":[{"a":"x"},{},null],"big":9223372036854775808},"numbers":[1,2]}`)
	pqCheckEqual(t, "typed", md, &Metadata{ID: "id-1", Format: Format{Provider: "parquet", Options: map[string]string{"a": "", "b": "2"}},
		SchemaString: `{"type":"struct"}`, PartitionColumns: []string{`p"q`}, Configuration: map[string]string{}, CreatedTime: pqPtr[int64](-5), Raw: md.Raw})
}

// pqCorrupt asserts that reading data fails with ErrCorrupt.
func pqCorrupt(t *testing.T, what string, data []byte, want Kinds) {
	t.Helper()
	_, err := pqCollect(context.Background(), pqBytesReader(data), want)
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("%s: error %v, want ErrCorrupt", what, err)
	}
}

func TestParquetWrongTypes(t *testing.T) {
	type intPath struct {
		Path *int64 `parquet:"path"`
	}
	type stringSize struct {
		Path *string `parquet:"path"`
		Size *string `parquet:"size"`
	}
	type dvNoPath struct {
		StorageType *string `parquet:"storageType"`
	}
	type addDVNoPath struct {
		Path           *string   `parquet:"path"`
		DeletionVector *dvNoPath `parquet:"deletionVector"`
	}
	type noPath struct {
		Size *int64 `parquet:"size"`
	}
	type badMeta struct {
		ID          *string `parquet:"id"`
		CreatedTime *string `parquet:"createdTime"`
	}
	type pathOnly struct {
		Path *string `parquet:"path"`
	}
	pqCorrupt(t, "add.path INT64", pqWriteRaw(t, struct {
		Add *intPath `parquet:"add"`
	}{&intPath{pqPtr[int64](1)}}), KindAdd)
	pqCorrupt(t, "remove.size STRING", pqWriteRaw(t, struct {
		Remove *stringSize `parquet:"remove"`
	}{&stringSize{pqPtr("p"), pqPtr("1")}}), KindRemove)
	// A column a read leaves out is checked all the same.
	pqCorrupt(t, "remove.size STRING, read without sizes", pqWriteRaw(t, struct {
		Remove *stringSize `parquet:"remove"`
	}{&stringSize{pqPtr("p"), pqPtr("1")}}), KindRemove|kindFileFields|kindNoSize)
	type stringTimes struct {
		Path             *string `parquet:"path"`
		ModificationTime *string `parquet:"modificationTime"`
		DataChange       *int64  `parquet:"dataChange"`
	}
	pqCorrupt(t, "add.modificationTime STRING, add.dataChange INT64, read for Files", pqWriteRaw(t, struct {
		Add *stringTimes `parquet:"add"`
	}{&stringTimes{pqPtr("p"), pqPtr("x"), pqPtr[int64](1)}}), KindAdd|kindFileFields)
	pqCorrupt(t, "deletionVector without pathOrInlineDv", pqWriteRaw(t, struct {
		Add *addDVNoPath `parquet:"add"`
	}{&addDVNoPath{Path: pqPtr("p")}}), KindAdd)
	pqCorrupt(t, "add without path", pqWriteRaw(t, struct {
		Add *noPath `parquet:"add"`
	}{&noPath{pqPtr[int64](1)}}), KindAdd)
	pqCorrupt(t, "add is a value", pqWriteRaw(t, struct {
		Add *string `parquet:"add"`
	}{pqPtr("p")}), KindAdd)
	pqCorrupt(t, "metaData.createdTime STRING", pqWriteRaw(t, struct {
		MetaData *badMeta `parquet:"metaData"`
	}{&badMeta{pqPtr("id"), pqPtr("yesterday")}}), KindMetadata)
	pqCorrupt(t, "two actions in a row", pqWriteRaw(t, struct {
		Add    *pathOnly `parquet:"add"`
		Remove *pathOnly `parquet:"remove"`
	}{&pathOnly{pqPtr("a")}, &pathOnly{pqPtr("b")}}), KindAdd|KindRemove)

	// The same files are fine when the bad columns are not wanted.
	if _, err := pqCollect(context.Background(), pqBytesReader(pqWriteRaw(t, struct {
		Add *intPath `parquet:"add"`
	}{&intPath{pqPtr[int64](1)}})), KindProtocol|KindMetadata); err != nil {
		t.Errorf("projected read of a file with a bad add column: %v", err)
	}
}

func pqSmallCheckpoint(t testing.TB) []byte {
	return pqWrite(t, pqSeq([]*Action{
		{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors"}}},
		{Metadata: &Metadata{ID: "m", Format: Format{Provider: "parquet"}, SchemaString: "{}", PartitionColumns: []string{"p"}, Configuration: map[string]string{"k": "v"}}},
		{Add: &Add{Path: "p=1/a.parquet", Size: 1, PartitionValues: map[string]string{"p": "1"}, DeletionVector: &DeletionVector{StorageType: "u", PathOrInlineDv: "abcdefghijklmnopqrst", Offset: pqPtr[int32](1), SizeInBytes: 36, Cardinality: 2}}},
		{Remove: &Remove{Path: "p=1/b.parquet", DeletionTimestamp: pqPtr[int64](5)}},
	}))
}

func TestParquetGarbage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	framed := func(body []byte, footerLen uint32) []byte {
		b := append([]byte("PAR1"), body...)
		b = append(b, byte(footerLen), byte(footerLen>>8), byte(footerLen>>16), byte(footerLen>>24))
		return append(b, "PAR1"...)
	}
	cases := map[string][]byte{
		"empty":             nil,
		"magic only":        []byte("PAR1"),
		"minimal frame":     framed(nil, 0),
		"json commit":       []byte(`{"add":{"path":"a","size":1,"modificationTime":1,"dataChange":true}}` + "\n"),
		"random":            random(4096),
		"random framed":     framed(random(4096), 100),
		"huge footer":       framed(random(64), 0xFFFFFFF0),
		"footer past start": framed(random(64), 70),
		"encrypted footer":  append(append([]byte("PAR1"), random(64)...), "\x10\x00\x00\x00PARE"...),
	}
	for name, data := range cases {
		pqCorrupt(t, name, data, KindAll)
	}
}

// TestParquetTruncatedAndDamaged cuts and damages real checkpoints: every outcome must be an
// error wrapping ErrCorrupt (or, for damage that leaves the file decodable, no error), never a
// panic.
func TestParquetTruncatedAndDamaged(t *testing.T) {
	files := [][]byte{pqSmallCheckpoint(t)}
	if dir, err := pqFixturesPath(); err == nil {
		for _, rel := range []string{
			"delta/dv-partitioned-with-checkpoint/_delta_log/00000000000000000010.checkpoint.parquet",
			"delta/v2-checkpoint-parquet/_delta_log/00000000000000000002.checkpoint.e8fa2696-9728-4e9c-b285-634743fdd4fb.parquet",
			"delta/delta-0.1.0/_delta_log/00000000000000000003.checkpoint.parquet",
		} {
			b, err := os.ReadFile(filepath.Join(dir, rel))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, b)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for fi, orig := range files {
		n := len(orig)
		// The column chunks lie between the header and the page index (if any) and footer.
		f, err := parquet.OpenFile(bytes.NewReader(orig), int64(n))
		if err != nil {
			t.Fatal(err)
		}
		dataEnd, addPath := int64(0), int64(-1)
		for _, c := range f.Metadata().RowGroups[0].Columns {
			dataEnd = max(dataEnd, c.MetaData.DataPageOffset+c.MetaData.TotalCompressedSize)
			if strings.Join(c.MetaData.PathInSchema, ".") == "add.path" {
				addPath = c.MetaData.DataPageOffset
			}
		}
		// Plain truncations: every length.
		for cut := range n {
			pqCorrupt(t, fmt.Sprintf("file %d cut at %d", fi, cut), orig[:cut], KindAll)
		}
		// Chunk data cut out with the footer kept: the chunks after the cut point into the
		// page index or footer. Chunks before it still read, and a cut among columns that are
		// not read may go unnoticed, but most cuts must be caught and none may panic.
		caught := 0
		for range 200 {
			k := 4 + rng.Int64N(dataEnd-4)
			b := slices.Concat(orig[:k], orig[dataEnd:])
			_, err := pqCollect(context.Background(), pqBytesReader(b), KindAll)
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("file %d with data cut at %d: error %v does not wrap ErrCorrupt", fi, k, err)
			}
			if err != nil {
				caught++
			}
		}
		if caught < 100 {
			t.Errorf("file %d: only %d of 200 cuts detected", fi, caught)
		}
		pqCorrupt(t, fmt.Sprintf("file %d cut at add.path", fi), slices.Concat(orig[:addPath], orig[dataEnd:]), KindAdd)
		// The whole chunk region zeroed: no page header can decode.
		b := slices.Clone(orig)
		clear(b[4:dataEnd])
		pqCorrupt(t, fmt.Sprintf("file %d zeroed", fi), b, KindAll)
		// Random damage anywhere: any error must be ErrCorrupt.
		for range 2000 {
			b := slices.Clone(orig)
			for range 1 + rng.IntN(8) {
				b[rng.IntN(n)] = byte(rng.Uint32())
			}
			if _, err := pqCollect(context.Background(), pqBytesReader(b), KindAll); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("file %d damaged: error %v does not wrap ErrCorrupt", fi, err)
			}
		}
	}
}

// pqFailing fails the reads that touch bytes lo to hi-1, like a store connection that drops.
type pqFailing struct {
	storage.Reader
	lo, hi int64
}

var errPQBoom = errors.New("connection reset")

func (r pqFailing) ReadAt(p []byte, off int64) (int, error) {
	if off < r.hi && off+int64(len(p)) > r.lo {
		return 0, errPQBoom
	}
	return r.Reader.ReadAt(p, off)
}

func TestParquetReaderErrorIsNotCorruption(t *testing.T) {
	data := pqSmallCheckpoint(t)
	n := int64(len(data))
	for _, fail := range [][2]int64{{0, 4}, {n - 8, n}, {n - 20, n - 19}, {4, n - 100}} {
		_, err := pqCollect(context.Background(), pqFailing{pqBytesReader(data), fail[0], fail[1]}, KindAll)
		if !errors.Is(err, errPQBoom) || errors.Is(err, ErrCorrupt) {
			t.Errorf("failing bytes %v: error %v, want the reader's error and not ErrCorrupt", fail, err)
		}
	}
}

func TestParquetCallbackError(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	err := readParquetActions(context.Background(), pqBytesReader(pqSmallCheckpoint(t)), KindAll, func(*Action) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Errorf("error %v after %d calls, want the callback's error after 1", err, calls)
	}
}

func TestParquetCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := pqCollect(ctx, pqBytesReader(pqSmallCheckpoint(t)), KindAll); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}

	// Cancelled while reading: stops at the next page, long before the end.
	const n = 200_000
	data := pqWrite(t, pqGen(n, 0))
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	rows := 0
	err := readParquetActions(ctx, pqBytesReader(data), KindAdd, func(*Action) error {
		rows++
		if rows == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || rows >= n/2 {
		t.Errorf("error %v after %d of %d rows, want context.Canceled early", err, rows, n)
	}
}

// TestParquetStreamingMemory reads a large checkpoint and checks that the heap stays far below
// what materializing its rows would take.
func TestParquetStreamingMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("large file")
	}
	const n = 500_000
	path := filepath.Join(t.TempDir(), "big.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteCheckpointForTest(f, pqGen(n, 10)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// Live heap (after a collection) at the start and every 50,000 rows.
	live := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	base := live()
	var peak int64
	rows := 0
	err = readParquetActions(context.Background(), pqOpen(t, path), KindAll, func(a *Action) error {
		rows++
		if rows%50_000 == 0 {
			peak = max(peak, live())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rows != n {
		t.Fatalf("%d rows, want %d", rows, n)
	}
	// Keeping the rows would take about 100 MB (paths, actions); streaming keeps a page of
	// each column and parquet-go's read buffers.
	if grow := peak - base; grow > 32<<20 {
		t.Errorf("live heap grew by %d MB while streaming %d rows", grow>>20, n)
	}
	t.Logf("live heap grew by %.1f MB while streaming %d rows", float64(peak-base)/(1<<20), n)
}

func FuzzReadParquet(f *testing.F) {
	f.Add(pqSmallCheckpoint(f))
	// Real Spark checkpoints, when the fixtures are there.
	if dir, err := pqFixturesPath(); err == nil {
		for _, rel := range []string{
			"delta/delta-0.1.0/_delta_log/00000000000000000003.checkpoint.parquet",
			"delta/dv-partitioned-with-checkpoint/_delta_log/00000000000000000010.checkpoint.parquet",
		} {
			b, err := os.ReadFile(filepath.Join(dir, rel))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	// Checkpoints with the hostile schemas of TestHostileCheckpoints.
	good := pqSmallCheckpoint(f)
	for _, r := range [][2]string{{"add", "Add"}, {"add", "xdd"}, {"remove", "rxmove"}, {"path", "Path"}, {"metaData", "MetaData"}} {
		f.Add(pqRenameBytes(good, r[0], r[1]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		acts, err := pqCollect(context.Background(), pqBytesReader(data), KindAll)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		// Strings are refused when they are not valid UTF-8, never mended or passed on.
		for _, a := range acts {
			// encoding/json writes invalid UTF-8 as \ufffd (a real U+FFFD it writes as is).
			if b, _ := json.Marshal(a); bytes.Contains(b, []byte(`\ufffd`)) {
				t.Fatalf("action %s holds a string that was not valid UTF-8", b)
			}
		}
		if len(acts) > 0 && err == nil {
			for _, a := range acts {
				if a.Add != nil && a.Add.Path == "" || a.Remove != nil && a.Remove.Path == "" {
					t.Fatalf("a file action without a path: %s", pqJSON(a))
				}
			}
		}
	})
}

// pqBenchFile writes a checkpoint of n adds with ~100-character paths, a fifth of them with a
// deletion vector.
func pqBenchFile(b *testing.B, n int, codec compress.Codec) string {
	path := filepath.Join(b.TempDir(), "checkpoint.parquet")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	write := WriteCheckpointForTest
	if codec != nil {
		write = func(w io.Writer, acts iter.Seq[*Action]) error {
			return WriteCompressedCheckpointForTest(w, acts, codec)
		}
	}
	if err := write(f, pqGen(n, 0)); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

func BenchmarkReadCheckpoint1M(b *testing.B) { benchmarkReadCheckpoint(b, nil) }

// BenchmarkReadCheckpointZstd1M reads the same checkpoint compressed with zstd, whose pages
// parquetguard bounds from their headers instead of decompressing them a first time.
func BenchmarkReadCheckpointZstd1M(b *testing.B) { benchmarkReadCheckpoint(b, &parquet.Zstd) }

func benchmarkReadCheckpoint(b *testing.B, codec compress.Codec) {
	const n = 1_000_000
	path := pqBenchFile(b, n, codec)
	r := pqOpen(b, path)
	b.SetBytes(r.Size())
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		rows := 0
		err := readParquetActions(context.Background(), r, KindAdd|KindRemove, func(*Action) error {
			rows++
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if rows != n {
			b.Fatalf("%d rows, want %d", rows, n)
		}
	}
}

func BenchmarkWriteCheckpoint1M(b *testing.B) {
	const n = 1_000_000
	acts := slices.Collect(pqGen(n, 0))
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteCheckpointForTest(io.Discard, slices.Values(acts)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestParquetCodecs reads the same checkpoint written with each codec parquet-go offers: the
// page checks of parquetguard must accept what real encoders write, and the actions must be
// the same. LZ4_RAW is left out: parquet-go v0.32.0 writes LZ4_RAW pages that its own reader
// then fails to decode (the same on the reader before parquetguard), an error, never a wrong
// result.
func TestParquetCodecs(t *testing.T) {
	acts := slices.Collect(pqGen(30_000, 10))
	want, err := pqCollect(context.Background(), pqBytesReader(pqWrite(t, slices.Values(acts))), KindAll)
	if err != nil {
		t.Fatal(err)
	}
	for _, codec := range []compress.Codec{&parquet.Uncompressed, &parquet.Zstd, &parquet.Gzip, &parquet.Brotli} {
		t.Run(codec.String(), func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteCompressedCheckpointForTest(&buf, slices.Values(acts), codec); err != nil {
				t.Fatal(err)
			}
			got, err := pqCollect(context.Background(), pqBytesReader(buf.Bytes()), KindAll)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%d actions differ from the snappy file's %d", len(got), len(want))
			}
		})
	}
}

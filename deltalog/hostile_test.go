package deltalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// The hostile logs of VACUUM-SPEC section 2 point 6: keys in another case, duplicate keys,
// invalid UTF-8, values of the wrong type, two actions on one line, checkpoints without the
// columns read. Each case made an earlier version read a live file as dead (or the log as
// something other than what was written).

// readLines reads data as a commit through readJSONActions and describes each action read.
func readLines(t *testing.T, data string) ([]string, error) {
	t.Helper()
	store := mem.New("mem://hostile")
	key := CommitKey(1)
	store.PutAt(key, []byte(data), time.Unix(0, 0))
	var got []string
	err := readJSONActions(context.Background(), store, key, func(a *Action) error {
		got = append(got, describeAction(a))
		return nil
	})
	return got, err
}

// describeAction is a short text of what a reader takes from an action.
func describeAction(a *Action) string {
	switch {
	case a.Add != nil:
		s := "add " + a.Add.Path
		if dv := a.Add.DeletionVector; dv != nil {
			s += " dv=" + dv.UniqueID()
		}
		return s
	case a.Remove != nil:
		ts := "none"
		if a.Remove.DeletionTimestamp != nil {
			ts = fmt.Sprint(*a.Remove.DeletionTimestamp)
		}
		return "remove " + a.Remove.Path + " ts=" + ts
	case a.CDC != nil:
		return "cdc " + a.CDC.Path
	case a.Metadata != nil:
		return "metaData " + a.Metadata.ID
	case a.Protocol != nil:
		return fmt.Sprintf("protocol %d/%d", a.Protocol.MinReaderVersion, a.Protocol.MinWriterVersion)
	case a.CommitInfo != nil:
		return "commitInfo " + a.CommitInfo.Operation
	case a.Sidecar != nil:
		return "sidecar " + a.Sidecar.Path
	}
	return "unknown"
}

// hostileLine is one line of a commit and what an exact reader makes of it.
type hostileLine struct {
	name string
	line string
	want []string // nil with corrupt set
	// corrupt is set when the line must be refused as ErrCorrupt.
	corrupt bool
}

const addFields = `"size":1,"modificationTime":0,"dataChange":true`

// hostileLines are the test cases of TestHostileCommitLines and the seeds of
// FuzzReadJSONActions.
var hostileLines = []hostileLine{
	// Keys are case-sensitive: another case is an unknown key, ignored.
	{name: "REMOVE is an unknown action", line: `{"REMOVE":{"path":"live.parquet","deletionTimestamp":1,"dataChange":true}}`, want: []string{"unknown"}},
	{name: "Add is an unknown action", line: `{"Add":{"path":"dead.parquet",` + addFields + `}}`, want: []string{"unknown"}},
	{name: "Path beside path is an unknown field", line: `{"add":{"path":"live.parquet","Path":"other.parquet",` + addFields + `}}`, want: []string{"add live.parquet"}},
	{name: "Path before path is an unknown field", line: `{"add":{"Path":"other.parquet","path":"live.parquet",` + addFields + `}}`, want: []string{"add live.parquet"}},
	{name: "DELETIONTIMESTAMP is an unknown field", line: `{"remove":{"path":"r.parquet","deletionTimestamp":4102444800000,"DELETIONTIMESTAMP":1000,"dataChange":true}}`, want: []string{"remove r.parquet ts=4102444800000"}},
	{name: "only DELETIONTIMESTAMP: no timestamp", line: `{"remove":{"path":"r.parquet","DELETIONTIMESTAMP":4102444800000,"dataChange":true}}`, want: []string{"remove r.parquet ts=none"}},
	{name: "StorageType is not storageType", line: `{"add":{"path":"a.parquet",` + addFields + `,"deletionVector":{"StorageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","sizeInBytes":1,"cardinality":1}}}`, corrupt: true},
	{name: "an add with only Path has no path", line: `{"add":{"Path":"live.parquet",` + addFields + `}}`, corrupt: true},
	{name: "escaped name is the name", line: `{"\u0061dd":{"path":"a.parquet",` + addFields + `}}`, want: []string{"add a.parquet"}},
	// Unknown actions beside a known one are ignored, as Spark's EvolvabilitySuite requires.
	{name: "unknown action beside add", line: `{"add":{"path":"a.parquet",` + addFields + `},"some_new_action_alongside_add_action":["a","1"]}`, want: []string{"add a.parquet"}},

	// Duplicate keys at any depth.
	{name: "duplicate path", line: `{"add":{"path":"live.parquet","path":"dead.parquet",` + addFields + `}}`, corrupt: true},
	{name: "duplicate deletionTimestamp", line: `{"remove":{"path":"r.parquet","deletionTimestamp":4102444800000,"deletionTimestamp":1,"dataChange":true}}`, corrupt: true},
	{name: "duplicate action", line: `{"add":{"path":"a.parquet",` + addFields + `},"add":{"path":"b.parquet",` + addFields + `}}`, corrupt: true},
	{name: "duplicate key in partitionValues", line: `{"add":{"path":"a.parquet",` + addFields + `,"partitionValues":{"p":"1","p":"2"}}}`, corrupt: true},
	{name: "duplicate key in an unknown field", line: `{"add":{"path":"a.parquet",` + addFields + `,"tags":{"k":"1","k":"2"}}}`, corrupt: true},
	{name: "duplicate key in an unknown action", line: `{"someFutureAction":{"x":1,"x":2}}`, corrupt: true},

	// Invalid UTF-8, raw or as a lone surrogate escape.
	{name: "raw invalid UTF-8 in path", line: "{\"add\":{\"path\":\"caf\xe9.parquet\"," + addFields + "}}", corrupt: true},
	{name: "lone high surrogate in path", line: `{"add":{"path":"a\ud800.parquet",` + addFields + `}}`, corrupt: true},
	{name: "lone low surrogate in path", line: `{"remove":{"path":"a\udc00.parquet","dataChange":true}}`, corrupt: true},
	{name: "invalid UTF-8 in a DV path", line: "{\"add\":{\"path\":\"a.parquet\"," + addFields + ",\"deletionVector\":{\"storageType\":\"p\",\"pathOrInlineDv\":\"file:/t/\xff.bin\",\"sizeInBytes\":1,\"cardinality\":1}}}", corrupt: true},
	{name: "invalid UTF-8 in an unknown field", line: "{\"add\":{\"path\":\"a.parquet\"," + addFields + ",\"tags\":{\"k\":\"\xc3\"}}}", corrupt: true},
	{name: "invalid UTF-8 in a name", line: "{\"add\":{\"path\":\"a.parquet\"," + addFields + ",\"\xff\":1}}", corrupt: true},
	{name: "a surrogate pair is fine", line: `{"add":{"path":"\ud83d\ude00.parquet",` + addFields + `}}`, want: []string{"add \U0001F600.parquet"}},

	// Values of the wrong type.
	{name: "add is null", line: `{"add":null}`, corrupt: true},
	{name: "remove is an array", line: `{"remove":[{"path":"live.parquet"}]}`, corrupt: true},
	{name: "path is a number", line: `{"add":{"path":1,` + addFields + `}}`, corrupt: true},
	{name: "size is a string", line: `{"add":{"path":"a.parquet","size":"1","modificationTime":0,"dataChange":true}}`, corrupt: true},
	{name: "deletionTimestamp is a string", line: `{"remove":{"path":"r.parquet","deletionTimestamp":"1","dataChange":true}}`, corrupt: true},
	{name: "deletionTimestamp is fractional", line: `{"remove":{"path":"r.parquet","deletionTimestamp":1.5,"dataChange":true}}`, corrupt: true},
	{name: "DV offset overflows int32", line: `{"add":{"path":"a.parquet",` + addFields + `,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":4294967297,"sizeInBytes":1,"cardinality":1}}}`, corrupt: true},
	{name: "partition value is a number", line: `{"add":{"path":"a.parquet",` + addFields + `,"partitionValues":{"p":1}}}`, corrupt: true},

	// One action a line.
	{name: "two actions on one line", line: `{"commitInfo":{"operation":"WRITE"},"remove":{"path":"live.parquet","deletionTimestamp":1,"dataChange":true}}`, corrupt: true},
	{name: "add and remove on one line", line: `{"add":{"path":"a.parquet",` + addFields + `},"remove":{"path":"b.parquet","dataChange":true}}`, corrupt: true},
	{name: "two objects on one line", line: `{"add":{"path":"a.parquet",` + addFields + `}} {"remove":{"path":"a.parquet","dataChange":true}}`, corrupt: true},
	{name: "not an object", line: `["add"]`, corrupt: true},
	{name: "garbage after the object", line: `{"add":{"path":"a.parquet",` + addFields + `}}x`, corrupt: true},
}

func TestHostileCommitLines(t *testing.T) {
	for _, tc := range hostileLines {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readLines(t, tc.line+"\n")
			if tc.corrupt {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("got %q, error %v; want ErrCorrupt", got, err)
				}
				if !strings.Contains(err.Error(), CommitKey(1)) || !strings.Contains(err.Error(), "line 1") {
					t.Errorf("error %q does not name the file and the line", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want %q", err, tc.want)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCommitLineNumbers checks that a refusal names the line, blank lines counted.
func TestCommitLineNumbers(t *testing.T) {
	data := `{"commitInfo":{"operation":"WRITE"}}` + "\n\n" + `{"add":{"path":"a.parquet","size":1,"modificationTime":0,"dataChange":true}}` + "\r\n" +
		`{"add":{"path":"b.parquet","path":"c.parquet"}}` + "\n"
	_, err := readLines(t, data)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), CommitKey(1)+" of mem://hostile, line 4") {
		t.Errorf("got error %v, want ErrCorrupt naming %s of mem://hostile, line 4", err, CommitKey(1))
	}
}

// TestCommitLongLines reads lines longer than the read buffer, around its size, and a last
// line without a newline.
func TestCommitLongLines(t *testing.T) {
	var b strings.Builder
	var want []string
	for i, n := range []int{0, 1, 64<<10 - 100, 64 << 10, 64<<10 + 1, 200 << 10, 3 << 20} {
		path := fmt.Sprintf("%d.parquet", i)
		fmt.Fprintf(&b, `{"add":{"path":%q,"size":1,"modificationTime":0,"dataChange":true,"stats":"%s"}}`+"\n", path, strings.Repeat("s", n))
		want = append(want, "add "+path)
	}
	b.WriteString(`{"remove":{"path":"last.parquet","dataChange":true}}`)
	want = append(want, "remove last.parquet ts=none")
	got, err := readLines(t, b.String())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
}

// TestCommitLineOver256MB reads a commit line of 300 MB, longer than bufio.Scanner's limit
// of 256 MB that an earlier version used.
func TestCommitLineOver256MB(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 300 MB commit")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, filepath.FromSlash(CommitKey(1)))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// The bulk goes into an unknown field, which is checked but not kept.
	fmt.Fprint(f, `{"add":{"path":"big.parquet","size":1,"modificationTime":0,"dataChange":true,"x":"`)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for range 300 {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Fprint(f, `"}}`+"\n"+`{"remove":{"path":"r.parquet","dataChange":true}}`+"\n")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = readJSONActions(context.Background(), store, CommitKey(1), func(a *Action) error {
		got = append(got, describeAction(a))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"add big.parquet", "remove r.parquet ts=none"}; !cmp.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestMetadataAndCommitInfoStrict decodes metaData and commitInfo on their own (as History and
// the writers do) and inside a line: both must be exact and keep Raw.
func TestMetadataAndCommitInfoStrict(t *testing.T) {
	for _, tc := range []struct {
		name    string
		value   string
		corrupt bool
	}{
		{name: "plain", value: `{"id":"m","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{"k":"v"}}`},
		{name: "duplicate configuration key", value: `{"id":"m","configuration":{"delta.deletedFileRetentionDuration":"interval 1 hour","delta.deletedFileRetentionDuration":"interval 1000 weeks"}}`, corrupt: true},
		{name: "Configuration beside configuration", value: `{"id":"m","configuration":{"k":"v"},"Configuration":{"k":"w"}}`},
		{name: "invalid UTF-8", value: "{\"id\":\"m\",\"configuration\":{\"k\":\"\xff\"}}", corrupt: true},
		{name: "lone surrogate", value: `{"id":"m","configuration":{"k":"\udfff"}}`, corrupt: true},
		{name: "wrong type", value: `{"id":"m","partitionColumns":"p"}`, corrupt: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Metadata
			err := m.UnmarshalJSON([]byte(tc.value))
			if tc.corrupt != (err != nil) {
				t.Fatalf("Metadata.UnmarshalJSON: error %v, want error %v", err, tc.corrupt)
			}
			if err == nil {
				if got := string(m.Raw); got != tc.value {
					t.Errorf("Raw = %s, want %s", got, tc.value)
				}
				if got := m.Configuration["k"]; got != "v" {
					t.Errorf("configuration k = %q, want v", got)
				}
			}
			_, err = readLines(t, `{"metaData":`+tc.value+"}\n")
			if tc.corrupt != errors.Is(err, ErrCorrupt) {
				t.Errorf("in a commit: error %v, want ErrCorrupt %v", err, tc.corrupt)
			}
		})
	}
	for _, tc := range []struct {
		name    string
		value   string
		corrupt bool
	}{
		{name: "plain", value: `{"timestamp":5,"operation":"WRITE","operationParameters":{"mode":"Append"}}`},
		{name: "OPERATION is not operation", value: `{"timestamp":5,"operation":"WRITE","OPERATION":"VACUUM END"}`},
		{name: "duplicate inCommitTimestamp", value: `{"inCommitTimestamp":5,"inCommitTimestamp":9,"operation":"WRITE"}`, corrupt: true},
		{name: "invalid UTF-8 in an unknown field", value: "{\"operation\":\"WRITE\",\"engineInfo\":\"\xfe\"}", corrupt: true},
		{name: "timestamp is a string", value: `{"timestamp":"5","operation":"WRITE"}`, corrupt: true},
	} {
		t.Run("commitInfo/"+tc.name, func(t *testing.T) {
			var c CommitInfo
			err := c.UnmarshalJSON([]byte(tc.value))
			if tc.corrupt != (err != nil) {
				t.Fatalf("CommitInfo.UnmarshalJSON: error %v, want error %v", err, tc.corrupt)
			}
			if err == nil {
				if c.Operation != "WRITE" || string(c.Raw) != tc.value {
					t.Errorf("got operation %q, Raw %s; want WRITE, %s", c.Operation, c.Raw, tc.value)
				}
			}
		})
	}
}

// pqRename renames every column (schema element and column path) called from to to in the
// footer of a Parquet file; the names must have the same length. It builds files a writer
// would not: columns in another case, duplicate names, missing columns.
func pqRename(t *testing.T, data []byte, from, to string) []byte {
	t.Helper()
	if len(from) != len(to) || len(from) > 15 {
		t.Fatalf("pqRename %q to %q: names of one short length only", from, to)
	}
	out := pqRenameBytes(data, from, to)
	if bytes.Equal(out, data) {
		t.Fatalf("no column %q in the footer", from)
	}
	return out
}

// pqRenameBytes is pqRename without the checks.
func pqRenameBytes(data []byte, from, to string) []byte {
	out := bytes.Clone(data)
	n := int(binary.LittleEndian.Uint32(out[len(out)-8:]))
	footer := out[len(out)-8-n : len(out)-8]
	// Thrift's compact protocol writes a string as its length (one byte here), then its bytes.
	old := append([]byte{byte(len(from))}, from...)
	copy(footer, bytes.ReplaceAll(footer, old, append([]byte{byte(len(to))}, to...)))
	return out
}

// hostileCheckpoint is a checkpoint with a live add, a recent tombstone (which protects its
// file) and the protocol and metadata.
func hostileCheckpoint(t *testing.T, addPath string) []byte {
	return pqWrite(t, pqSeq([]*Action{
		{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &Metadata{ID: "m", Format: Format{Provider: "parquet"}, SchemaString: "{}"}},
		{Add: &Add{Path: addPath, Size: 1, DataChange: true}},
		{Remove: &Remove{Path: "recent.parquet", DeletionTimestamp: pqPtr[int64](4102444800000)}},
	}))
}

func TestHostileCheckpoints(t *testing.T) {
	good := hostileCheckpoint(t, "live.parquet")
	type nested struct {
		Path *string `parquet:"path"`
	}
	type sidecar struct {
		Path        *string `parquet:"path"`
		SizeInBytes *int64  `parquet:"sizeInBytes"`
	}
	type cpMeta struct {
		Version *int64 `parquet:"version"`
	}
	// The columns of a multi-part checkpoint's part that holds only transactions, as Spark
	// wrote parts 1 and 5 of delta-kernel-rs's parquet_row_group_skipping fixture: no add, no
	// remove column.
	type txn struct {
		AppID   *string `parquet:"appId"`
		Version *int64  `parquet:"version"`
	}
	type txnOnly struct {
		Txn *txn `parquet:"txn"`
	}
	type txnAndUnknown struct {
		Txn     *txn `parquet:"txn"`
		Unknown *txn `parquet:"someNewAction"`
	}
	type domain struct {
		Tags []string `parquet:"tags,list"` // a repeated leaf only
	}
	type txnAndDomain struct {
		Txn            *txn    `parquet:"txn"`
		DomainMetadata *domain `parquet:"domainMetadata"`
	}
	type txnAndMeta struct {
		Txn      *txn    `parquet:"txn"`
		MetaData *cpMeta `parquet:"metaData"`
	}
	tx := &txn{pqPtr("app"), pqPtr[int64](7)}
	v2 := func(sidecars ...string) []byte {
		type row struct {
			CheckpointMetadata *cpMeta  `parquet:"checkpointMetadata"`
			Sidecar            *sidecar `parquet:"sidecar"`
		}
		rows := []row{{CheckpointMetadata: &cpMeta{pqPtr[int64](1)}}}
		for _, s := range sidecars {
			rows = append(rows, row{Sidecar: &sidecar{pqPtr(s), pqPtr[int64](1)}})
		}
		return pqWriteRaw(t, rows...)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want Kinds
		// wantActs is what a correct reading returns; nil with corrupt set.
		wantActs []string
		corrupt  bool
	}{
		{name: "good", data: good, want: KindAdd | KindRemove, wantActs: []string{"add live.parquet", "remove recent.parquet ts=4102444800000"}},
		{name: "no add column", data: pqRename(t, good, "add", "xdd"), want: KindAdd | KindRemove, corrupt: true},
		{name: "Add instead of add", data: pqRename(t, good, "add", "Add"), want: KindAdd | KindRemove, corrupt: true},
		{name: "ADD instead of add, read for adds only", data: pqRename(t, good, "add", "ADD"), want: KindAdd, corrupt: true},
		{name: "no remove column", data: pqRename(t, good, "remove", "rxmove"), want: KindAdd | KindRemove, corrupt: true},
		{name: "Remove instead of remove", data: pqRename(t, good, "remove", "Remove"), want: KindAdd | KindRemove, corrupt: true},
		{name: "two add columns", want: KindAdd | KindRemove, corrupt: true, data: pqRename(t, pqWriteRaw(t, struct {
			Add    *nested `parquet:"add"`
			Adx    *nested `parquet:"adx"`
			Remove *nested `parquet:"remove"`
		}{Adx: &nested{pqPtr("live.parquet")}}), "adx", "add")},
		{name: "Path instead of path", data: pqRename(t, good, "path", "Path"), want: KindAdd | KindRemove, corrupt: true},
		{name: "DeletionVector instead of deletionVector", data: pqRename(t, good, "deletionVector", "DeletionVector"), want: KindAdd | KindRemove, corrupt: true},
		{name: "Sidecar instead of sidecar", data: pqRename(t, v2("s.parquet"), "sidecar", "Sidecar"), want: KindSidecar | KindCheckpointMetadata, corrupt: true},
		{name: "MetaData instead of metaData", data: pqRename(t, good, "metaData", "MetaData"), want: KindMetadata, corrupt: true},
		{name: "invalid UTF-8 in add.path", data: hostileCheckpoint(t, "caf\xe9.parquet"), want: KindAdd | KindRemove, corrupt: true},
		{name: "invalid UTF-8 in a DV path", want: KindAdd | KindRemove, corrupt: true, data: pqWrite(t, pqSeq([]*Action{
			{Add: &Add{Path: "a.parquet", DeletionVector: &DeletionVector{StorageType: "p", PathOrInlineDv: "file:/t/\xff.bin"}}},
		}))},
		{name: "invalid UTF-8 in a DV storage type", want: KindAdd | KindRemove, corrupt: true, data: pqWrite(t, pqSeq([]*Action{
			{Remove: &Remove{Path: "a.parquet", DeletionVector: &DeletionVector{StorageType: "\xfe", PathOrInlineDv: "x"}}},
		}))},
		{name: "invalid UTF-8 in metaData", want: KindMetadata, corrupt: true, data: pqWrite(t, pqSeq([]*Action{
			{Metadata: &Metadata{ID: "m", Configuration: map[string]string{"delta.deletedFileRetentionDuration": "interval 1\xff weeks"}}},
		}))},
		{name: "invalid UTF-8 in a sidecar path", data: v2("s\xff.parquet"), want: KindSidecar, corrupt: true},
		{name: "add without path value", want: KindAdd | KindRemove, corrupt: true, data: pqWriteRaw(t, struct {
			Add    *nested `parquet:"add"`
			Remove *nested `parquet:"remove"`
		}{Add: &nested{}})},
		// A V2 checkpoint may keep its file actions in sidecars only (PROTOCOL.md, V2 Spec).
		{name: "V2 with sidecars, no file columns", data: v2("s.parquet"), want: KindAdd | KindRemove, wantActs: nil},
		{name: "V2 with sidecars, read for sidecars", data: v2("s.parquet", "t.parquet"), want: KindSidecar, wantActs: []string{"sidecar s.parquet", "sidecar t.parquet"}},
		// A file without the add or remove column whose every row holds one action of a column it
		// has lost no add or remove (pqMissingColumnsRule); one with a row holding none may have.
		{name: "V2 without sidecars nor file columns, its one row a checkpointMetadata", data: v2(), want: KindAdd | KindRemove, wantActs: nil},
		{name: "V2 without sidecars nor file columns, a row holding nothing", want: KindAdd | KindRemove, corrupt: true, data: pqWriteRaw(t,
			struct {
				CheckpointMetadata *cpMeta `parquet:"checkpointMetadata"`
			}{&cpMeta{pqPtr[int64](1)}},
			struct {
				CheckpointMetadata *cpMeta `parquet:"checkpointMetadata"`
			}{})},
		{name: "a part with only txn rows and columns", data: pqWriteRaw(t, txnOnly{tx}), want: KindAdd | KindRemove | kindFilesHere, wantActs: nil},
		{name: "a part with only txn rows and columns, read with deletion vectors", data: pqWriteRaw(t, txnOnly{tx}, txnOnly{tx}), want: KindAdd | KindRemove | kindFilesHere | kindDVRequired, wantActs: nil},
		{name: "a part with only a txn column, a row without txn", data: pqWriteRaw(t, txnOnly{tx}, txnOnly{}), want: KindAdd | KindRemove | kindFilesHere, corrupt: true},
		{name: "a classic checkpoint with only a txn column, a row without txn", data: pqWriteRaw(t, txnOnly{}, txnOnly{tx}), want: KindAdd | KindRemove, corrupt: true},
		{name: "a part with no rows and no file columns", data: pqWriteRaw[txnOnly](t), want: KindAdd | KindRemove | kindFilesHere, wantActs: nil},
		{name: "a part whose row holds only an unknown action", data: pqWriteRaw(t, txnAndUnknown{Txn: tx}, txnAndUnknown{Unknown: tx}), want: KindAdd | KindRemove | kindFilesHere, corrupt: true},
		{name: "a part of txn and domainMetadata rows (a repeated leaf)", want: KindAdd | KindRemove | kindFilesHere, wantActs: nil,
			data: pqWriteRaw(t, txnAndDomain{DomainMetadata: &domain{Tags: []string{"a", "b", "c"}}}, txnAndDomain{Txn: tx}, txnAndDomain{DomainMetadata: &domain{}}, txnAndDomain{Txn: tx})},
		{name: "a part of txn and domainMetadata rows, one holding neither", want: KindAdd | KindRemove | kindFilesHere, corrupt: true,
			data: pqWriteRaw(t, txnAndDomain{DomainMetadata: &domain{Tags: []string{"a", "b"}}}, txnAndDomain{}, txnAndDomain{Txn: tx})},
		{name: "a part without file columns, a row holding two actions", data: pqWriteRaw(t, txnAndMeta{Txn: tx, MetaData: &cpMeta{pqPtr[int64](1)}}), want: KindAdd | KindRemove | kindFilesHere, corrupt: true},
		{name: "a classic checkpoint with every action but add, each row one", want: KindAdd | KindRemove, wantActs: []string{"remove recent.parquet ts=4102444800000"},
			data: pqRename(t, pqWrite(t, pqSeq([]*Action{
				{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
				{Metadata: &Metadata{ID: "m", Format: Format{Provider: "parquet"}, SchemaString: "{}"}},
				{Remove: &Remove{Path: "recent.parquet", DeletionTimestamp: pqPtr[int64](4102444800000)}},
			})), "add", "xdd")},
		{name: "no deletionVector column in a table with deletion vectors", data: pqRename(t, good, "deletionVector", "deletionVectxr"), want: KindAdd | KindRemove | kindDVRequired, corrupt: true},
		{name: "no deletionVector column in a table without them", data: pqRename(t, good, "deletionVector", "deletionVectxr"), want: KindAdd | KindRemove, wantActs: []string{"add live.parquet", "remove recent.parquet ts=4102444800000"}},
		// A sidecar (or a multi-part part) must hold its file actions: no V2 exemption.
		{name: "a sidecar shaped like a V2 top-level file", data: v2("s.parquet"), want: KindAdd | KindRemove | kindFilesHere, corrupt: true},
		{name: "sidecars but no checkpointMetadata action, no file columns", want: KindAdd | KindRemove, corrupt: true, data: pqWriteRaw(t, struct {
			CheckpointMetadata *cpMeta  `parquet:"checkpointMetadata"`
			Sidecar            *sidecar `parquet:"sidecar"`
		}{Sidecar: &sidecar{pqPtr("s.parquet"), pqPtr[int64](1)}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acts, err := pqCollect(context.Background(), pqBytesReader(tc.data), tc.want)
			var got []string
			for _, a := range acts {
				got = append(got, describeAction(a))
			}
			if tc.corrupt {
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("got %q, error %v; want ErrCorrupt", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want %q", err, tc.wantActs)
			}
			if diff := cmp.Diff(tc.wantActs, got); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
		})
	}
}

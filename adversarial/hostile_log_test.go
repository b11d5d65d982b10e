package adversarial

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/checkpointwriter"
)

// The hostile logs of VACUUM-SPEC section 2 point 6, end to end: in each table one line (or
// one checkpoint) is spelled so that a reader that is not exact would take a live file for a
// dead one. Go's encoding/json matched keys case-insensitively, let the last of two equal keys
// win and mended invalid UTF-8 with U+FFFD; a checkpoint without the add column read as a
// table without live files. Each test runs a real VACUUM RETAIN 0 HOURS (check off) and
// checks that the live file survives, and that a log that cannot be read exactly is refused
// with a message naming the table and the file, nothing deleted.

// hostileCase is one hostile table: build writes it (version 0, the protocol and metadata, is
// there already) and returns the log file the refusal must name, or "" when the table is read
// exactly and vacuumed.
type hostileCase struct {
	name  string
	build func(tb *localTable) (badFile string)
	// live are files the table needs: they must survive.
	live []string
}

// junk is an old file no action names: a vacuum that runs deletes it, a refused one does not.
const junk = "junk.parquet"

// addWith is an add action of path with extra JSON members appended inside the add.
func addWith(path, extra string) string {
	return `{"add":{"path":` + jsonString(path) + `,"size":1,"modificationTime":0,"dataChange":true,"partitionValues":{}` + extra + `}}`
}

// futureMillis is a deletionTimestamp an hour ahead (a writer whose clock runs fast): inside
// any retention, so its tombstone protects the file even at RETAIN 0 HOURS.
func futureMillis() int64 { return time.Now().Add(time.Hour).UnixMilli() }

func TestHostileLogs(t *testing.T) {
	cases := []hostileCase{
		{
			name: "REMOVE is not remove",
			build: func(tb *localTable) string {
				tb.commit(addLine("live.parquet"))
				tb.commit(`{"REMOVE":{"path":"live.parquet","deletionTimestamp":1000,"dataChange":true}}`)
				return ""
			},
			live: []string{"live.parquet"},
		},
		{
			name: "Path beside path",
			build: func(tb *localTable) string {
				tb.commit(addWith("live.parquet", `,"Path":"`+junk+`"`))
				return ""
			},
			live: []string{"live.parquet"},
		},
		{
			name: "DELETIONTIMESTAMP beside deletionTimestamp",
			build: func(tb *localTable) string {
				tb.commit(addLine("recent.parquet"))
				tb.commit(fmt.Sprintf(`{"remove":{"path":"recent.parquet","deletionTimestamp":%d,"DELETIONTIMESTAMP":1000,"dataChange":true}}`, futureMillis()))
				return ""
			},
			live: []string{"recent.parquet"},
		},
		{
			name: "duplicate path key",
			build: func(tb *localTable) string {
				v := tb.commit(addWith("live.parquet", `,"path":"`+junk+`"`))
				return commitName(v)
			},
			live: []string{"live.parquet"},
		},
		{
			name: "duplicate deletionTimestamp key",
			build: func(tb *localTable) string {
				tb.commit(addLine("recent.parquet"))
				v := tb.commit(fmt.Sprintf(`{"remove":{"path":"recent.parquet","deletionTimestamp":%d,"deletionTimestamp":1000,"dataChange":true}}`, futureMillis()))
				return commitName(v)
			},
			live: []string{"recent.parquet"},
		},
		{
			// The file on disk has the Latin-1 byte é; a writer copied the name into the log
			// unconverted. Mended to U+FFFD, the path named another file, and this one was
			// deleted as untracked.
			name: "invalid UTF-8 bytes in a path",
			build: func(tb *localTable) string {
				v := tb.commit("{\"add\":{\"path\":\"caf\xe9.parquet\",\"size\":1,\"modificationTime\":0,\"dataChange\":true,\"partitionValues\":{}}}")
				return commitName(v)
			},
			live: []string{"caf\xe9.parquet"},
		},
		{
			// A Java string with a lone surrogate, as a JVM writer escapes it; on disk the name
			// holds the surrogate's three bytes.
			name: "lone surrogate escape in a path",
			build: func(tb *localTable) string {
				v := tb.commit(`{"add":{"path":"b\ud800.parquet","size":1,"modificationTime":0,"dataChange":true,"partitionValues":{}}}`)
				return commitName(v)
			},
			live: []string{"b\xed\xa0\x80.parquet"},
		},
		{
			name: "two actions on one line",
			build: func(tb *localTable) string {
				tb.commit(addLine("live.parquet"))
				v := tb.commit(`{"commitInfo":{"operation":"WRITE"},"remove":{"path":"live.parquet","deletionTimestamp":1000,"dataChange":true}}`)
				return commitName(v)
			},
			live: []string{"live.parquet"},
		},
		{
			name: "checkpoint without an add column",
			build: func(tb *localTable) string {
				return tb.checkpoint(t, "add", "xdd")
			},
			live: []string{"live.parquet", "recent.parquet"},
		},
		{
			name: "checkpoint with Add for add",
			build: func(tb *localTable) string {
				return tb.checkpoint(t, "add", "Add")
			},
			live: []string{"live.parquet", "recent.parquet"},
		},
		{
			// The tombstone of recent.parquet, inside the retention, is in the remove column.
			name: "checkpoint without a remove column",
			build: func(tb *localTable) string {
				return tb.checkpoint(t, "remove", "rxmove")
			},
			live: []string{"live.parquet", "recent.parquet"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tb := newLocalTable(t)
			bad := tc.build(tb)
			for _, f := range append(slices.Clone(tc.live), junk) {
				tb.file(f, 30*day)
			}
			code, stderr := vacuumNow(t, tb.dir)
			tb.mustExist(tc.live...)
			if bad == "" {
				// Read exactly, the table is vacuumed: the file no action names is gone.
				if code != 0 {
					t.Fatalf("exit code %d, want 0; stderr:\n%s", code, stderr)
				}
				if tb.exists(junk) {
					t.Errorf("%s survived: the vacuum did not run", junk)
				}
				return
			}
			if code != 1 {
				t.Errorf("exit code %d, want 1 (refused); stderr:\n%s", code, stderr)
			}
			tb.mustExist(junk) // a refused run deletes nothing
			for _, want := range []string{tb.dir, bad, "corrupt"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("message does not name %q:\n%s", want, stderr)
				}
			}
		})
	}
}

func commitName(v int64) string { return fmt.Sprintf("%020d.json", v) }

// checkpoint commits a live add and a recent tombstone, writes a checkpoint of that version
// whose column from is renamed to (names of equal length), and returns its file name.
func (tb *localTable) checkpoint(t *testing.T, from, to string) string {
	t.Helper()
	ts := futureMillis()
	tb.commit(addLine("live.parquet"), addLine("recent.parquet"))
	v := tb.commit(fmt.Sprintf(`{"remove":{"path":"recent.parquet","deletionTimestamp":%d,"dataChange":true}}`, ts))
	var buf bytes.Buffer
	acts := []*deltalog.Action{
		{Protocol: &deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &deltalog.Metadata{ID: "hostile", Format: deltalog.Format{Provider: "parquet", Options: map[string]string{}},
			SchemaString: `{"type":"struct","fields":[]}`, PartitionColumns: []string{}, Configuration: map[string]string{}}},
		{Add: &deltalog.Add{Path: "live.parquet", Size: 1, DataChange: true}},
		{Remove: &deltalog.Remove{Path: "recent.parquet", DeletionTimestamp: &ts, DataChange: true}},
	}
	if err := checkpointwriter.Write(&buf, slices.Values(acts)); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%020d.checkpoint.parquet", v)
	p := filepath.Join(tb.dir, "_delta_log", name)
	if err := os.WriteFile(p, renameColumn(t, buf.Bytes(), from, to), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// renameColumn renames the column from to to (of the same, short length) in the footer of a
// Parquet file: its schema element and its column chunks' paths. Thrift's compact protocol
// writes a string as its length, one byte here, then its bytes.
func renameColumn(t *testing.T, data []byte, from, to string) []byte {
	t.Helper()
	if len(from) != len(to) || len(from) > 15 {
		t.Fatalf("renameColumn %q to %q: names of one short length only", from, to)
	}
	out := bytes.Clone(data)
	n := int(binary.LittleEndian.Uint32(out[len(out)-8:]))
	footer := out[len(out)-8-n : len(out)-8]
	old := append([]byte{byte(len(from))}, from...)
	if !bytes.Contains(footer, old) {
		t.Fatalf("no column %q in the footer", from)
	}
	copy(footer, bytes.ReplaceAll(footer, old, append([]byte{byte(len(to))}, to...)))
	return out
}

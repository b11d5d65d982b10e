package deltalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// The rules of checkpoint choice and reading (VACUUM-SPEC section 2 point 2): which files make
// a checkpoint that may replace the commits, and what a checkpoint must hold. Each case once
// made the reader take the table for one without files at the checkpoint's version, or refuse
// a healthy table.

const cpUUID = "80a083e8-7026-4e79-81be-64bd76c43a11"

// cpLog is a log in memory: commits 0..n-1, each adding f<v>.parquet, commit 0 with a V1
// protocol and a metaData.
func cpLog(t *testing.T, n int) *mem.Store {
	t.Helper()
	store := mem.New("mem://checkpoints")
	for v := 0; v < n; v++ {
		var lines []any
		if v == 0 {
			lines = append(lines,
				map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
				map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet"},
					"schemaString": "{}", "partitionColumns": []string{}, "configuration": map[string]string{}}})
		}
		lines = append(lines, map[string]any{"add": map[string]any{"path": fmt.Sprintf("f%d.parquet", v), "size": 1,
			"modificationTime": 0, "dataChange": true}})
		data, err := EncodeCommit(lines)
		if err != nil {
			t.Fatal(err)
		}
		store.PutAt(CommitKey(int64(v)), data, time.Unix(0, 0))
	}
	return store
}

// cpHeader is the protocol and metaData every checkpoint holds.
func cpHeader() []*Action {
	return []*Action{
		{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &Metadata{ID: "t", Format: Format{Provider: "parquet"}, SchemaString: "{}"}},
	}
}

// cpState is the checkpoint of cpLog at version v: the header and the adds f0..fv.
func cpState(v int) []*Action {
	acts := cpHeader()
	for i := 0; i <= v; i++ {
		acts = append(acts, &Action{Add: &Add{Path: fmt.Sprintf("f%d.parquet", i), Size: 1, DataChange: true}})
	}
	return acts
}

func cpPut(t *testing.T, store *mem.Store, name string, acts []*Action) {
	t.Helper()
	store.PutAt(LogDir+name, pqWrite(t, pqSeq(acts)), time.Unix(0, 0))
}

// cpLive loads the table and returns its live files.
func cpLive(t *testing.T, store *mem.Store) (*Snapshot, []string, error) {
	t.Helper()
	snap, err := Load(context.Background(), store)
	if err != nil {
		return nil, nil, err
	}
	var live []string
	err = snap.Files(context.Background(), store, func(f File) error {
		if !f.Removed {
			live = append(live, f.Key)
		}
		return nil
	})
	return snap, live, err
}

// TestEmptyCheckpointFilesAreIgnored: a checkpoint file of 0 bytes (of any kind) is no
// checkpoint, as in Spark: the version is read from the commits or an older checkpoint. Taken
// as a checkpoint, an empty UUID-named JSON file read as a table without files.
func TestEmptyCheckpointFilesAreIgnored(t *testing.T) {
	for _, name := range []string{
		"00000000000000000002.checkpoint.parquet",
		"00000000000000000002.checkpoint." + cpUUID + ".json",
		"00000000000000000002.checkpoint." + cpUUID + ".parquet",
	} {
		t.Run(name, func(t *testing.T) {
			store := cpLog(t, 4)
			store.PutAt(LogDir+name, nil, time.Unix(0, 0))
			snap, live, err := cpLive(t, store)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Segment.CheckpointVersion != -1 || len(live) != 4 {
				t.Errorf("checkpoint %d, live %q; want replay of the commits, 4 live files", snap.Segment.CheckpointVersion, live)
			}
			// An older checkpoint is used instead of the empty one.
			cpPut(t, store, "00000000000000000001.checkpoint.parquet", cpState(1))
			snap, live, err = cpLive(t, store)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Segment.CheckpointVersion != 1 || len(live) != 4 {
				t.Errorf("checkpoint %d, live %q; want the checkpoint of version 1, 4 live files", snap.Segment.CheckpointVersion, live)
			}
			// Without the commits it would replace, the table is refused, naming the file.
			store.Delete(context.Background(), []string{CommitKey(0), CommitKey(1), CommitKey(2), LogDir + "00000000000000000001.checkpoint.parquet"})
			_, err = ListLog(context.Background(), store)
			if !errors.Is(err, ErrMissingVersion) || !strings.Contains(err.Error(), name) {
				t.Errorf("got %v; want ErrMissingVersion naming %s", err, name)
			}
		})
	}
	t.Run("an empty checkpoint newer than the commits", func(t *testing.T) {
		// Its name says version 5 was committed: commits 4 and 5 are missing, not the table
		// at version 3.
		store := cpLog(t, 4)
		store.PutAt(LogDir+"00000000000000000005.checkpoint.parquet", nil, time.Unix(0, 0))
		_, err := ListLog(context.Background(), store)
		if !errors.Is(err, ErrMissingVersion) || !strings.Contains(err.Error(), "version 4 is missing") {
			t.Errorf("got %v; want version 4 missing", err)
		}
	})
	t.Run("an empty part of a multi-part checkpoint", func(t *testing.T) {
		store := cpLog(t, 4)
		cpPut(t, store, "00000000000000000002.checkpoint.0000000001.0000000002.parquet", cpState(2))
		store.PutAt(LogDir+"00000000000000000002.checkpoint.0000000002.0000000002.parquet", nil, time.Unix(0, 0))
		seg, err := ListLog(context.Background(), store)
		if err != nil {
			t.Fatal(err)
		}
		if seg.CheckpointVersion != -1 {
			t.Errorf("a multi-part checkpoint with an empty part was used: %v", seg.Checkpoint)
		}
	})
}

// TestCompleteCheckpointInstances: files are grouped by checkpoint instance; an instance is
// usable only when it is claimed by exactly its files, once each.
func TestCompleteCheckpointInstances(t *testing.T) {
	f := func(name string) LogFile {
		lf := ParseLogName(name)
		lf.Key, lf.Size = LogDir+name, 1
		return lf
	}
	const v = "00000000000000000007"
	classic := f(v + ".checkpoint.parquet")
	classicShort := f("7.checkpoint.parquet")
	uuid := f(v + ".checkpoint." + cpUUID + ".json")
	p12, p22 := f(v+".checkpoint.0000000001.0000000002.parquet"), f(v+".checkpoint.0000000002.0000000002.parquet")
	p12short, p22short := f(v+".checkpoint.1.2.parquet"), f(v+".checkpoint.2.2.parquet")
	p13, p23, p33 := f(v+".checkpoint.0000000001.0000000003.parquet"), f(v+".checkpoint.0000000002.0000000003.parquet"), f(v+".checkpoint.0000000003.0000000003.parquet")
	for _, tc := range []struct {
		name      string
		files     []LogFile
		want      []LogFile // nil: no usable checkpoint
		ambiguous bool      // a rejection marked as contradicting files
	}{
		{"classic", []LogFile{classic}, []LogFile{classic}, false},
		{"UUID preferred to classic", []LogFile{classic, uuid}, []LogFile{uuid}, false},
		{"two files claim the classic checkpoint", []LogFile{classic, classicShort}, nil, true},
		{"an ambiguous classic beside a UUID", []LogFile{classic, classicShort, uuid}, []LogFile{uuid}, true},
		{"all parts", []LogFile{p22, p12}, []LogFile{p12, p22}, false},
		{"all parts, spelled differently", []LogFile{p12short, p22}, []LogFile{p12short, p22}, false},
		{"a part missing", []LogFile{p12}, nil, false},
		{"a part claimed twice", []LogFile{p12, p22, p12short}, nil, true},
		{"every part claimed twice", []LogFile{p12, p22, p12short, p22short}, nil, true},
		// As many files as parts, but not one of each: Spark's count alone would take it.
		{"one part twice, another missing", []LogFile{p12, p12short}, nil, true},
		{"a complete set beside an ambiguous one", []LogFile{p12, p22, p12short, p13, p23, p33}, []LogFile{p13, p23, p33}, true},
		{"classic beside an ambiguous set", []LogFile{p12, p22, p12short, classic}, []LogFile{classic}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, rejected := completeCheckpoint(tc.files)
			if keysOf(got) != keysOf(tc.want) {
				t.Errorf("chose %q, want %q", keysOf(got), keysOf(tc.want))
			}
			ambiguous := false
			for _, r := range rejected {
				ambiguous = ambiguous || r.ambiguous
			}
			if ambiguous != tc.ambiguous {
				t.Errorf("rejected %+v; want ambiguous=%v", rejected, tc.ambiguous)
			}
		})
	}
}

// TestAmbiguousCheckpointFallsBack: a multi-part checkpoint with a part claimed twice is not
// used; the reader falls back to an older checkpoint or the commits, and when neither is
// there refuses the table as corrupt, naming the files.
func TestAmbiguousCheckpointFallsBack(t *testing.T) {
	store := cpLog(t, 4)
	cpPut(t, store, "00000000000000000001.checkpoint.parquet", cpState(1))
	cpPut(t, store, "00000000000000000002.checkpoint.0000000001.0000000002.parquet", cpState(2))
	cpPut(t, store, "00000000000000000002.checkpoint.0000000002.0000000002.parquet", nil)
	// A stale part 1, without the adds: read, it would lose f0..f2.
	cpPut(t, store, "00000000000000000002.checkpoint.1.2.parquet", cpHeader())
	snap, live, err := cpLive(t, store)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Segment.CheckpointVersion != 1 || len(live) != 4 {
		t.Errorf("checkpoint %d, live %q; want the checkpoint of version 1, 4 live files", snap.Segment.CheckpointVersion, live)
	}
	store.Delete(context.Background(), []string{CommitKey(0), CommitKey(1), CommitKey(2), LogDir + "00000000000000000001.checkpoint.parquet"})
	_, err = ListLog(context.Background(), store)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "00000000000000000002.checkpoint.1.2.parquet") ||
		!strings.Contains(err.Error(), "00000000000000000002.checkpoint.0000000001.0000000002.parquet") {
		t.Errorf("got %v; want ErrCorrupt naming both claims on part 1", err)
	}
}

// TestCheckpointMustHoldProtocolAndMetadata: every checkpoint holds the protocol and metaData,
// a V2 one exactly one checkpointMetadata of its own version. A file without them is refused
// as corrupt, naming it, even when the commits after it carry a protocol and metaData (which
// once made it read as a table without files).
func TestCheckpointMustHoldProtocolAndMetadata(t *testing.T) {
	const classic = "00000000000000000002.checkpoint.parquet"
	const uuidJSON = "00000000000000000002.checkpoint." + cpUUID + ".json"
	const uuidParquet = "00000000000000000002.checkpoint." + cpUUID + ".parquet"
	const part1, part2 = "00000000000000000002.checkpoint.0000000001.0000000002.parquet", "00000000000000000002.checkpoint.0000000002.0000000002.parquet"
	cpMeta := func(v int64) *Action { return &Action{CheckpointMetadata: &CheckpointMetadata{Version: v}} }
	json := func(acts ...*Action) []byte {
		var lines []any
		for _, a := range acts {
			switch {
			case a.CheckpointMetadata != nil:
				lines = append(lines, map[string]any{"checkpointMetadata": a.CheckpointMetadata})
			case a.Protocol != nil:
				lines = append(lines, map[string]any{"protocol": a.Protocol})
			case a.Metadata != nil:
				lines = append(lines, map[string]any{"metaData": map[string]any{"id": a.Metadata.ID, "format": a.Metadata.Format, "schemaString": "{}",
					"partitionColumns": []string{}, "configuration": map[string]string{}}})
			case a.Add != nil:
				lines = append(lines, map[string]any{"add": a.Add})
			}
		}
		data, err := EncodeCommit(lines)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	state := cpState(2)
	header, adds := state[:2], state[2:]
	cat := func(parts ...[]*Action) []*Action {
		var out []*Action
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		files   map[string][]byte
		corrupt string // a phrase of the refusal; empty when the checkpoint is good
	}{
		{"V1 classic", map[string][]byte{classic: pqWrite(t, pqSeq(state))}, ""},
		{"V2 classic", map[string][]byte{classic: pqWrite(t, pqSeq(cat([]*Action{cpMeta(2)}, state)))}, ""},
		{"V2 UUID JSON", map[string][]byte{uuidJSON: json(cat([]*Action{cpMeta(2)}, state)...)}, ""},
		{"V2 UUID Parquet", map[string][]byte{uuidParquet: pqWrite(t, pqSeq(cat([]*Action{cpMeta(2)}, state)))}, ""},
		{"multi-part, header split over the parts", map[string][]byte{
			part1: pqWrite(t, pqSeq(cat(header[:1], adds[:1]))), part2: pqWrite(t, pqSeq(cat(header[1:], adds[1:])))}, ""},

		{"Parquet without rows", map[string][]byte{classic: pqWrite(t, pqSeq(nil))}, "neither a protocol nor a metaData"},
		{"only the adds", map[string][]byte{classic: pqWrite(t, pqSeq(adds))}, "neither a protocol nor a metaData"},
		{"no protocol", map[string][]byte{classic: pqWrite(t, pqSeq(cat(header[1:], adds)))}, "no protocol action"},
		{"no metaData", map[string][]byte{classic: pqWrite(t, pqSeq(cat(header[:1], adds)))}, "no metaData action"},
		{"JSON cut after its first line", map[string][]byte{uuidJSON: json(cpMeta(2))}, "neither a protocol nor a metaData"},
		{"JSON of whitespace", map[string][]byte{uuidJSON: []byte("\n \n")}, "neither a protocol nor a metaData"},
		{"UUID JSON without checkpointMetadata", map[string][]byte{uuidJSON: json(state...)}, "no checkpointMetadata"},
		{"UUID Parquet without checkpointMetadata", map[string][]byte{uuidParquet: pqWrite(t, pqSeq(state))}, "no checkpointMetadata"},
		{"two checkpointMetadata", map[string][]byte{uuidJSON: json(cat([]*Action{cpMeta(2), cpMeta(2)}, state)...)}, "2 checkpointMetadata"},
		{"checkpointMetadata of another version", map[string][]byte{classic: pqWrite(t, pqSeq(cat([]*Action{cpMeta(1)}, state)))}, "names version 1"},
		{"two protocols", map[string][]byte{classic: pqWrite(t, pqSeq(cat(header[:1], state)))}, "two protocol actions"},
		{"multi-part, a protocol in each part", map[string][]byte{
			part1: pqWrite(t, pqSeq(cat(header, adds[:1]))), part2: pqWrite(t, pqSeq(cat(header[:1], adds[1:])))}, "two protocol actions"},
		{"multi-part, no metaData in any part", map[string][]byte{
			part1: pqWrite(t, pqSeq(cat(header[:1], adds[:1]))), part2: pqWrite(t, pqSeq(adds[1:]))}, "no metaData action"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := cpLog(t, 4)
			// Version 3 carries a protocol and a metaData, as any protocol upgrade does: nothing
			// else would be found missing.
			data, err := EncodeCommit([]any{
				map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
				map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet"}, "schemaString": "{}",
					"partitionColumns": []string{}, "configuration": map[string]string{"delta.appendOnly": "false"}}},
				map[string]any{"add": map[string]any{"path": "f3.parquet", "size": 1, "modificationTime": 0, "dataChange": true}},
			})
			if err != nil {
				t.Fatal(err)
			}
			store.PutAt(CommitKey(3), data, time.Unix(0, 0))
			var names []string
			for name, data := range tc.files {
				store.PutAt(LogDir+name, data, time.Unix(0, 0))
				names = append(names, name)
			}
			snap, live, err := cpLive(t, store)
			if tc.corrupt == "" {
				if err != nil {
					t.Fatal(err)
				}
				if snap.Segment.CheckpointVersion != 2 || len(live) != 4 {
					t.Errorf("checkpoint %d, live %q; want the checkpoint of version 2, 4 live files", snap.Segment.CheckpointVersion, live)
				}
				return
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.corrupt) || !strings.Contains(err.Error(), "mem://checkpoints") {
				t.Fatalf("got %v (live %q); want ErrCorrupt naming the table and saying %q", err, live, tc.corrupt)
			}
			named := false
			for _, name := range names {
				named = named || strings.Contains(err.Error(), name)
			}
			if !named {
				t.Errorf("the refusal names no file of the checkpoint: %v", err)
			}
		})
	}
}

// TestDeletionVectorColumnFollowsTheCheckpointProtocol: the deletionVector column is required
// of a checkpoint written under a protocol with deletion vectors, whatever the current
// protocol; a checkpoint written before the table had them (no such column) stays readable
// after an upgrade.
func TestDeletionVectorColumnFollowsTheCheckpointProtocol(t *testing.T) {
	dvProtocol := &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors"}}
	upgrade, err := EncodeCommit([]any{map[string]any{"protocol": dvProtocol}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name              string
		checkpointHasDV   bool // the checkpoint's own protocol
		upgradedAfterward bool // a later commit upgrades the protocol to deletion vectors
		corrupt           bool
	}{
		{"written without deletion vectors, upgraded after", false, true, false},
		{"written without deletion vectors, never upgraded", false, false, false},
		{"written with deletion vectors", true, false, true},
		{"written with deletion vectors, upgraded again after", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := cpLog(t, 3)
			state := cpState(2)
			if tc.checkpointHasDV {
				state[0] = &Action{Protocol: dvProtocol}
			}
			// A checkpoint without the deletionVector column (as Delta Spark before 2.3 wrote).
			store.PutAt(LogDir+"00000000000000000002.checkpoint.parquet",
				pqRenameBytes(pqWrite(t, pqSeq(state)), "deletionVector", "deletionVectxr"), time.Unix(0, 0))
			if tc.upgradedAfterward {
				store.PutAt(CommitKey(3), upgrade, time.Unix(0, 0))
			}
			snap, live, err := cpLive(t, store)
			if tc.corrupt {
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "deletionVector") {
					t.Errorf("got %v (live %q); want ErrCorrupt for the missing deletionVector column", err, live)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if snap.Segment.CheckpointVersion != 2 || len(live) != 3 || snap.HasFeature("deletionVectors") != tc.upgradedAfterward {
				t.Errorf("checkpoint %d, live %q, deletion vectors %v", snap.Segment.CheckpointVersion, live, snap.HasFeature("deletionVectors"))
			}
		})
	}
}

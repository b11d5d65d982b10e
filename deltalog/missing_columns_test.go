package deltalog

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestMissingColumnsRule is the rule that decides whether a checkpoint file lacking the add or
// remove column holds none of those actions or is corrupt, one row per case.
func TestMissingColumnsRule(t *testing.T) {
	add, remove, both := []string{"add"}, []string{"remove"}, []string{"add", "remove"}
	for _, tc := range []struct {
		name    string
		facts   pqMissingFacts
		corrupt string // what the refusal says; "" when the file is read
	}{
		{"nothing missing", pqMissingFacts{unaccounted: 3, sidecars: 2}, ""},
		{"a part, every row accounted for (parquet_row_group_skipping)", pqMissingFacts{missing: both, filesHere: true}, ""},
		{"a part without remove, every row accounted for", pqMissingFacts{missing: remove, filesHere: true}, ""},
		{"a part, a row holding none of its actions", pqMissingFacts{missing: both, filesHere: true, unaccounted: 1, first: "row 1 of row group 0"}, "1 of its rows hold none"},
		{"a part without add, a row unaccounted", pqMissingFacts{missing: add, filesHere: true, unaccounted: 2, first: "row 0 of row group 1"}, "may have held an add lost"},
		{"a part listing sidecars", pqMissingFacts{missing: both, filesHere: true, sidecars: 1, checkpointMetadata: 1}, "holds 1 sidecar actions"},
		{"a classic checkpoint, every row accounted for", pqMissingFacts{missing: add}, ""},
		{"a classic checkpoint, a row unaccounted", pqMissingFacts{missing: add, unaccounted: 1, first: "row 4 of row group 0"}, "row 4 of row group 0"},
		{"a V2 checkpoint listing sidecars", pqMissingFacts{missing: both, sidecars: 2, checkpointMetadata: 1}, ""},
		{"a V2 checkpoint listing sidecars, rows unaccounted", pqMissingFacts{missing: both, sidecars: 2, checkpointMetadata: 1, unaccounted: 1}, ""},
		{"sidecars without checkpointMetadata", pqMissingFacts{missing: both, sidecars: 1}, "not a V2 checkpoint"},
		{"checkpointMetadata without sidecars, a row unaccounted", pqMissingFacts{missing: both, checkpointMetadata: 1, unaccounted: 1}, "hold none of these actions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := pqMissingColumnsRule(tc.facts)
			if tc.corrupt == "" {
				if err != nil {
					t.Errorf("got %v, want the file read", err)
				}
				return
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.corrupt) {
				t.Errorf("got %v, want ErrCorrupt saying %q", err, tc.corrupt)
			}
		})
	}
}

// TestMultiPartCheckpointWithoutFileColumns is delta-kernel-rs's parquet_row_group_skipping
// table as Spark wrote it: a checkpoint of 5 parts whose parts 1 and 5 hold one txn row each
// and have only the txn column, the others the full schema with the metaData, the protocol and
// the one add. Spark reads it; so does this program, with the add live. The same parts with a
// row that holds no txn (it could have been an add) are refused, naming the part.
func TestMultiPartCheckpointWithoutFileColumns(t *testing.T) {
	type txn struct {
		AppID   *string `parquet:"appId"`
		Version *int64  `parquet:"version"`
	}
	type txnOnly struct {
		Txn *txn `parquet:"txn"`
	}
	part := func(i int) string {
		return fmt.Sprintf("00000000000000000002.checkpoint.%010d.0000000005.parquet", i)
	}
	state := cpState(2) // protocol, metaData, f0, f1, f2
	tx := func(app string) txnOnly { return txnOnly{&txn{pqPtr(app), pqPtr[int64](4390)}} }
	for _, tc := range []struct {
		name         string
		part1, part5 []txnOnly
		corrupt      string // the part named; "" when read
	}{
		{"as Spark wrote it", []txnOnly{tx("a")}, []txnOnly{tx("b")}, ""},
		{"part 1 with a row holding no txn", []txnOnly{tx("a"), {}}, []txnOnly{tx("b")}, part(1)},
		{"part 5 with a row holding no txn", []txnOnly{tx("a")}, []txnOnly{{}, tx("b")}, part(5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := cpLog(t, 3)
			store.PutAt(LogDir+part(1), pqWriteRaw(t, tc.part1...), time.Unix(0, 0))
			cpPut(t, store, part(2), state[1:2]) // metaData
			cpPut(t, store, part(3), state[:1])  // protocol
			cpPut(t, store, part(4), state[2:])  // the adds
			store.PutAt(LogDir+part(5), pqWriteRaw(t, tc.part5...), time.Unix(0, 0))
			snap, live, err := cpLive(t, store)
			if tc.corrupt != "" {
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.corrupt) || !strings.Contains(err.Error(), "no add or remove column") {
					t.Fatalf("got %v (live %q); want ErrCorrupt naming %s and its missing columns", err, live, tc.corrupt)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if snap.Segment.CheckpointVersion != 2 || strings.Join(live, " ") != "f0.parquet f1.parquet f2.parquet" {
				t.Errorf("checkpoint %d, live %q; want the checkpoint of version 2 and f0, f1, f2 live", snap.Segment.CheckpointVersion, live)
			}
		})
	}
}

package streaming

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// memCopy copies a checkpoint folder into memory, less the keys drop names.
func memCopy(t *testing.T, dir string, drop ...string) *mem.Store {
	t.Helper()
	s := mem.New("file://" + dir)
	skip := map[string]bool{}
	for _, d := range drop {
		skip[d] = true
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if skip[filepath.ToSlash(rel)] {
			return nil
		}
		b, err := os.ReadFile(p)
		s.PutAt(filepath.ToSlash(rel), b, time.Unix(0, 0))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type sparkCase struct {
	name  string
	dir   string
	drop  []string
	id    string
	want  Checkpoint
	error error
}

// sparkCases are the expectations on checkpoints Spark wrote (see testdata/README.md).
func sparkCases(single, union, tableID, otherID string, latest int64) []sparkCase {
	return []sparkCase{
		{name: "single query, all committed", dir: single, id: tableID,
			want: Checkpoint{Version: latest + 1, BatchID: 5, File: "offsets/5", LatestBatch: 5, Committed: true, Sources: 1}},
		{name: "single query, last batch not committed", dir: single, id: tableID, drop: []string{"commits/5", "commits/.5.crc"},
			want: Checkpoint{Version: latest, BatchID: 4, File: "offsets/4", LatestBatch: 5, Sources: 1}},
		{name: "union, the table's source", dir: union, id: tableID,
			want: Checkpoint{Version: latest + 1, BatchID: 5, File: "offsets/5", LatestBatch: 5, Committed: true, Sources: 1}},
		{name: "union, the other table's source", dir: union, id: otherID,
			want: Checkpoint{Version: 1, BatchID: 5, File: "offsets/5", LatestBatch: 5, Committed: true, Sources: 1}},
		{name: "union, inside the initial snapshot", dir: union, id: tableID, drop: []string{"offsets/5", "offsets/.5.crc", "commits/5", "commits/.5.crc"},
			want: Checkpoint{Version: latest, BatchID: 4, File: "offsets/4", LatestBatch: 4, Committed: true, InitialSnapshot: true, Sources: 1}},
		{name: "another table's id", dir: single, id: "00000000-0000-4000-8000-000000000000", error: ErrOtherTable},
	}
}

func runSparkCases(t *testing.T, cases []sparkCase) {
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(context.Background(), memCopy(t, tt.dir, tt.drop...), tt.id)
			if tt.error != nil {
				if !errors.Is(err, tt.error) {
					t.Fatalf("Read: %+v, %v; want %v", got, err, tt.error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Read (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSparkCheckpoints reads the checkpoints Spark 4.2.0 with Delta 4.4.0 wrote.
func TestSparkCheckpoints(t *testing.T) {
	const dir = "testdata/spark-4.2.0-delta-4.4.0"
	runSparkCases(t, sparkCases(dir+"/single", dir+"/union", "72a15687-10ad-4337-ac0d-f752a18da3d7", "e866d0c9-570d-4d44-9cea-3c79d64e7d6f", 5))
	// The same, on disk, through the local store (Hadoop's .crc files beside).
	st, err := local.New(dir + "/single")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Read(context.Background(), st, "72a15687-10ad-4337-ac0d-f752a18da3d7"); err != nil || got.Version != 6 {
		t.Errorf("Read on disk: %+v, %v; want version 6", got, err)
	}
}

// TestConformance reads the checkpoints the conformance harness wrote at this run
// (conformance/test_readers.py); skipped without DELTAVACUUM_READERS_FIXTURES.
func TestConformance(t *testing.T) {
	dir := os.Getenv("DELTAVACUUM_READERS_FIXTURES")
	if dir == "" {
		t.Skip("DELTAVACUUM_READERS_FIXTURES is not set: run conformance/test_readers.py")
	}
	b, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Streaming struct {
			TableID       string `json:"table_id"`
			OtherID       string `json:"other_id"`
			LatestVersion int64  `json:"latest_version"`
			Single        string `json:"single"`
			Union         string `json:"union"`
		} `json:"streaming"`
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	s := exp.Streaming
	runSparkCases(t, sparkCases(s.Single, s.Union, s.TableID, s.OtherID, s.LatestVersion))
}

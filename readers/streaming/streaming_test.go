package streaming

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage/mem"
)

const (
	tableID = "3bffe7c2-e334-4419-a150-f6f47b565c78"
	otherID = "0a1b2c3d-0000-4000-8000-000000000000"
	meta    = `{"batchWatermarkMs":0,"batchTimestampMs":1710305994254,"conf":{"spark.sql.shuffle.partitions":"2"}}`
)

func offset(id string, version, index int64, initial bool) string {
	return fmt.Sprintf(`{"sourceVersion":1,"reservoirId":%q,"reservoirVersion":%d,"index":%d,"isStartingVersion":%v}`, id, version, index, initial)
}

func offsets(sources ...string) string {
	return "v1\n" + meta + "\n" + strings.Join(sources, "\n")
}

var at = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// TestRead: which version a query pins, from its offsets and commits.
func TestRead(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  Checkpoint
	}{
		{"latest batch committed: the next starts at its end", map[string]string{
			"offsets/0": offsets(offset(tableID, 2, 0, true)),
			"offsets/1": offsets(offset(tableID, 5, 3, false)),
			"commits/0": "v1\n{}", "commits/1": "v1\n{}",
		}, Checkpoint{Version: 5, BatchID: 1, File: "offsets/1", LatestBatch: 1, Committed: true, Sources: 1}},
		{"latest batch planned, not committed: it runs again from the previous end", map[string]string{
			"offsets/0": offsets(offset(tableID, 2, 0, true)),
			"offsets/1": offsets(offset(tableID, 5, 3, false)),
			"offsets/2": offsets(offset(tableID, 9, -1, false)),
			"commits/0": "v1\n{}", "commits/1": "v1\n{}",
		}, Checkpoint{Version: 5, BatchID: 1, File: "offsets/1", LatestBatch: 2, Sources: 1}},
		{"several batches planned after the last commit (asynchronous progress tracking)", map[string]string{
			"offsets/3": offsets(offset(tableID, 5, 3, false)),
			"offsets/4": offsets(offset(tableID, 7, -1, false)),
			"offsets/5": offsets(offset(tableID, 9, -1, false)),
			"commits/3": "v1\n{}",
		}, Checkpoint{Version: 5, BatchID: 3, File: "offsets/3", LatestBatch: 5, Sources: 1}},
		{"nothing committed, several batches planned, inside the initial snapshot", map[string]string{
			"offsets/0": offsets(offset(tableID, 4, 7, true)),
			"offsets/1": offsets(offset(tableID, 4, 9, true)),
		}, Checkpoint{Version: 4, BatchID: 0, File: "offsets/0", LatestBatch: 1, InitialSnapshot: true, Sources: 1}},
		{"first batch planned inside the initial snapshot", map[string]string{
			"offsets/0": offsets(offset(tableID, 4, 7, true)),
		}, Checkpoint{Version: 4, BatchID: 0, File: "offsets/0", LatestBatch: 0, InitialSnapshot: true, Sources: 1}},
		{"still in the initial snapshot", map[string]string{
			"offsets/0": offsets(offset(tableID, 4, 7, true)), "commits/0": "v1\n{}",
		}, Checkpoint{Version: 4, BatchID: 0, File: "offsets/0", LatestBatch: 0, Committed: true, InitialSnapshot: true, Sources: 1}},
		{"old batches purged (minBatchesToRetain)", map[string]string{
			"offsets/100": offsets(offset(tableID, 40, 0, false)),
			"offsets/101": offsets(offset(tableID, 41, 0, false)),
			"commits/100": "v1\n{}", "commits/101": "v1\n{}",
		}, Checkpoint{Version: 41, BatchID: 101, File: "offsets/101", LatestBatch: 101, Committed: true, Sources: 1}},
		{"batch ids sort as numbers", map[string]string{
			"offsets/9":  offsets(offset(tableID, 9, 0, false)),
			"offsets/10": offsets(offset(tableID, 10, 0, false)),
			"commits/9":  "v1\n{}", "commits/10": "v1\n{}",
		}, Checkpoint{Version: 10, BatchID: 10, File: "offsets/10", LatestBatch: 10, Committed: true, Sources: 1}},
		{"a union with another table: the table's source", map[string]string{
			"offsets/0": offsets(offset(otherID, 1, 0, false), offset(tableID, 6, 2, false)),
			"commits/0": "v1\n{}",
		}, Checkpoint{Version: 6, BatchID: 0, File: "offsets/0", LatestBatch: 0, Committed: true, Sources: 1}},
		{"the table read twice (a self-join): the older", map[string]string{
			"offsets/0": offsets(offset(tableID, 8, 2, false), offset(tableID, 6, 2, false)),
			"commits/0": "v1\n{}",
		}, Checkpoint{Version: 6, BatchID: 0, File: "offsets/0", LatestBatch: 0, Committed: true, Sources: 2}},
		{"a source without an offset yet, a Kafka source", map[string]string{
			"offsets/0": offsets("-", `{"topic":{"0":42}}`, offset(tableID, 3, 0, false)),
			"commits/0": "v1\n{}",
		}, Checkpoint{Version: 3, BatchID: 0, File: "offsets/0", LatestBatch: 0, Committed: true, Sources: 1}},
		{"format 3 with a metadata-change index", map[string]string{
			"offsets/0": offsets(`{"sourceVersion":3,"reservoirId":"` + tableID + `","reservoirVersion":12,"index":-20,"isStartingVersion":false}`),
			"commits/0": "v1\n{}",
		}, Checkpoint{Version: 12, BatchID: 0, File: "offsets/0", LatestBatch: 0, Committed: true, Sources: 1}},
		{"Hadoop's checksums and temporary files beside", map[string]string{
			"offsets/0": offsets(offset(tableID, 3, 0, false)), "offsets/.0.crc": "x", "offsets/.1.tmp": "x",
			"offsets/01": "not a batch", "commits/0": "v1\n{}", "commits/.0.crc": "x",
		}, Checkpoint{Version: 3, BatchID: 0, File: "offsets/0", LatestBatch: 0, Committed: true, Sources: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mem.New("file:///checkpoints/q")
			for k, v := range tt.files {
				s.PutAt(k, []byte(v), at)
			}
			got, err := Read(context.Background(), s, tableID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Read (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadHostile: a checkpoint that does not say what the query reads is an error.
func TestReadHostile(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		want    error
		message string // the error contains it
	}{
		{"empty folder", map[string]string{}, ErrCheckpoint, "no offsets/"},
		{"commits only", map[string]string{"commits/0": "v1\n{}"}, ErrCheckpoint, "no offsets/"},
		{"another table", map[string]string{"offsets/0": offsets(offset(otherID, 3, 0, false)), "commits/0": "v1\n{}"}, ErrOtherTable, otherID},
		{"empty offsets file", map[string]string{"offsets/0": "", "commits/0": "v1\n{}"}, ErrCheckpoint, "offsets/0"},
		{"no source line", map[string]string{"offsets/0": "v1\n" + meta, "commits/0": "v1\n{}"}, ErrCheckpoint, "lines"},
		{"another log version", map[string]string{"offsets/0": "v2\n" + meta + "\n" + offset(tableID, 1, 0, false), "commits/0": "v1\n{}"}, ErrCheckpoint, `"v2"`},
		{"truncated source JSON", map[string]string{"offsets/0": offsets(`{"sourceVersion":1,"reservoirId":"` + tableID + `","reservoirVers`), "commits/0": "v1\n{}"}, ErrCheckpoint, "source 0"},
		{"no reservoirVersion", map[string]string{"offsets/0": offsets(`{"sourceVersion":1,"reservoirId":"` + tableID + `","index":0,"isStartingVersion":false}`), "commits/0": "v1\n{}"}, ErrCheckpoint, "without"},
		{"a version that is a string", map[string]string{"offsets/0": offsets(`{"sourceVersion":1,"reservoirId":"` + tableID + `","reservoirVersion":"5","index":0,"isStartingVersion":false}`), "commits/0": "v1\n{}"}, ErrCheckpoint, "source 0"},
		{"a negative version", map[string]string{"offsets/0": offsets(offset(tableID, -4, 0, false)), "commits/0": "v1\n{}"}, ErrCheckpoint, "reservoirVersion -4"},
		{"sourceVersion 2 (reserved)", map[string]string{"offsets/0": offsets(`{"sourceVersion":2,"reservoirId":"` + tableID + `","reservoirVersion":5,"index":0,"isStartingVersion":false}`), "commits/0": "v1\n{}"}, ErrCheckpoint, "format 2"},
		{"sourceVersion 4 (unknown)", map[string]string{"offsets/0": offsets(`{"sourceVersion":4,"reservoirId":"` + tableID + `","reservoirVersion":5,"index":0,"isStartingVersion":false}`), "commits/0": "v1\n{}"}, ErrCheckpoint, "format 4"},
		{"duplicate key", map[string]string{"offsets/0": offsets(`{"sourceVersion":1,"reservoirId":"` + tableID + `","reservoirVersion":9,"reservoirVersion":1,"index":0,"isStartingVersion":false}`), "commits/0": "v1\n{}"}, ErrCheckpoint, "source 0"},
		{"no Delta source at all", map[string]string{"offsets/0": offsets(`{"topic":{"0":42}}`, "-"), "commits/0": "v1\n{}"}, ErrCheckpoint, "no source has a Delta offset"},
		{"first batch not finished, started from a startingVersion", map[string]string{"offsets/0": offsets(offset(tableID, 5, 0, false))}, ErrCheckpoint, "startingVersion"},
		{"the previous batch's offsets missing", map[string]string{"offsets/5": offsets(offset(tableID, 5, 0, false)), "commits/4": "v1\n{}"}, ErrCheckpoint, "offsets/4"},
		{"a commit without its offsets", map[string]string{"offsets/0": offsets(offset(tableID, 5, 0, false)), "commits/0": "v1\n{}", "commits/1": "v1\n{}"}, ErrCheckpoint, "commits/1"},
		{"an absurdly large offsets file", map[string]string{"offsets/0": offsets(offset(tableID, 5, 0, false)) + "\n" + strings.Repeat(" ", maxOffsetFileBytes), "commits/0": "v1\n{}"}, ErrCheckpoint, "more than"},
		{"a folder named like a batch", map[string]string{"offsets/0/x": "", "commits/0": "v1\n{}"}, ErrCheckpoint, "no offsets/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mem.New("file:///checkpoints/q")
			for k, v := range tt.files {
				s.PutAt(k, []byte(v), at)
			}
			got, err := Read(context.Background(), s, tableID)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Read: %+v, %v; want an error matching %v", got, err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Errorf("Read: %v; want it to say %q", err, tt.message)
			}
		})
	}
	if _, err := Read(context.Background(), mem.New("file:///q"), ""); err == nil {
		t.Error("Read with no table id: no error")
	}
}

package deltalog_test

import (
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/checkpointwriter"
)

func init() {
	deltalog.WriteCheckpointForTest = checkpointwriter.Write
	deltalog.CheckpointRowGroupRows = checkpointwriter.RowGroupRows
}

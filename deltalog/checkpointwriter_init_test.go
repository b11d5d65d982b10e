package deltalog_test

import (
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/checkpointwriter"
)

func init() {
	deltalog.WriteCheckpointForTest = checkpointwriter.Write
	deltalog.WriteCompressedCheckpointForTest = checkpointwriter.WriteCompressed
	deltalog.CheckpointRowGroupRows = checkpointwriter.RowGroupRows
}

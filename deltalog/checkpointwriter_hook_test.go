package deltalog

import (
	"io"
	"iter"

	"github.com/parquet-go/parquet-go/compress"
)

// The tests of this package write checkpoints with internal/checkpointwriter, which imports
// deltalog: importing it here would be an import cycle. The external test package imports it
// instead and sets these before any test runs (checkpointwriter_init_test.go); both files are
// compiled into the same test binary only.
var (
	WriteCheckpointForTest           func(w io.Writer, actions iter.Seq[*Action]) error
	WriteCompressedCheckpointForTest func(w io.Writer, actions iter.Seq[*Action], codec compress.Codec) error
	CheckpointRowGroupRows           int
)

// ReportCPU is reportCPU (benchcpu_*_test.go) for the benchmarks of the external test package.
var ReportCPU = reportCPU

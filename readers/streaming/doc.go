// Package streaming reads the checkpoint of a Spark Structured Streaming query that reads a
// Delta table, and says from which Delta version the query will read after a restart: the
// version VACUUM must keep every later removal of. It only reads the checkpoint, through
// storage.Store; it never decides what is deleted and never writes.
//
// # What a checkpoint holds
//
// Spark's offset log (offsets/<batchId>) records, for each micro-batch, the end offset of
// every source: a version line ("v1"), a line of batch metadata (JSON), then one line per
// source in the order of the query's sources, "-" for a source without an offset yet. The
// commit log (commits/<batchId>) records the batches that finished. The Delta source's offset
// (delta-io/delta, DeltaSourceOffset.scala) is
//
//	{"sourceVersion":1,"reservoirId":"<table id>","reservoirVersion":N,"index":I,"isStartingVersion":B}
//
// sourceVersion 1 or 3 (2 is reserved, higher ones unknown to this reader and refused, as
// Delta refuses them); reservoirId is the table's metaData.id; reservoirVersion the version
// being read; index the position in that version's files (-1: before all of them);
// isStartingVersion, despite its name, says whether the offset is inside the initial
// snapshot of the table at that version.
//
// # Which version is pinned
//
// Let N be the newest batch in offsets/. When commits/N exists, batch N finished and the
// next batch starts at N's end offset: the query reads from its reservoirVersion on (the
// changes of that version and later, or, inside an initial snapshot, the snapshot at that
// version). When commits/N is missing, batch N was planned and not finished: after a restart
// Spark runs it again from its start, which is batch N-1's end offset, so the pin is that
// offset's reservoirVersion; with asynchronous progress tracking several planned batches may
// wait for their commits, and the restart starts at the end of the newest committed one.
// Nothing committed at all: batch 0 planned and not finished starts where the query was
// told to start: inside an initial snapshot that is the snapshot at offsets/0's version; with
// startingVersion or startingTimestamp the checkpoint does not say where, and Read fails
// rather than guess.
//
// Several sources may read the table (a union, a self-join): the oldest of their versions is
// pinned, outside the initial snapshot when one source at it reads its changes; with nothing
// committed, every source must be inside an initial snapshot (another's start is not recorded). Sources that read other tables are skipped when at least one reads this one; a
// checkpoint whose Delta sources all read other tables is a misconfiguration and an error
// naming the ids. Everything unreadable (no offsets, a garbled line, an unknown sourceVersion,
// a missing previous batch, a commit without its offsets) is an error: the run must fail
// closed.
package streaming

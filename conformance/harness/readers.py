"""Fixtures of the readers packages (issue 34), written by the real engines:

- a Structured Streaming checkpoint of a query reading a Delta table (Spark), and of a query
  reading the union of two tables;
- Iceberg metadata written by pyiceberg over a Delta table's own data files, as XTable and
  Fabric do: a metadata/ folder in the table root, add_files of the files of some Delta
  versions, the current Iceberg snapshot several commits behind Delta.

Each writer returns what the Go tests must find, as a JSON-able dict; test_readers.py writes
it beside the fixtures and runs the Go tests on them (DELTAVACUUM_READERS_FIXTURES).
"""

from __future__ import annotations

import json
import os
import shutil


def _table_id(path: str) -> str:
    """metaData.id of a Delta table, from its first commit."""
    with open(os.path.join(path, "_delta_log", "00000000000000000000.json")) as f:
        for line in f:
            a = json.loads(line)
            if "metaData" in a:
                return a["metaData"]["id"]
    raise AssertionError(f"{path}: no metaData in commit 0")


def _append(session, path: str, start: int, n: int = 3) -> None:
    session.range(start, start + n, numPartitions=1).write.format("delta").mode("append").save(path)


def streaming_checkpoints(session, work: str) -> dict:
    """A query reading table t (maxFilesPerTrigger 1: one batch per file) run to the end of
    the table, three more commits, run again; and a query reading the union of t and u."""
    t = os.path.join(work, "stream_t")
    u = os.path.join(work, "stream_u")
    for i in range(3):
        _append(session, t, 10 * i)
    _append(session, u, 100)
    cp = os.path.join(work, "checkpoints", "single")
    cp2 = os.path.join(work, "checkpoints", "union")
    sink = os.path.join(work, "sinks")

    def run(checkpoint: str, df) -> None:
        q = (df.writeStream.format("delta").option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start(os.path.join(sink, os.path.basename(checkpoint))))
        q.awaitTermination()

    read_t = lambda: session.readStream.format("delta").option("maxFilesPerTrigger", 1).load(t)  # noqa: E731
    run(cp, read_t())
    for i in range(3, 6):
        _append(session, t, 10 * i)
    run(cp, read_t())
    run(cp2, read_t().unionByName(session.readStream.format("delta").load(u)))
    # The version the table is at, for the tests' expectations.
    from delta.tables import DeltaTable
    latest = DeltaTable.forPath(session, t).history(1).collect()[0]["version"]
    return {"table": t, "table_id": _table_id(t), "other_id": _table_id(u), "latest_version": latest,
            "single": cp, "union": cp2}


def iceberg_over_delta(session, work: str) -> dict:
    """A Delta table (appends, OPTIMIZE, DELETE) with Iceberg metadata over its own data files:
    snapshot 1 holds the files of Delta version 1, snapshot 2 (current) those of version 3,
    while Delta goes on to version 5. The current snapshot records XTable's mark of the Delta
    version it was converted from, as XTable does."""
    import pyarrow.parquet as pq
    from pyiceberg.catalog.sql import SqlCatalog

    path = os.path.join(work, "iceberg_over_delta")
    for i in range(2):
        _append(session, path, 10 * i)                       # versions 0, 1
    _append(session, path, 20)                               # version 2
    session.sql(f"OPTIMIZE delta.`{path}`")                  # version 3
    _append(session, path, 30)                               # version 4
    session.sql(f"DELETE FROM delta.`{path}` WHERE id = 31")  # version 5

    def files_at(version: int) -> list[str]:
        df = session.read.format("delta").option("versionAsOf", version).load(path)
        return sorted(df.inputFiles())

    at1, at3 = files_at(1), files_at(3)
    catalog = SqlCatalog("readers", uri=f"sqlite:///{os.path.join(work, 'iceberg_catalog.db')}",
                         warehouse=f"file://{work}")
    catalog.create_namespace("ns")
    schema = pq.read_schema(at1[0].removeprefix("file:"))
    table = catalog.create_table("ns.t", schema=schema, location=f"file://{path}")
    table.add_files([p.removeprefix("file:") for p in at1])
    mark = json.dumps({"lastInstantSynced": "2026-01-02T03:04:05Z", "instantsToConsiderForNextSync": [],
                       "version": 0, "sourceTableFormat": "DELTA", "sourceIdentifier": "3"})
    with table.transaction() as tx:
        tx.delete(delete_filter="true")  # a replace: the files of version 3 only
        tx.add_files([p.removeprefix("file:") for p in at3], snapshot_properties={"XTABLE_METADATA": mark})
    table = catalog.load_table("ns.t")
    snap = table.current_snapshot()
    rel = lambda p: os.path.relpath(p.removeprefix("file:"), path)  # noqa: E731
    return {
        "table": path,
        "metadata_file": rel(table.metadata_location),
        "snapshot_id": snap.snapshot_id,
        "snapshot_ms": snap.timestamp_ms,
        "manifest_list": rel(snap.manifest_list),
        "data_files": sorted(rel(p) for p in at3),
        "converted_version": 3,
        "latest_version": 5,
    }


def copy_checkpoint(src: str, dst: str) -> None:
    """The files of a checkpoint the Go package reads (offsets, commits, metadata), Hadoop's
    checksums included, without the sink's data."""
    for sub in ("offsets", "commits"):
        shutil.copytree(os.path.join(src, sub), os.path.join(dst, sub))
    shutil.copy(os.path.join(src, "metadata"), os.path.join(dst, "metadata"))

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
import time
import urllib.parse


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


# --- End to end (test_readers_e2e.py): the readers as the real engines use them, after a
# deltavacuum VACUUM. Every table here has deletion vectors off, so that a DELETE removes the
# file it rewrites and one commit adds each file (numPartitions=1).

def create(session, path: str) -> None:
    session.sql(f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta "
                "TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')").collect()


def write(session, path: str, start: int, mode: str = "append", n: int = 3) -> None:
    session.range(start, start + n, numPartitions=1).write.format("delta").mode(mode).save(path)


def ids(session, path: str, version: int | None = None) -> list[int]:
    """The ids of a version (the latest by default), read from the data files."""
    r = session.read.format("delta")
    if version is not None:
        r = r.option("versionAsOf", version)
    return sorted(row[0] for row in r.load(path).collect())


def files_at(session, path: str, version: int) -> list[str]:
    """The data files of a version, as keys relative to the table root."""
    df = session.read.format("delta").option("versionAsOf", version).load(path)
    return sorted(os.path.relpath(p.removeprefix("file:"), path) for p in df.inputFiles())


def adds(path: str) -> dict[int, list[str]]:
    """The data files each commit adds, as keys relative to the table root (the log's paths
    are URI-encoded; the keys are the names on disk)."""
    out: dict[int, list[str]] = {}
    log = os.path.join(path, "_delta_log")
    for name in sorted(os.listdir(log)):
        if len(name) == 25 and name.endswith(".json"):
            with open(os.path.join(log, name)) as f:
                acts = [json.loads(line) for line in f if line.strip()]
            out[int(name[:20])] = sorted(urllib.parse.unquote(a["add"]["path"]) for a in acts if "add" in a)
    return out


def stream_options(session, path: str, **options: str):
    """The streaming read of the tests: a Delta source that skips the commits that rewrite
    rows (OPTIMIZE has dataChange false and is skipped anyway; DELETE needs skipChangeCommits),
    so that only the files of appends are read."""
    r = session.readStream.format("delta").option("skipChangeCommits", "true")
    for k, v in options.items():
        r = r.option(k, v)
    return r.load(path)


def stop_after_first_batch(session, path: str, checkpoint: str, sink: str) -> None:
    """Starts the query reading path one file per batch (maxFilesPerTrigger 1) and stops it
    once its first batch is committed: the checkpoint is inside the table's initial snapshot
    (isStartingVersion true, index 0), the snapshot's other files still to read. The trigger
    (once an hour) starts no second batch meanwhile."""
    q = (stream_options(session, path, maxFilesPerTrigger="1").writeStream.format("delta")
         .option("checkpointLocation", checkpoint).trigger(processingTime="1 hour").start(sink))
    try:
        deadline = time.time() + 300
        while not q.recentProgress:
            if q.exception() is not None or time.time() > deadline:
                raise AssertionError(f"the query's first batch did not finish: {q.exception()}")
            time.sleep(0.2)
    finally:
        q.stop()


def run_stream(session, path: str, checkpoint: str, sink: str) -> None:
    """Runs the query reading path into the Delta table sink until it has read everything
    (availableNow), and stops it. Raises what the query failed with."""
    q = (stream_options(session, path).writeStream.format("delta")
         .option("checkpointLocation", checkpoint).trigger(availableNow=True).start(sink))
    q.awaitTermination()


def reader_base(session, work: str) -> dict:
    """The table the Iceberg, streaming and pin tests copy, with a stopped streaming query:

        v0 CREATE          (deletion vectors off)
        v1 append 0..2     fa
        v2 overwrite 10..12  fb (removes fa)
        v3 append 20..22   fc
           the query reads the table to its end (10..12, 20..22) and stops: it reads from v4 on
        v4 append 30..32   fd   (the version the Iceberg metadata is converted from, the pin)
        v5 OPTIMIZE        o    (removes fb, fc, fd)
        v6 append 40..42   fe
        v7 DELETE id = 41  fe2  (removes fe)

    A reader of v4 needs fb, fc, fd (removed at v5) and, reading on, fe; fa was removed at v2,
    before it, so a VACUUM with retention 0 deletes it whatever reads the table."""
    t = os.path.join(work, "table")
    cp = os.path.join(work, "checkpoint")
    sink = os.path.join(work, "sink")
    create(session, t)
    write(session, t, 0)
    write(session, t, 10, mode="overwrite")
    write(session, t, 20)
    run_stream(session, t, cp, sink)
    write(session, t, 30)
    session.sql(f"OPTIMIZE delta.`{t}`").collect()
    write(session, t, 40)
    session.sql(f"DELETE FROM delta.`{t}` WHERE id = 41").collect()
    a = adds(t)
    assert [len(a[v]) for v in range(8)] == [0, 1, 1, 1, 1, 1, 1, 1], a
    files = {"fa": a[1][0], "fb": a[2][0], "fc": a[3][0], "fd": a[4][0], "o": a[5][0], "fe": a[6][0],
             "fe2": a[7][0]}
    r = lambda a, b: list(range(a, b))  # noqa: E731
    expect = {0: [], 1: r(0, 3), 2: r(10, 13), 3: r(10, 13) + r(20, 23)}
    expect[4] = expect[5] = expect[3] + r(30, 33)
    expect[6] = expect[4] + r(40, 43)
    expect[7] = [i for i in expect[6] if i != 41]
    assert ids(session, t) == expect[7] and ids(session, sink) == expect[3]
    return {"table": t, "checkpoint": cp, "sink": sink, "files": files, "ids": expect,
            "sink_ids": expect[3]}


def other_table(session, work: str) -> dict:
    """A second table (another id): v0 append 0..2 (fa), v1 overwrite 10..12 (removes fa), and
    a streaming query that read it to its end and stopped (its own checkpoint)."""
    t = os.path.join(work, "other")
    cp = os.path.join(work, "other_checkpoint")
    write(session, t, 0)
    write(session, t, 10, mode="overwrite")
    run_stream(session, t, cp, os.path.join(work, "other_sink"))
    a = adds(t)
    return {"table": t, "checkpoint": cp, "files": {"fa": a[0][0], "fb": a[1][0]}}


def clone_warehouse(session, work: str, layout: str = "spark") -> dict:
    """A warehouse folder with a table and two shallow clones of it (Spark's SHALLOW CLONE):

        src v0 append 0..2 fa; v1 overwrite 10..12 fb; v2 overwrite 20..22 fc
        c1 = SHALLOW CLONE src VERSION AS OF 1   (names fb)
        c2 = SHALLOW CLONE src                   (at v2: names fc)
        src v3 overwrite 30..32 fd

    Only the clones' logs name fb and fc now; nothing names fa. Each version is one partition
    of p ('a b', 'c%d', 'e:f', 'g'), so the clones' absolute paths are URI-encoded twice over
    (p=c%2525d). layout "spark": a Spark warehouse whose folder's name has a space and a '%20',
    src and c2 in the default database's place (<root>/<table>), c1 in a database's
    (<root>/db1.db/<table>); "lakehouse": a Fabric lakehouse with schemas (src and c1 in
    Tables/dbo/, c2 in Tables/sales/)."""
    wh = os.path.join(work, "ware house%20x" if layout == "spark" else "warehouse")
    if layout == "spark":
        src, c1, c2 = (os.path.join(wh, "src"), os.path.join(wh, "db1.db", "c1"), os.path.join(wh, "c2"))
        name = src
    else:
        assert layout == "lakehouse", layout
        tables = os.path.join(wh, "Tables")
        src, c1, c2 = (os.path.join(tables, "dbo", "src"), os.path.join(tables, "dbo", "c1"),
                       os.path.join(tables, "sales", "c2"))
        name = "dbo.src"
    def part(start: int, p: str, mode: str = "overwrite") -> None:
        (session.range(start, start + 3, numPartitions=1).selectExpr("id", f"'{p}' AS p")
         .write.format("delta").partitionBy("p").mode(mode).save(src))

    part(0, "a b", mode="append")
    part(10, "c%d")
    part(20, "e:f")
    session.sql(f"CREATE TABLE delta.`{c1}` SHALLOW CLONE delta.`{src}` VERSION AS OF 1").collect()
    session.sql(f"CREATE TABLE delta.`{c2}` SHALLOW CLONE delta.`{src}`").collect()
    part(30, "g")
    a = adds(src)
    assert [len(a[v]) for v in range(4)] == [1, 1, 1, 1], a
    return {"warehouse": wh, "src": src, "name": name, "c1": c1, "c2": c2,
            "files": {"fa": a[0][0], "fb": a[1][0], "fc": a[2][0], "fd": a[3][0]}}


def uniform_base(session, work: str) -> dict:
    """A table with UniForm (Iceberg) enabled as Delta Spark enables it: column mapping by name,
    IcebergCompatV2, delta.universalFormat.enabledFormats = iceberg (data files under random
    prefixes, with Parquet field ids). Delta's Iceberg converter (io.delta:delta-iceberg) is not
    on Maven Central for Delta 4.4.0, so Spark writes no Iceberg metadata: the test writes it
    with pyiceberg, as UniForm would (table property delta-version).

        v0 CREATE          v1 append 0..2 fa     v2 overwrite 10..12 fb (removes fa)
        v3 append 20..22 fc  (the version converted)
        v4 OPTIMIZE o (removes fb, fc)   v5 append 30..32 fd   v6 DELETE id = 31 fd2 (removes fd)"""
    t = os.path.join(work, "uniform")
    session.sql(f"CREATE TABLE delta.`{t}` (id BIGINT) USING delta TBLPROPERTIES ("
                "'delta.enableDeletionVectors' = 'false', 'delta.columnMapping.mode' = 'name', "
                "'delta.enableIcebergCompatV2' = 'true', 'delta.universalFormat.enabledFormats' = 'iceberg')").collect()
    write(session, t, 0)
    write(session, t, 10, mode="overwrite")
    write(session, t, 20)
    session.sql(f"OPTIMIZE delta.`{t}`").collect()
    write(session, t, 30)
    session.sql(f"DELETE FROM delta.`{t}` WHERE id = 31").collect()
    a = adds(t)
    assert [len(a[v]) for v in range(7)] == [0, 1, 1, 1, 1, 1, 1], a
    files = {"fa": a[1][0], "fb": a[2][0], "fc": a[3][0], "o": a[4][0], "fd": a[5][0], "fd2": a[6][0]}
    expect = {3: [10, 11, 12, 20, 21, 22], 6: [10, 11, 12, 20, 21, 22, 30, 32]}
    assert ids(session, t) == expect[6]
    return {"table": t, "files": files, "ids": expect}


def _data_files_with_ids(path: str, keys: list[str]):
    """DataFiles for Parquet files that carry field ids (Delta's column mapping), as UniForm's
    converter records them: pyiceberg's add_files matches columns by name, and Delta's
    physical names (col-<uuid>) are not the logical ones."""
    import pyarrow.parquet as pq
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    out = []
    for k in keys:
        p = os.path.join(path, k)
        out.append(DataFile.from_args(content=DataFileContent.DATA, file_path=f"file://{p}",
                                      file_format=FileFormat.PARQUET, partition=Record(),
                                      record_count=pq.read_metadata(p).num_rows,
                                      file_size_in_bytes=os.path.getsize(p)))
    return out


def iceberg_metadata(path: str, catalog_dir: str, first: list[str], current: list[str],
                     converter: str, version: int, first_version: int, field_ids: bool = False) -> str:
    """Writes Iceberg metadata with pyiceberg in path/metadata/ over the Delta table's own data
    files, as converters do: a snapshot of the files `first` (Delta version first_version), then
    the current one, of the files `current` (Delta version `version`). converter says what is
    recorded of the Delta version:

      "xtable":  XTable's XTABLE_METADATA (sourceIdentifier) in the snapshot's summary and the
                 table's properties;
      "uniform": Delta UniForm's table properties delta-version and delta-timestamp;
      "none":    nothing (Fabric's virtualization records no version: the manifests say what
                 the snapshot reads).

    Returns the current metadata file's location."""
    import pyarrow.parquet as pq
    from pyiceberg.catalog.sql import SqlCatalog

    def marks(v: int) -> tuple[dict, dict]:
        if converter == "xtable":
            m = json.dumps({"lastInstantSynced": "2026-01-02T03:04:05Z", "instantsToConsiderForNextSync": [],
                            "version": 0, "sourceTableFormat": "DELTA", "sourceIdentifier": str(v)})
            return {"XTABLE_METADATA": m}, {"XTABLE_METADATA": m}
        if converter == "uniform":
            ms = int(os.path.getmtime(os.path.join(path, "_delta_log", f"{v:020d}.json")) * 1000)
            return {}, {"delta-version": str(v), "delta-timestamp": str(ms)}
        assert converter == "none", converter
        return {}, {}

    # How the paths are spelled in the metadata: XTable and UniForm run on the JVM and write
    # Hadoop's form (file:/path); pyiceberg's own, file:///path; Fabric's is not published.
    prefix = {"xtable": "file:", "uniform": "file:", "none": ""}[converter] if not field_ids else "file://"
    os.makedirs(catalog_dir, exist_ok=True)
    catalog = SqlCatalog("e2e", uri=f"sqlite:///{os.path.join(catalog_dir, 'catalog.db')}",
                         warehouse=f"file://{catalog_dir}")
    catalog.create_namespace("ns")
    abs_ = lambda keys: [prefix + os.path.join(path, k) for k in keys]  # noqa: E731
    if field_ids:
        from pyiceberg.schema import Schema
        from pyiceberg.types import LongType, NestedField
        schema = Schema(NestedField(1, "id", LongType(), required=False))
    else:
        schema = pq.read_schema(os.path.join(path, first[0]))
    table = catalog.create_table("ns.t", schema=schema, location=f"{prefix or 'file://'}{path}")

    def add(tx, keys: list[str], summary: dict) -> None:
        if not field_ids:
            tx.add_files(abs_(keys), snapshot_properties=summary)
            return
        with tx.update_snapshot(snapshot_properties=summary).fast_append() as fa:
            for df in _data_files_with_ids(path, keys):
                fa.append_data_file(df)

    summary, props = marks(first_version)
    with table.transaction() as tx:
        add(tx, first, summary)
        if props:
            tx.set_properties(props)
    summary, props = marks(version)
    with table.transaction() as tx:
        tx.delete(delete_filter="true")  # a replace: the files of `version` only
        add(tx, current, summary)
        if props:
            tx.set_properties(props)
    return catalog.load_table("ns.t").metadata_location


def iceberg_ids(metadata_location: str) -> list[int]:
    """The ids of the current snapshot, as an Iceberg reader with only the folder reads them
    (pyiceberg's StaticTable: the metadata file, its manifest list, manifests, data files)."""
    from pyiceberg.table import StaticTable
    t = StaticTable.from_metadata(metadata_location)
    return sorted(t.scan().to_arrow().column("id").to_pylist())

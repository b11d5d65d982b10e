"""The tables: written by the real engines (Spark with Delta Lake, and delta-rs), fresh on every
run, nothing downloaded. Each builder gets an empty folder and returns the keys that must stay
fresh when the table is aged (untracked files that a retention of days must keep).

Tables are small on purpose (tens of rows, a few files per commit): the harness checks which
files are deleted, not how fast.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Callable

from . import fs
from .engines import quote_path

# Partition values that need escaping somewhere: space, %, :, =, /, unicode, a literal "%20"
# (decoded twice it would become a space), and null.
SPECIAL_VALUES = ["a b", "50%", "c:d", "e=f", "g/h", "ünï €", "x%20y", None]


@dataclasses.dataclass(frozen=True)
class Spec:
    name: str
    engine: str  # "spark" or "delta-rs": who writes it
    description: str
    build: Callable
    untracked: bool = False


TABLES: dict[str, Spec] = {}


def table(name: str, engine: str, description: str, untracked: bool = False):
    def register(fn):
        TABLES[name] = Spec(name, engine, description, fn, untracked)
        return fn
    return register


class SparkCtx:
    """What a Spark builder gets: the session, the folder, and `t`, the table's SQL name."""

    def __init__(self, spark, root: str):
        self.spark = spark
        self.session = spark.session
        self.root = root
        self.t = quote_path(root)

    def sql(self, stmt: str):
        return self.spark.sql(stmt.replace("{t}", self.t)).collect()

    def rows(self, start: int, end: int, parts: int = 2, extra: str = ""):
        cols = ["cast(id as int) as id", "concat('v', cast(id as string)) as v"]
        if extra:
            cols.append(extra)
        return self.session.range(start, end, 1, parts).selectExpr(*cols)

    def append(self, df, **options):
        w = df.write.format("delta").mode("append")
        for k, v in options.items():
            w = w.option(k, v)
        w.save(self.root)


# --- untracked files ---------------------------------------------------------------------------

def drop_untracked(root: str, inside: list[str] = (), extra_root: list[str] = ()) -> list[str]:
    """Drops untracked files and folders into a table folder: old and fresh, hidden and not, in
    nested and empty folders, with and without a Hadoop checksum companion. Returns the keys to
    keep fresh when the table is aged (everything else is aged)."""
    w = lambda key, **kw: fs.write_file(root, key, **kw)  # noqa: E731
    fresh = []
    w("untracked_old.parquet", crc=True)                   # deleted with its .crc
    w("untracked_fresh.parquet", crc=True)                 # kept while younger than the retention
    fresh += ["untracked_fresh.parquet", ".untracked_fresh.parquet.crc"]
    w(".hidden_old.bin")                                   # hidden: never deleted
    w("_underscore_old.bin")                               # hidden
    w("_tmp_dir/inside_old.bin")                           # hidden directory: not descended into
    w(".hidden_dir/inside_old.bin")
    w(".orphan.parquet.crc")                               # a checksum without its file: hidden
    w("_change_data_extra/old.bin")                        # _change_data*: not hidden
    w("_delta_index/old.bin")                              # _delta_index*: not hidden
    w("nested/a/b/deep_old.bin")                           # nested directories emptied by the run
    w("nested_mixed/old.bin")
    w("nested_mixed/fresh.bin")                            # keeps its directory
    fresh.append("nested_mixed/fresh.bin")
    w("only_fresh/new.bin")                                # an old directory with a fresh file
    fresh.append("only_fresh/new.bin")
    w("only_hidden/.keep")                                 # a directory with only a hidden file
    os.makedirs(os.path.join(root, "empty_old"))           # old empty directory
    os.makedirs(os.path.join(root, "empty_nested/x/y"))    # nested empty directories
    os.makedirs(os.path.join(root, "empty_fresh"))         # fresh empty directory
    fresh.append("empty_fresh")
    for d in inside:                                       # inside partition directories
        w(f"{d}/untracked_in_partition.bin", crc=True)
        w(f"{d}/.hidden_in_partition.bin")
        w(f"{d}/_hidden_in_partition.bin")
        os.makedirs(os.path.join(root, d, "empty_in_partition"))
    for key in extra_root:
        w(key)
    return fresh


# --- Spark tables ------------------------------------------------------------------------------

@table("spark_append_overwrite", "spark",
       "appends, INSERT OVERWRITE, append again; deletion vectors off; untracked files")
def _append_overwrite(c: SparkCtx):
    c.sql("CREATE TABLE {t} (id INT, v STRING) USING delta "
          "TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')")
    c.append(c.rows(0, 10))
    c.append(c.rows(10, 20))
    c.sql("INSERT OVERWRITE {t} SELECT id, concat('o', v) FROM {t} WHERE id % 2 = 0")
    c.append(c.rows(100, 104, parts=1))
    return drop_untracked(c.root)


def _dml(c: SparkCtx, dv: bool):
    c.sql("CREATE TABLE {t} (id INT, v STRING, p STRING) USING delta PARTITIONED BY (p) "
          f"TBLPROPERTIES ('delta.enableDeletionVectors' = '{str(dv).lower()}')")
    c.append(c.rows(0, 30, parts=2, extra="cast(id % 3 as string) as p"))
    c.sql("DELETE FROM {t} WHERE id % 5 = 0")
    c.sql("DELETE FROM {t} WHERE id % 7 = 0")  # again in the same files: DVs are replaced
    c.sql("UPDATE {t} SET v = 'updated' WHERE id % 4 = 1")
    c.sql("MERGE INTO {t} AS t USING (SELECT id, 'merged' AS v, cast(id % 3 AS string) AS p "
          "FROM range(0, 40, 3)) AS s ON t.id = s.id "
          "WHEN MATCHED AND t.id % 2 = 0 THEN DELETE "
          "WHEN MATCHED THEN UPDATE SET v = s.v "
          "WHEN NOT MATCHED THEN INSERT *")
    c.sql("DELETE FROM {t} WHERE p = '2'")  # a whole partition: its directory is emptied
    return []


@table("spark_dml_dv_off", "spark", "DELETE, UPDATE, MERGE, partitioned; deletion vectors off")
def _dml_dv_off(c: SparkCtx):
    return _dml(c, dv=False)


@table("spark_dml_dv_on", "spark",
       "DELETE (twice on the same files), UPDATE, MERGE, partitioned; deletion vectors on")
def _dml_dv_on(c: SparkCtx):
    return _dml(c, dv=True)


@table("spark_optimize_reorg", "spark",
       "deletion vectors, OPTIMIZE, DELETE, REORG TABLE ... APPLY (PURGE)")
def _optimize_reorg(c: SparkCtx):
    c.sql("CREATE TABLE {t} (id INT, v STRING) USING delta "
          "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    for i in range(3):
        c.append(c.rows(i * 10, i * 10 + 10))
    c.sql("DELETE FROM {t} WHERE id % 4 = 0")
    c.sql("OPTIMIZE {t}")
    c.sql("DELETE FROM {t} WHERE id = 5 OR id = 27")
    c.sql("REORG TABLE {t} APPLY (PURGE)")
    c.append(c.rows(50, 54, parts=1))
    c.sql("DELETE FROM {t} WHERE id = 51")  # a live deletion vector after the purge
    return []


@table("spark_cdf", "spark",
       "change data feed on, partitioned: UPDATE, DELETE, MERGE write _change_data/ files")
def _cdf(c: SparkCtx):
    c.sql("CREATE TABLE {t} (id INT, v STRING, p STRING) USING delta PARTITIONED BY (p) "
          "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true', "
          "'delta.enableDeletionVectors' = 'false')")
    c.append(c.rows(0, 20, parts=2, extra="cast(id % 2 as string) as p"))
    c.sql("UPDATE {t} SET v = 'u' WHERE id % 3 = 0")
    c.sql("DELETE FROM {t} WHERE id % 5 = 0")
    c.sql("MERGE INTO {t} AS t USING (SELECT id, 'm' AS v, cast(id % 2 AS string) AS p "
          "FROM range(15, 25)) AS s ON t.id = s.id "
          "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *")
    return []


@table("spark_checkpoint_v2", "spark",
       "V2 checkpoints with sidecars (delta.checkpointPolicy = v2, checkpointInterval 2), "
       "deletion vectors, overwrite: tombstones live in checkpoints")
def _checkpoint_v2(c: SparkCtx):
    c.sql("CREATE TABLE {t} (id INT, v STRING) USING delta TBLPROPERTIES ("
          "'delta.checkpointPolicy' = 'v2', 'delta.checkpointInterval' = '2', "
          "'delta.enableDeletionVectors' = 'true')")
    for i in range(3):
        c.append(c.rows(i * 10, i * 10 + 10))
    c.sql("DELETE FROM {t} WHERE id % 3 = 0")
    c.sql("INSERT OVERWRITE {t} SELECT * FROM {t} WHERE id < 20")
    c.sql("UPDATE {t} SET v = 'u' WHERE id = 4")
    c.append(c.rows(40, 44, parts=1))
    return []


@table("spark_checkpoint_multipart", "spark",
       "multi-part classic checkpoints (checkpoint.partSize 2, checkpointInterval 3), "
       "overwrite and deletes: tombstones live in checkpoint parts")
def _checkpoint_multipart(c: SparkCtx):
    c.spark.set_conf("spark.databricks.delta.checkpoint.partSize", "2")
    try:
        c.sql("CREATE TABLE {t} (id INT, v STRING) USING delta TBLPROPERTIES ("
              "'delta.checkpointInterval' = '3', 'delta.enableDeletionVectors' = 'false')")
        for i in range(3):
            c.append(c.rows(i * 10, i * 10 + 10))
        c.sql("DELETE FROM {t} WHERE id % 3 = 0")
        c.sql("INSERT OVERWRITE {t} SELECT * FROM {t} WHERE id < 20")
        c.append(c.rows(40, 44, parts=1))
        c.sql("DELETE FROM {t} WHERE id = 41")
    finally:
        c.spark.set_conf("spark.databricks.delta.checkpoint.partSize", None)
    names = os.listdir(os.path.join(c.root, fs.LOG_DIR))
    assert any(".checkpoint.0000000001.00000000" in n and n.endswith(".parquet") for n in names), names
    return []


@table("spark_colmap_random_prefix", "spark",
       "column mapping (name) with delta.randomizeFilePrefixes, partitioned, deletion vectors, "
       "RENAME/DROP COLUMN, UPDATE, DELETE, overwrite")
def _colmap(c: SparkCtx):
    c.sql("CREATE TABLE {t} (id INT, `v a l` STRING, p STRING) USING delta PARTITIONED BY (p) "
          "TBLPROPERTIES ('delta.columnMapping.mode' = 'name', "
          "'delta.randomizeFilePrefixes' = 'true', 'delta.randomPrefixLength' = '3', "
          "'delta.enableDeletionVectors' = 'true')")
    c.sql("INSERT INTO {t} SELECT cast(id AS int), concat('v', id), cast(id % 2 AS string) "
          "FROM range(0, 20)")
    c.sql("ALTER TABLE {t} RENAME COLUMN `v a l` TO `value`")
    c.sql("UPDATE {t} SET `value` = 'u' WHERE id % 3 = 0")
    c.sql("DELETE FROM {t} WHERE id % 4 = 0")
    c.sql("ALTER TABLE {t} ADD COLUMNS (extra STRING)")
    c.sql("INSERT INTO {t} SELECT cast(id AS int), 'x', cast(id % 2 AS string), 'e' FROM range(20, 24)")
    c.sql("ALTER TABLE {t} DROP COLUMN extra")
    c.sql("INSERT OVERWRITE {t} SELECT * FROM {t} WHERE id < 18")
    c.sql("DELETE FROM {t} WHERE id = 1")
    return []


@table("spark_partitions_special", "spark",
       "partition values with spaces, %, :, =, /, unicode, a literal %20 and nulls; a partition "
       "column named _u; DELETE, UPDATE across partitions, replaceWhere; untracked files in "
       "partition folders", untracked=True)
def _partitions_special(c: SparkCtx):
    from pyspark.sql import Row
    rows = [Row(id=i, p=v, _u=("u%d" % (i % 2)) if i != 7 else None)
            for i, v in enumerate(SPECIAL_VALUES)]
    rows += [Row(id=10 + i, p=v, _u="u9") for i, v in enumerate(SPECIAL_VALUES)]
    df = c.session.createDataFrame(rows, "id INT, p STRING, _u STRING")
    df.write.format("delta").partitionBy("p", "_u").save(c.root)
    c.append(df.selectExpr("id + 100 AS id", "p", "_u"))
    c.sql("DELETE FROM {t} WHERE p = 'c:d'")                   # its folders are emptied
    c.sql("UPDATE {t} SET p = 'moved=here' WHERE p = 'e=f'")   # rows move partition
    c.sql("DELETE FROM {t} WHERE p IS NULL AND id > 100")
    c.append(c.session.createDataFrame([Row(id=500, p="50%", _u="u0")], "id INT, p STRING, _u STRING"),
             replaceWhere="p = '50%'")
    parts = sorted({os.path.relpath(os.path.join(d), c.root)
                    for d, _, files in os.walk(c.root)
                    if any(f.endswith(".parquet") for f in files) and fs.LOG_DIR not in d})
    inside = [p for p in parts if p.startswith(("p=a b/", "p=50%25/", "p=ünï €/", "p=x%2520y/"))][:4]
    assert len(inside) >= 3, parts
    return drop_untracked(c.root, inside=inside,
                          extra_root=["_u=weird_name.bin",       # starts with "<partition col>=": not hidden
                                      "_u=zz/old.bin",           # a partition-like folder at the top
                                      "_other=1/old.bin",        # not a partition column: hidden
                                      "p=c%3Ad/_u=u0/stray.bin"])  # in a folder the log emptied


@table("spark_untracked", "spark",
       "partitioned table, appends and a full overwrite, and every kind of untracked file",
       untracked=True)
def _untracked(c: SparkCtx):
    c.sql("CREATE TABLE {t} (id INT, v STRING, part INT) USING delta PARTITIONED BY (part)")
    c.append(c.rows(0, 12, parts=2, extra="cast(id % 3 as int) as part"))
    c.append(c.rows(12, 24, parts=2, extra="cast(id % 3 as int) as part"))
    c.sql("INSERT OVERWRITE {t} SELECT * FROM {t} WHERE part <> 2")
    return drop_untracked(c.root, inside=["part=0", "part=1"],
                          extra_root=["part=9/old.bin", "notapartition=1/old.bin"])


# --- delta-rs tables ---------------------------------------------------------------------------

def _arrow(start: int, end: int, special: bool = False):
    import pyarrow as pa
    ids = list(range(start, end))
    cols = {"id": pa.array(ids, pa.int64()), "v": pa.array([f"v{i}" for i in ids])}
    if special:
        cols["p"] = pa.array([SPECIAL_VALUES[i % len(SPECIAL_VALUES)] for i in ids], pa.string())
    return pa.table(cols)


@table("rs_plain", "delta-rs",
       "write_deltalake append, overwrite, append; DeltaTable.delete; optimize.compact")
def _rs_plain(root: str):
    from deltalake import DeltaTable, write_deltalake
    write_deltalake(root, _arrow(0, 10), mode="append")
    write_deltalake(root, _arrow(10, 20), mode="append")
    write_deltalake(root, _arrow(20, 30), mode="overwrite")
    write_deltalake(root, _arrow(30, 40), mode="append")
    write_deltalake(root, _arrow(40, 45), mode="append")
    DeltaTable(root).delete("id % 3 = 0")
    DeltaTable(root).optimize.compact()
    return []


@table("rs_partitioned_special", "delta-rs",
       "write_deltalake partitioned by values with spaces, %, :, =, /, unicode, %20 and nulls; "
       "delete, overwrite with a predicate, optimize.compact; untracked files", untracked=True)
def _rs_partitioned(root: str):
    from deltalake import DeltaTable, write_deltalake
    write_deltalake(root, _arrow(0, 16, special=True), partition_by=["p"], mode="append")
    write_deltalake(root, _arrow(16, 32, special=True), partition_by=["p"], mode="append")
    DeltaTable(root).delete("p = 'c:d'")
    import pyarrow as pa
    replacement = pa.table({"id": pa.array([100], pa.int64()), "v": ["replaced"], "p": ["a b"]})
    write_deltalake(root, replacement, partition_by=["p"], mode="overwrite", predicate="p = 'a b'")
    DeltaTable(root).optimize.compact()
    parts = sorted(d for d in os.listdir(root) if d.startswith("p="))
    return drop_untracked(root, inside=parts[:3])

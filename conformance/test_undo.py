"""Undo: a table deltavacuum vacuumed with --trash, then undid, is one Spark time-travels in
again. Every version Spark read before the vacuum, it reads after the undo, with the same rows;
between the two, at least one of them is unreadable (the vacuum did delete what it served)."""

from __future__ import annotations

import os

import pytest


def _readable_versions(spark, root: str) -> tuple[dict[int, list[tuple]], dict[int, str]]:
    out, errors = {}, {}
    for h in spark.history(root):
        v = h["version"]
        try:
            out[v] = spark.rows_at(root, v)
        except Exception as e:  # noqa: BLE001 - a version the log no longer reaches
            errors[v] = str(e)[:300]
    return out, errors


@pytest.mark.parametrize("name", ["spark_dml_dv_on", "spark_partitions_special"])
def test_time_travel_after_undo(name, tables, spark, dv, scenario_dir):
    # The tables are aged 30 days; Spark would refuse time travel past the 7-day retention
    # before reading a file, which would prove nothing about the files.
    spark.set_conf(TRAVEL_CHECK, "false")
    try:
        _time_travel_after_undo(name, tables, spark, dv, scenario_dir)
    finally:
        spark.set_conf(TRAVEL_CHECK, None)


TRAVEL_CHECK = "spark.databricks.delta.vacuum.enforceTimeTravelWithinDeletedFileRetentionDuration"


def _time_travel_after_undo(name, tables, spark, dv, scenario_dir):
    built = tables.get(name)
    root = built.copy(os.path.join(scenario_dir, "t"))
    before, errors = _readable_versions(spark, root)
    assert len(before) > 1, f"{name}: one readable version; the test would prove little: {errors}"

    res = dv.vacuum(root, 0.0, extra=("--trash",))
    assert res["numDeletedFiles"] > 0
    assert res["storageReclaim"]["bytesReclaimedNow"] == 0
    broken = [v for v in before if not _reads(spark, root, v)]
    assert broken, "every old version still reads after the vacuum: the test would prove little"

    rep = dv.undo(root)
    assert rep["numRestored"] >= res["numDeletedFiles"], rep
    assert rep["numNotRestorable"] == 0 and rep["numFailed"] == 0, rep
    for v, rows in before.items():
        assert spark.rows_at(root, v) == rows, f"version {v} reads other rows after the undo"
    assert spark.rows(root) == built.spark_rows


def _reads(spark, root: str, v: int) -> bool:
    try:
        spark.rows_at(root, v)
        return True
    except Exception:  # noqa: BLE001
        return False

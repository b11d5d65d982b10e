"""Round trips: a table deltavacuum has vacuumed (VACUUM START / VACUUM END in its log) and
whose retention it has set with ALTER TABLE is still Spark's and delta-rs's table: Spark reads
the same rows, shows those operations with their metrics in DESCRIBE HISTORY, applies the new
retention in its safety check, and appends to it; delta-rs reads it too."""

from __future__ import annotations

import os

import pytest

from harness.engines import EngineError

RETENTION = "interval 2 days"  # 48 hours


@pytest.mark.parametrize("name", ["spark_dml_dv_on", "spark_partitions_special", "rs_partitioned_special"])
def test_roundtrip_after_deltavacuum(name, tables, spark, dv, rs, scenario_dir):
    built = tables.get(name)
    root = built.copy(os.path.join(scenario_dir, "t"))

    res = dv.vacuum(root, 0.0)  # real run, RETAIN 0 HOURS, check off
    assert res["numDeletedFiles"] > 0, "nothing was deleted: the round trip would prove little"
    dv.sql(f"ALTER TABLE '{root}' SET TBLPROPERTIES ('delta.deletedFileRetentionDuration' = '{RETENTION}')")

    # Spark reads the same rows.
    assert spark.rows(root) == built.spark_rows

    # DESCRIBE HISTORY shows deltavacuum's three commits, with their parameters and metrics.
    hist = spark.history(root)
    ops = [h["operation"] for h in hist[:3]]
    assert ops == ["SET TBLPROPERTIES", "VACUUM END", "VACUUM START"], ops
    setp, end, start = hist[0], hist[1], hist[2]
    assert start["operationParameters"]["retentionCheckEnabled"] == "false"
    assert start["operationParameters"]["specifiedRetentionMillis"] == "0"
    assert start["operationParameters"]["defaultRetentionMillis"] == str(7 * 24 * 3600 * 1000)
    assert start["operationMetrics"]["numFilesToDelete"] == str(res["numFilesToDelete"])
    assert start["operationMetrics"]["sizeOfDataToDelete"] == str(res["sizeOfDataToDelete"])
    assert end["operationParameters"]["status"] == "COMPLETED"
    assert end["operationMetrics"]["numDeletedFiles"] == str(res["numDeletedFiles"])
    assert "numVacuumedDirectories" in end["operationMetrics"]
    assert start["readVersion"] == res["version"] and end["readVersion"] == res["version"] + 1
    assert RETENTION in setp["operationParameters"]["properties"]
    assert spark.properties(root)["delta.deletedFileRetentionDuration"] == RETENTION

    # Spark's safety check now uses 48 hours, as deltavacuum's does.
    for engine, label in ((spark, "Spark"), (dv, "deltavacuum")):
        with pytest.raises(EngineError) as e:
            engine.vacuum(root, 24, dry_run=True, check=True)
        assert "48" in e.value.message, f"{label}: {e.value}"
        engine.vacuum(root, 48, dry_run=True, check=True)

    # Spark appends to it again, and reads the result.
    df = spark.session.read.format("delta").load(root).limit(3)
    df.write.format("delta").mode("append").save(root)
    after = spark.rows(root)
    assert len(after) == len(built.spark_rows) + min(3, len(built.spark_rows))
    assert spark.history(root)[0]["operation"] == "WRITE"

    # delta-rs reads it too (where it reads the table at all), and sees the same history.
    if built.rs_rows is None:
        print(f"delta-rs cannot read {name} at all (not a deltavacuum matter): {built.rs_error}")
        return
    assert len(rs.rows(root)) == len(after)
    rs_ops = [h.get("operation") for h in rs.history(root)[:4]]
    assert rs_ops == ["WRITE", "SET TBLPROPERTIES", "VACUUM END", "VACUUM START"], rs_ops

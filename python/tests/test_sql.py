"""sql(): statements as notebooks run them, read by the tool from its standard input."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from deltalake import DeltaTable as RsTable

import deltavacuum
from deltavacuum import sql


@pytest.fixture
def lakehouse(tmp_path: Path, table: Path) -> Path:
    lh = tmp_path / "lh.Lakehouse"
    (lh / "Tables" / "sales").mkdir(parents=True)
    shutil.copytree(table, lh / "Tables" / "sales" / "orders", copy_function=shutil.copy2)
    return lh


def test_vacuum_dry_run_by_name(lakehouse: Path) -> None:
    [r] = sql("VACUUM sales.orders RETAIN 168 HOURS DRY RUN", warehouse=str(lakehouse))
    assert r.kind == "VACUUM" and r.vacuum is not None and r.vacuum.dry_run
    assert sorted(r.vacuum.paths) == ["stale-1.parquet", "stale-2.parquet"]


def test_set_the_retention_property_once(lakehouse: Path) -> None:
    results = sql("ALTER TABLE sales.orders SET TBLPROPERTIES (delta.deletedFileRetentionDuration = 'interval 7 days');"
                  "SHOW TBLPROPERTIES sales.orders", warehouse=str(lakehouse))
    assert [r.kind for r in results][0].startswith("ALTER TABLE")
    assert results[0].version == 3
    assert results[1].properties is not None
    assert results[1].properties["delta.deletedFileRetentionDuration"] == "interval 7 days"
    t = RsTable(str(lakehouse / "Tables" / "sales" / "orders"))
    assert t.metadata().configuration["delta.deletedFileRetentionDuration"] == "interval 7 days"
    assert t.version() == 3


def test_set_then_vacuum_and_history(lakehouse: Path) -> None:
    results = sql("SET spark.databricks.delta.retentionDurationCheck.enabled = false;\n"
                  "VACUUM sales.orders RETAIN 0 HOURS;\nDESCRIBE HISTORY sales.orders LIMIT 2", warehouse=str(lakehouse))
    assert [r.kind for r in results] == ["SET", "VACUUM", "DESCRIBE HISTORY"]
    assert results[1].vacuum is not None and results[1].vacuum.num_deleted_files == 5
    assert [h.operation for h in results[2].history or []] == ["VACUUM END", "VACUUM START"]


def test_a_failing_statement_raises_with_the_results_before_it(lakehouse: Path) -> None:
    with pytest.raises(deltavacuum.VacuumRefused) as e:
        sql("SHOW TBLPROPERTIES sales.orders; VACUUM sales.orders RETAIN 0 HOURS", warehouse=str(lakehouse))
    assert e.value.setting == deltavacuum.SETTING_RETENTION_CHECK
    assert [r.kind for r in e.value.result][0] == "SHOW TBLPROPERTIES"
    with pytest.raises(deltavacuum.UsageError):
        sql("VACUUM", warehouse=str(lakehouse))


def test_statements_are_not_on_the_command_line(lakehouse: Path, recorder) -> None:
    sql("ALTER TABLE sales.orders SET TBLPROPERTIES ('fs.azure.sas.token' = 'SECRET-IN-SQL-42')", warehouse=str(lakehouse))
    [run] = recorder()
    assert not any("SECRET-IN-SQL-42" in a for a in run["argv"])

"""DeltaTable.vacuum and the other commands on local tables made by delta-rs, read back by
delta-rs afterwards."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from deltalake import DeltaTable as RsTable

import deltavacuum
from deltavacuum import DeltaTable, DeltaVacuumError, VacuumRefused, VacuumResult

STALE = ["stale-1.parquet", "stale-2.parquet"]


def rows(path: Path) -> list:
    return sorted(RsTable(str(path)).to_pyarrow_table().to_pylist(), key=lambda r: r["id"])


def test_dry_run_is_the_default_and_lists_only_stale_files(table: Path) -> None:
    plan = DeltaTable(table).vacuum(retention_hours=168)
    assert isinstance(plan, VacuumResult)
    assert plan.dry_run and plan.status == "COMPLETED"
    assert sorted(plan.paths) == STALE  # fresh.parquet is inside the retention; live files are kept
    assert plan.total_bytes == 200 and plan.num_files_to_delete == 2
    assert all(f.reason == "untracked" and f.size == 100 and f.modification_time is not None for f in plan.files)
    assert plan.retention_hours == 168 and plan.cutoff is not None
    for name in STALE + ["fresh.parquet"]:
        assert (table / name).exists(), "a dry run deleted " + name


def test_plan_as_dataframes(table: Path) -> None:
    plan = DeltaTable(str(table)).vacuum(168)
    df = plan.to_pandas()
    assert sorted(df["path"]) == STALE and df["size"].sum() == 200
    assert str(df["modification_time"].dt.tz) == "UTC"
    at = plan.to_pyarrow()
    assert at.num_rows == 2 and at.schema.field("size").type == "int64"


def test_real_run_deletes_and_delta_rs_reads_the_table(table: Path) -> None:
    before = rows(table)
    res = DeltaTable(table).vacuum(retention_hours=168, dry_run=False)
    assert not res.dry_run and res.status == "COMPLETED"
    assert res.num_deleted_files == 2 and res.size_of_deleted_data == 200 and res.run_id
    assert not any((table / n).exists() for n in STALE)
    assert (table / "fresh.parquet").exists()
    assert rows(table) == before
    dt = DeltaTable(table)
    ops = [h.operation for h in dt.history(limit=2)]
    assert ops == ["VACUUM END", "VACUUM START"]
    end = dt.history(limit=1)[0]
    assert end.operation_parameters.get("status") == "COMPLETED"
    assert [r.id for r in dt.runs()] == [res.run_id] and dt.runs()[0].status == "COMPLETED"


def test_spark_keyword_and_positional_retention(table: Path) -> None:
    dt = DeltaTable(table)
    assert dt.vacuum(retentionHours=168).paths == dt.vacuum(168).paths
    with pytest.raises(TypeError, match="disagree"):
        dt.vacuum(retention_hours=168, retentionHours=24)
    with pytest.raises(TypeError, match="number of hours"):
        dt.vacuum(retention_hours="168")  # type: ignore[arg-type]


def test_refusal_names_the_setting_and_deletes_nothing(table: Path) -> None:
    with pytest.raises(VacuumRefused) as e:
        DeltaTable(table).vacuum(retention_hours=0, dry_run=False)
    assert e.value.setting == deltavacuum.SETTING_RETENTION_CHECK
    assert "refusing to vacuum" in str(e.value) and str(table) in str(e.value)
    assert isinstance(e.value, deltavacuum.DeltaVacuumError)
    assert all((table / n).exists() for n in STALE + ["fresh.parquet"])


def test_enforce_retention_duration_false_reaches_removed_files(table: Path) -> None:
    before = rows(table)
    dt = DeltaTable(table)
    kept = dt.vacuum(retention_hours=0, enforce_retention_duration=False)
    reasons = {f.reason for f in kept.files}
    # The two files the overwrites removed are now outside a 0-hour retention.
    assert sum(1 for f in kept.files if f.reason != "untracked") == 2, reasons
    assert "fresh.parquet" in kept.paths
    dt.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    assert rows(table) == before
    assert len(list(table.glob("*.parquet"))) == 1  # the live file only


def test_full_false_is_lite_and_leaves_untracked_files(table: Path) -> None:
    dt = DeltaTable(table)
    lite = dt.vacuum(retention_hours=0, enforce_retention_duration=False, full=False)
    assert lite.mode == "LITE" and not any(f.reason == "untracked" for f in lite.files)
    assert dt.vacuum(168, full=True).mode == "FULL"
    with pytest.raises(TypeError):
        dt.vacuum(168, full=True, lite=True)


def test_progress_events_reach_a_callback(table: Path) -> None:
    seen = []
    DeltaTable(table).vacuum(168, dry_run=False, progress=seen.append)
    assert seen, "no progress event"
    assert seen[-1].phase == "done" and seen[-1].deleted == 2 and seen[-1].candidates == 2


def test_progress_bar_with_tqdm(table: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("tqdm")
    DeltaTable(table).vacuum(168, progress=True)
    assert "VACUUM" in capsys.readouterr().err


def test_first_progress_rate_is_the_runs(capsys: pytest.CaptureFixture) -> None:
    """Issue 36, item 6: the bar starts at the first event, two seconds into the run; its first
    rate read the files listed over a few microseconds (billions per second)."""
    pytest.importorskip("tqdm")
    import re

    from deltavacuum._progress import progress_callback
    from deltavacuum._run import Progress

    update, close = progress_callback(True, desc="VACUUM t")
    assert update is not None
    update(Progress(phase="listing", listed=100000, candidates=0, deleted=0, deleted_bytes=0, failed=0, elapsed_seconds=2.0))
    close()
    rates = [float(r) for r in re.findall(r"([0-9.]+)file/s", capsys.readouterr().err)]
    assert rates and 0 < rates[0] <= 50000, rates


def test_trash_then_undo_restores(table: Path) -> None:
    dt = DeltaTable(table)
    res = dt.vacuum(168, dry_run=False, trash=".deltavacuum_trash")
    assert not any((table / n).exists() for n in STALE)
    u = dt.undo(run_id=res.run_id)
    assert u.run == res.run_id and u.num_restored == 2 and u.bytes_restored == 200
    assert all((table / n).exists() for n in STALE)
    assert dt.runs()[0].undone_at is not None and dt.runs()[0].state == "undone"
    assert res.undo is not None and res.undo.possible == "yes" and res.undo.via == "trash"
    # Issue 36, item 4: once every file is back, the run's one state says an undo can bring
    # nothing back (it said "yes"), and an undo is refused.
    [run] = dt.runs()
    assert run.undo is not None and run.undo.possible == "no" and "cannot be undone again" in run.undo.why
    with pytest.raises(DeltaVacuumError, match="cannot be undone again"):
        dt.undo(run_id=res.run_id)


def test_a_purged_run_cannot_be_undone(table: Path) -> None:
    """Issue 36, item 1: after a purge of its trash, the run says so, since when."""
    import subprocess

    from deltavacuum._binary import binary_path

    dt = DeltaTable(table)
    res = dt.vacuum(168, dry_run=False, trash="_trash")
    done = subprocess.run([binary_path(), "trash", "purge", str(table), "--trash=_trash", "--older-than=0s"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    [run] = dt.runs()
    assert run.id == res.run_id and run.purged_at is not None and run.state == "completed"
    assert run.undo is not None and run.undo.possible == "no" and "its trash was purged on" in run.undo.why
    with pytest.raises(DeltaVacuumError, match="its trash was purged on") as e:
        dt.undo(dry_run=True)
    assert "_trash/" not in e.value.message and "no such file" not in e.value.message


def test_a_run_on_local_disk_says_it_cannot_be_undone(table: Path) -> None:
    dt = DeltaTable(table)
    res = dt.vacuum(168, dry_run=False)
    assert res.undo is not None and res.undo.possible == "no" and "use --trash" in res.undo.why
    [run] = dt.runs()
    assert run.state == "completed" and run.undo is not None and run.undo.possible == "no"
    # Issue 36, item 3: an undo that can bring nothing back is refused, dry run or not, with
    # the one reason; the run stays completed.
    for dry in (True, False):
        with pytest.raises(DeltaVacuumError, match="cannot be undone: nothing keeps deleted files here") as e:
            dt.undo(run_id=res.run_id, dry_run=dry)
        assert e.value.message.count("\n") == 0, e.value.message
    [run] = dt.runs()
    assert run.state == "completed" and run.undone_at is None


def test_shards_together_are_one_run(table: Path) -> None:
    dt = DeltaTable(table)
    version = dt.vacuum(168).version
    paths = []
    for i in range(3):
        plan = dt.vacuum(168, shard=f"{i}/3", version=version)
        assert plan.raw["shard"] == {"index": i, "count": 3} and plan.version == version
        paths += plan.paths
    assert sorted(paths) == STALE
    with pytest.raises(deltavacuum.UsageError, match="--version"):
        dt.vacuum(168, shard="0/3")
    with pytest.raises(deltavacuum.UsageError, match="INDEX/COUNT"):
        dt.vacuum(168, shard="a/b", version=version)


def test_inspect(table: Path) -> None:
    rep = DeltaTable(table).inspect(retention_hours=168, what_if_hours=[0, 168])
    assert rep.reclaimable_files == 2 and rep.reclaimable_bytes == 200
    assert rep.table.endswith("/orders") and rep.version == 2


def test_names_in_a_spark_warehouse_and_a_lakehouse(tmp_path: Path, table: Path) -> None:
    wh = tmp_path / "wh"
    (wh / "sales.db").mkdir(parents=True)
    shutil.copytree(table, wh / "sales.db" / "orders", copy_function=shutil.copy2)
    plan = DeltaTable.for_name("sales.orders", warehouse=str(wh)).vacuum(168)
    assert sorted(plan.paths) == STALE and plan.table.endswith("/sales.db/orders")
    lh = tmp_path / "lh.Lakehouse"
    (lh / "Tables" / "sales").mkdir(parents=True)
    shutil.copytree(table, lh / "Tables" / "sales" / "orders", copy_function=shutil.copy2)
    res = DeltaTable.for_name("sales.orders", warehouse=str(lh)).vacuum(168, dry_run=False)
    assert res.num_deleted_files == 2 and rows(lh / "Tables" / "sales" / "orders") == rows(table)
    with pytest.raises(deltavacuum.TableNotFound, match="sales.missing"):
        DeltaTable.for_name("sales.missing", warehouse=str(lh)).vacuum(168)
    with pytest.raises(ValueError):
        DeltaTable.for_name("/a/path", warehouse=str(lh))


def test_not_a_table_and_usage_errors(tmp_path: Path, table: Path) -> None:
    with pytest.raises(deltavacuum.TableNotFound, match="not a Delta table"):
        DeltaTable(tmp_path).vacuum()
    # Issue 36, item 6: a path that does not exist is a table not found too.
    with pytest.raises(deltavacuum.TableNotFound, match="does not exist"):
        DeltaTable(tmp_path / "no-such-table").vacuum()
    with pytest.raises(deltavacuum.TableNotFound, match="does not exist"):
        DeltaTable(tmp_path / "no-such-table").runs()
    # ... and a storage option a slip away from one is named.
    with pytest.raises(deltavacuum.UsageError, match="did you mean aws_region"):
        DeltaTable(table, storage_options={"aws_regoin": "eu-west-1"}).vacuum()
    with pytest.raises(deltavacuum.UsageError, match="unknown storage option") as e:
        DeltaTable(table, storage_options={"no_such_option": "1"}).vacuum()
    assert isinstance(e.value, ValueError) and e.value.exit_code == 2
    with pytest.raises(deltavacuum.UsageError, match="unknown setting"):
        DeltaTable(table, conf={"spark.no.such": "true"}).vacuum()
    with pytest.raises(ValueError):
        DeltaTable(table).history(limit=0)


def test_a_relative_path_is_a_path_not_a_name(table: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(table.parent)
    assert sorted(DeltaTable("orders").vacuum(168).paths) == STALE


def test_hostile_arguments_are_never_flags(table: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A name that looks like a flag is a name: it resolves to no table, it does not print help.
    with pytest.raises(deltavacuum.TableNotFound):
        DeltaTable.for_name("--help", warehouse=str(tmp_path)).vacuum()
    with pytest.raises(deltavacuum.TableNotFound):
        DeltaTable.for_name("--dry-run", warehouse=str(tmp_path)).history()
    # A run id that looks like a flag is refused as a run id.
    with pytest.raises(deltavacuum.UsageError, match="not a run id"):
        DeltaTable(table).undo(run_id="--dry-run")
    # A relative path starting with '-' is a path.
    shutil.copytree(table, tmp_path / "-rf", copy_function=shutil.copy2)
    monkeypatch.chdir(tmp_path)
    assert sorted(DeltaTable("-rf").vacuum(168).paths) == STALE
    for bad in (float("nan"), float("inf"), -1):
        with pytest.raises(ValueError):
            DeltaTable(table).vacuum(retention_hours=bad)
    # A storage option value with '=' and a newline stays one value of one option.
    with pytest.raises(deltavacuum.UsageError, match="want a positive integer"):
        DeltaTable(table, storage_options={"concurrency": "4\n--dry-run=false"}).vacuum(dry_run=False)
    assert all((table / n).exists() for n in STALE)


def test_2555_hours_warns_it_is_not_seven_years(table: Path) -> None:
    res = DeltaTable(table).vacuum(retention_hours=2555)
    assert any("about 106 days, not 7 years" in w for w in res.warnings), res.warnings
    assert not any("106 days" in w for w in DeltaTable(table).vacuum(retention_hours=2556).warnings)

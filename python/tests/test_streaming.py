"""vacuum(streaming_checkpoints=...): the checkpoints reach the run (through the private
channel), and one that cannot be honoured refuses the run, which changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from deltavacuum import DeltaTable, DeltaVacuumError

from conftest import write_table

# Real checkpoints written by Spark 4.2.0 / Delta 4.4.0 (readers/streaming/testdata/README.md),
# of a table whose id is not the one write_table makes.
SPARK = Path(__file__).resolve().parents[2] / "readers" / "streaming" / "testdata" / "spark-4.2.0-delta-4.4.0"


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_a_checkpoint_of_another_table_refuses_the_run(tmp_path: Path) -> None:
    if not (SPARK / "single").is_dir():
        pytest.skip(f"the Spark checkpoints are not at {SPARK} (the package's tests run from the repository)")
    table = tmp_path / "t"
    write_table(table, versions=3)
    before = files(table)
    with pytest.raises(DeltaVacuumError) as e:
        DeltaTable(table).vacuum(dry_run=False, retention_hours=0, enforce_retention_duration=False,
                                 streaming_checkpoints=[str(SPARK / "single")])
    assert "reservoir" in str(e.value).lower() or "another table" in str(e.value).lower(), str(e.value)
    assert files(table) == before


def test_an_unreadable_checkpoint_fails_closed(tmp_path: Path) -> None:
    table = tmp_path / "t"
    write_table(table, versions=3)
    before = files(table)
    with pytest.raises(DeltaVacuumError):
        DeltaTable(table).vacuum(dry_run=False, retention_hours=0, enforce_retention_duration=False,
                                 streaming_checkpoints=[str(tmp_path / "no-such-checkpoint")])
    assert files(table) == before


def test_one_location_is_not_a_list(tmp_path: Path) -> None:
    table = tmp_path / "t"
    write_table(table, versions=1)
    with pytest.raises(TypeError):
        DeltaTable(table).vacuum(streaming_checkpoints=str(tmp_path / "cp"))

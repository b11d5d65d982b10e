"""DeltaTable.pin: a notebook job's pin keeps the version it reads while it runs."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from deltavacuum import DeltaTable, DeltaVacuumError

from conftest import write_table


@pytest.fixture()
def versions(tmp_path: Path) -> Path:
    path = tmp_path / "t"
    write_table(path, versions=3)  # each overwrite removes the previous file
    return path


def test_pin_as_a_context_manager_keeps_the_version_and_lets_go(versions: Path) -> None:
    dt = DeltaTable(versions)
    all_stale = dt.vacuum(retention_hours=0, enforce_retention_duration=False).num_files_to_delete
    assert all_stale == 2
    with dt.pin(reason="notebook job", version=0, duration=timedelta(hours=2)) as pin:
        assert pin.version == 0 and pin.until is not None
        plan = dt.vacuum(retention_hours=0, enforce_retention_duration=False)
        assert plan.num_files_to_delete == 0
        kept = plan.raw["keptForReaders"]
        assert len(kept) == 2 and all(pin.id in k["keptBy"][0] for k in kept)
        assert [p["state"] for p in dt.pins()] == ["active"]
    assert dt.pins() == []
    assert dt.vacuum(retention_hours=0, enforce_retention_duration=False).num_files_to_delete == 2


def test_pin_without_a_version_pins_the_current_one(versions: Path) -> None:
    dt = DeltaTable(versions)
    pin = dt.pin(reason="report", duration="1h")
    try:
        assert pin.version == 2
    finally:
        pin.release()


@pytest.mark.parametrize("kwargs", [
    {"reason": ""},
    {"reason": "x", "duration": "40d"},
    {"reason": "x", "version": -1},
    {"reason": "x", "version": 99},
    {"reason": "x", "duration": timedelta(0)},
])
def test_pin_refusals_write_nothing(versions: Path, kwargs: dict) -> None:
    dt = DeltaTable(versions)
    with pytest.raises((DeltaVacuumError, ValueError)):
        dt.pin(**kwargs)
    assert not (versions / "_deltavacuum").exists()

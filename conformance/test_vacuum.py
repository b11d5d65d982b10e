"""FULL and LITE VACUUM: Spark's reference against deltavacuum, on every table, with delta-rs
recorded beside them.

Modes:
  retain0   RETAIN 0 HOURS, safety check off: every tombstone is expired, every aged file is
            older than the cutoff: every deletion rule is exercised.
  default   no RETAIN: the table's retention (7 days). Files are 30 days old but tombstones are
            minutes old (their deletionTimestamp is in the log), so every tombstone protects its
            file; fresh untracked files and directories are younger than the cutoff.
  lite      VACUUM LITE RETAIN 0 HOURS (Spark's LITE needs Delta 3.3+).
"""

from __future__ import annotations

import pytest

from harness.scenario import run_comparison
from harness.tables import TABLES

MODES = {"retain0": (0.0, False), "default": (None, False), "lite": (0.0, True)}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", list(TABLES))
def test_vacuum(name, mode, tables, spark, dv, rs, report, scenario_dir):
    built = tables.get(name)
    retain, lite = MODES[mode]
    out = run_comparison(f"{name}[{mode}]", built, scenario_dir, spark, dv, rs, report, retain, lite)
    assert not out.violations, out.failure_message()
    if out.bugs:
        pytest.xfail(out.xfail_reason())

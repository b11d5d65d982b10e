"""VACUUM LITE across runs: deltavacuum's LITE run continues from the _last_vacuum_info that
Spark left (after Spark's FULL VACUUM and after Spark's VACUUM LITE), and Spark's LITE run
continues from the one deltavacuum left.

LITE takes its candidates from the commits after the last LITE run's
latestCommitVersionOutsideOfRetentionWindow (L). To make that visible, the first run uses the
table's retention (7 days, or 1 day), so the tombstones it sees are not expired yet and stay
on disk; the second run (RETAIN 0 HOURS) must then skip the commits up to L when L came from a
LITE run, and start from the first commit when Spark's FULL run wrote {}.

Commit timestamps are the commit files' modification times (these tables have no in-commit
timestamps): every copy ages the whole folder, commits included, to 30 days ago, so every commit
is outside the retention window. Both engines then make the times strictly increasing in version
order, the same way.
"""

from __future__ import annotations

import os
import urllib.parse

import pytest

from harness import fs
from harness.engines import EngineError, last_vacuum_info
from harness.compare import Outcome
from harness.scenario import check_log_files, run_comparison
from harness.store import snapshot
from harness.tables import SparkCtx

LV = "latestCommitVersionOutsideOfRetentionWindow"


def _history_table(c: SparkCtx):
    """Change data feed, deletion vectors off (a remove then always means the file is gone from
    the table); the first tombstones (R1)."""
    c.sql("CREATE TABLE {t} (id INT, v STRING) USING delta TBLPROPERTIES ("
          "'delta.enableDeletionVectors' = 'false', 'delta.enableChangeDataFeed' = 'true')")
    c.append(c.rows(0, 20))
    c.append(c.rows(20, 40))
    c.sql("DELETE FROM {t} WHERE id % 5 = 0")
    c.sql("UPDATE {t} SET v = 'u' WHERE id % 7 = 0")
    return []


def _cleaned_table(c: SparkCtx):
    """A table whose first commits were removed by Spark's own log cleanup (earliest commit > 0):
    log retention 1 day, every file aged 30 days before the commit that writes a checkpoint."""
    c.sql("CREATE TABLE {t} (id INT, v STRING) USING delta TBLPROPERTIES ("
          "'delta.checkpointInterval' = '3', 'delta.logRetentionDuration' = 'interval 1 days', "
          "'delta.deletedFileRetentionDuration' = 'interval 1 days', "
          "'delta.enableDeletionVectors' = 'false')")
    c.append(c.rows(0, 20))
    c.append(c.rows(20, 40))
    c.sql("DELETE FROM {t} WHERE id % 5 = 0")       # version 3: a checkpoint
    c.append(c.rows(40, 50))
    c.sql("UPDATE {t} SET v = 'u' WHERE id % 7 = 0")
    fs.age_tree(c.root, fs.now() - 30 * fs.DAY)
    c.sql("DELETE FROM {t} WHERE id = 41")          # version 6: a checkpoint, then log cleanup
    earliest = min(fs.commits(c.root))
    assert earliest > 0, f"Spark's log cleanup removed no commit: {sorted(os.listdir(c.root + '/_delta_log'))}"
    return []


def removed_paths(root: str, versions) -> set[str]:
    """Raw keys of the files that `remove` actions of these commits name."""
    out = set()
    for v, actions in fs.commits(root).items():
        if v in versions:
            out |= {urllib.parse.unquote(a["remove"]["path"]) for a in actions if "remove" in a}
    return out


def _next_round(spark, root: str) -> None:
    """Spark writes more tombstones (R2) after the first vacuum."""
    t = f"delta.`{root}`"
    spark.sql(f"DELETE FROM {t} WHERE id % 3 = 0")
    spark.sql(f"UPDATE {t} SET v = 'w' WHERE id % 11 = 1")


def _prepare(tables, spark, rs, base: str, builder, name: str, first_run) -> tuple:
    """Copies the table, ages it, runs `first_run` on it, lets Spark write more tombstones, and
    returns (a Built of that state, the last version the first run saw)."""
    src = tables.get(name, builder=builder)
    root = src.copy(os.path.join(base, "history"))
    before = max(fs.commits(root))
    first_run(root)
    _next_round(spark, root)
    return snapshot(f"{name}+history", root, [], spark, rs), before


def test_lite_continues_after_spark_lite(tables, spark, dv, rs, report, scenario_dir):
    built, l1 = _prepare(tables, spark, rs, scenario_dir, _history_table, "lite_history",
                         lambda root: spark.vacuum(root, None, mode="LITE"))
    info = last_vacuum_info(built.root)
    assert info == {LV: l1}, f"Spark's LITE run left {info!r}, expected L = {l1}"
    r1 = removed_paths(built.root, range(0, l1 + 1))
    r2 = removed_paths(built.root, range(l1 + 1, 10**6))
    out = run_comparison("lite_continues_after_spark_lite", built, os.path.join(scenario_dir, "cmp"),
                         spark, dv, rs, report, 0.0, lite=True)
    dc = os.path.join(scenario_dir, "cmp", "dv")
    still = {k for k in r1 if os.path.exists(os.path.join(built.root, k))}
    assert still, "no tombstoned file of the first round is left: the test would prove nothing"
    deleted_r1 = {k for k in still if not os.path.exists(os.path.join(dc, k))}
    if deleted_r1:
        out.violate(f"deltavacuum LITE deleted files removed at or before L = {l1} (it must start at L + 1)", deleted_r1)
    kept_r2 = {k for k in r2 - r1 if os.path.exists(os.path.join(dc, k))}
    if kept_r2:
        out.violate("deltavacuum LITE kept files removed after L", kept_r2)
    assert not out.violations, out.failure_message()
    if out.bugs:
        pytest.xfail(out.xfail_reason())


def test_lite_after_spark_full(tables, spark, dv, rs, report, scenario_dir):
    """Spark's FULL run writes {}: a LITE run starts again from the first commit (which is 0)."""
    built, _ = _prepare(tables, spark, rs, scenario_dir, _history_table, "lite_history",
                        lambda root: spark.vacuum(root, None))
    assert last_vacuum_info(built.root) == {}, last_vacuum_info(built.root)
    r1 = removed_paths(built.root, range(0, 10**6))
    out = run_comparison("lite_after_spark_full", built, os.path.join(scenario_dir, "cmp"),
                         spark, dv, rs, report, 0.0, lite=True)
    dc = os.path.join(scenario_dir, "cmp", "dv")
    left = {k for k in r1 if os.path.exists(os.path.join(built.root, k)) and os.path.exists(os.path.join(dc, k))}
    if left:
        out.violate("deltavacuum LITE kept expired tombstoned files (it must start at commit 0)", left)
    assert not out.violations, out.failure_message()
    if out.bugs:
        pytest.xfail(out.xfail_reason())


def test_lite_refused_after_spark_full_when_log_cleaned(tables, spark, dv, rs, report, scenario_dir):
    """Earliest commit > 0 and _last_vacuum_info = {} (Spark's FULL): both refuse LITE with
    DELTA_CANNOT_VACUUM_LITE. Then deltavacuum's FULL run writes L [safer], and Spark's LITE run
    accepts it and continues from it, as deltavacuum's does."""
    src = tables.get("lite_log_cleaned", builder=_cleaned_table)
    root = src.copy(os.path.join(scenario_dir, "history"))
    spark.vacuum(root, None)  # FULL, table retention (1 day)
    assert last_vacuum_info(root) == {}
    for name, engine in (("Spark", spark), ("deltavacuum", dv)):
        c = fs.copy_table(root, os.path.join(scenario_dir, f"refuse-{name}"))
        with pytest.raises(EngineError) as e:
            engine.vacuum(c, 0.0, mode="LITE", dry_run=True)
        assert e.value.error_class == "DELTA_CANNOT_VACUUM_LITE", f"{name}: {e.value}"

    res = dv.vacuum(root, None)  # FULL, table retention: writes L [safer]
    found = Outcome("lite_log_cleaned: deltavacuum FULL after Spark FULL")
    check_log_files(found, root, repair=True)
    info = last_vacuum_info(root)
    assert info == {LV: res[LV]} and res[LV] >= min(fs.commits(root)), \
        f"deltavacuum's FULL run left {info!r}; its JSON said {res[LV]!r}"
    _next_round(spark, root)
    built = snapshot("lite_log_cleaned+deltavacuum_full", root, [], spark, rs)
    r2 = removed_paths(root, range(info[LV] + 1, 10**6))
    out = run_comparison("lite_after_deltavacuum_full_log_cleaned", built, os.path.join(scenario_dir, "cmp"),
                         spark, dv, rs, report, 0.0, lite=True)
    dc = os.path.join(scenario_dir, "cmp", "dv")
    kept = {k for k in r2 if os.path.exists(os.path.join(root, k)) and os.path.exists(os.path.join(dc, k))}
    if kept:
        out.violate("deltavacuum LITE kept files removed after L", kept)
    out.bugs += found.bugs
    out.violations += found.violations
    assert not out.violations, out.failure_message()
    if out.bugs:
        pytest.xfail(out.xfail_reason())

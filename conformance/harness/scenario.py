"""One comparison: a table copied three times, identically aged; Spark, deltavacuum and delta-rs
each run a DRY RUN then a real run on their own copy; the results are compared."""

from __future__ import annotations

import os
import time

from . import fs
from .compare import Outcome, Run, compare_delta_rs, compare_history, compare_with_spark, split_dry
from .engines import EngineError, last_vacuum_info


def _new_log_modes(root: str, before: set[int]) -> set[str]:
    log = os.path.join(root, fs.LOG_DIR)
    return {oct(os.stat(os.path.join(log, f"{v:020d}.json")).st_mode & 0o777)
            for v in fs.commits(root) if v not in before}


def new_commits(root: str, before: set[int]) -> list[dict]:
    return [fs.commit_info(a) for v, a in fs.commits(root).items() if v not in before]


def check_log_files(out: Outcome, root: str, repair: bool = False) -> None:
    """Files deltavacuum rewrote in _delta_log/ must stay readable by Hadoop: a checksum
    companion left from the previous content makes Spark's reads fail."""
    p = os.path.join(root, fs.LOG_DIR, "_last_vacuum_info")
    if os.path.exists(p) and fs.hadoop_crc_stale(p):
        out.bug("bug:stale-last-vacuum-info-crc", [os.path.relpath(p, root)])
        if repair:
            os.remove(os.path.join(root, fs.LOG_DIR, "._last_vacuum_info.crc"))


def check_reads(out: Outcome, spark, rs, root: str, built, label: str = "deltavacuum") -> None:
    """A table this tool touched must still be read, row for row, by Spark and by delta-rs (when
    delta-rs could read the table before)."""
    try:
        rows = spark.rows(root)
        if rows != built.spark_rows:
            out.violate(f"Spark reads other rows after {label}'s run: {len(rows)} rows, "
                        f"{len(built.spark_rows)} before")
    except Exception as e:  # noqa: BLE001 - any failure to read is the finding
        out.violate(f"Spark cannot read the table after {label}'s run: {str(e)[:1500]}")
    if built.rs_rows is None:
        out.note(f"delta-rs cannot read this table at all (before any vacuum): {built.rs_error}")
        return
    try:
        rows = rs.rows(root)
        if rows != built.rs_rows:
            out.violate(f"delta-rs reads other rows after {label}'s run: {len(rows)} rows, "
                        f"{len(built.rs_rows)} before")
    except EngineError as e:
        out.violate(f"delta-rs cannot read the table after {label}'s run: {e.message[:1500]}")


def run_comparison(name: str, built, base: str, spark, dv, rs, report, retain: float | None,
                   lite: bool) -> Outcome:
    """Runs and compares; returns the outcome (the caller asserts on its violations)."""
    t0 = time.time()
    mode = "LITE" if lite else None
    now = fs.now()  # one time for the three copies: they are aged identically
    engines = ("spark", "dv") if lite else ("spark", "dv", "rs")  # delta-rs has no LITE mode
    copies = {e: built.copy(os.path.join(base, e), now) for e in engines}
    pre = fs.list_tree(copies["spark"])
    out = Outcome(name)

    # Spark: DRY RUN, then the real run, on its copy.
    sc = copies["spark"]
    s_before = set(fs.commits(sc))
    t1 = time.time()
    s_dry = spark.vacuum(sc, retain, dry_run=True, mode=mode)
    t2 = time.time()
    spark.vacuum(sc, retain, mode=mode)
    report.phase("Spark VACUUM DRY RUN", t2 - t1)
    report.phase("Spark VACUUM", time.time() - t2)
    s_run = Run(*split_dry(pre, s_dry), after=fs.list_tree(sc))
    s_commits = new_commits(sc, s_before)

    # deltavacuum: the same on its copy.
    dc = copies["dv"]
    d_before = set(fs.commits(dc))
    d_dry = dv.vacuum(dc, retain, dry_run=True, mode=mode)
    d_real = dv.vacuum(dc, retain, mode=mode)
    d_run = Run(*split_dry(pre, d_dry.files + d_dry.directories), after=fs.list_tree(dc))
    d_commits = new_commits(dc, d_before)

    check_log_files(out, dc)
    compare_with_spark(out, pre, s_run, d_run, d_dry, d_real, lite=lite)
    compare_history(out, s_commits, d_commits)
    s_modes = _new_log_modes(sc, s_before)
    d_modes = _new_log_modes(dc, d_before)
    if s_modes and d_modes and s_modes != d_modes:
        out.note(f"permissions of the commits each engine wrote: Spark {sorted(s_modes)}, "
                 f"deltavacuum {sorted(d_modes)}")
    s_info, d_info = last_vacuum_info(sc), last_vacuum_info(dc)
    if s_info != d_info:
        if not lite and s_info == {} and isinstance(d_info, dict) and \
                set(d_info) == {"latestCommitVersionOutsideOfRetentionWindow"}:
            out.allow("safer:last-vacuum-info-after-full", [f"Spark {s_info}, deltavacuum {d_info}"])
        else:
            out.violate(f"_last_vacuum_info: Spark wrote {s_info!r}, deltavacuum wrote {d_info!r}")
    t1 = time.time()
    check_reads(out, spark, rs, dc, built)
    report.phase("reading vacuumed tables (Spark, delta-rs)", time.time() - t1)

    # delta-rs: recorded, never failing (it is not the reference).
    rs_notes = []
    r_deleted = ""
    if not lite:
        rc = copies["rs"]
        try:
            r_dry = rs.vacuum(rc, 0 if retain == 0 else None, dry_run=True)
            rs.vacuum(rc, 0 if retain == 0 else None, dry_run=False)
            rs_after = fs.list_tree(rc)
            rs_notes = compare_delta_rs(out, pre, s_run, d_run, set(r_dry), rs_after)
            r_deleted = len(pre.data_files() - rs_after.data_files())
        except EngineError as e:
            rs_notes = [f"delta-rs vacuum failed: {e}"]
            r_deleted = "error"

    counts = {
        "spark": len(pre.data_files() - s_run.after.data_files()),
        "deltavacuum": len(pre.data_files() - d_run.after.data_files()),
        "delta-rs": r_deleted,
    }
    report.add(name, out, rs_notes, counts, time.time() - t0)
    out.context = {
        "Spark DRY RUN files": s_run.dry_files,
        "Spark DRY RUN directories": s_run.dry_dirs,
        "deltavacuum DRY RUN files": d_run.dry_files,
        "deltavacuum DRY RUN directories": d_run.dry_dirs,
        "Spark deleted (real run)": pre.data_files() - s_run.after.data_files(),
        "deltavacuum deleted (real run)": pre.data_files() - d_run.after.data_files(),
    }
    return out

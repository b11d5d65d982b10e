"""What counts as a difference between Spark's VACUUM and deltavacuum, and which differences the
contract (../shared/docs/VACUUM-SPEC.md, docs/design.md) allows.

Both engines run on byte-identical copies of one aged table; the comparison is on what each one
deleted:
  - as printed by the DRY RUN (Spark: absolute, URI-decoded paths; deltavacuum: raw keys), and
  - as physically missing after the real run (data files, their Hadoop .crc companions, and
    directories), which also covers what a DRY RUN does not print.

A difference is a *violation* (the test fails) unless one of the rules in INTENDED explains it.
"""

from __future__ import annotations

import re

import dataclasses

from . import fs
from .engines import DVResult

# Every intended difference, with its mark in the contract and the reason. docs/conformance.md
# repeats this table; the report names the tag of each difference it saw.
INTENDED = {
    "beyond:emptied-directory": (
        "[beyond]",
        "deltavacuum removes, bottom-up in the same run, directories that are empty once the run's "
        "files are gone (and nested empty directories); Spark removes only directories that were "
        "already empty when it listed them, one level per run. Allowed only where Spark's own "
        "result has no file left under the directory, so Spark's next runs would remove it too."),
    "safer:fresh-empty-directory": (
        "[safer]",
        "Spark removes empty directories of any age; deltavacuum keeps an empty directory whose "
        "modification time is not before the cutoff (a writer may be about to use it). Allowed only "
        "for directories whose modification time is at or after deltavacuum's cutoff."),
    "lite:keeps-directories": (
        "spec 9.5",
        "VACUUM LITE in deltavacuum never deletes directories; Spark's LITE run treats the parent "
        "directories of its candidates like FULL treats listed directories and may remove one "
        "that the run emptied."),
    "safer:last-vacuum-info-after-full": (
        "[safer]",
        "after a FULL run Spark writes _last_vacuum_info as {} (which blocks a later LITE run on a "
        "table whose first commits were cleaned up); deltavacuum writes "
        "latestCommitVersionOutsideOfRetentionWindow, as a LITE run does (spec 9.6)."),
    "metric:numVacuumedDirectories": (
        "history",
        "Spark's VACUUM END metric numVacuumedDirectories counts the directories it listed (plus "
        "the root), not the ones it removed; deltavacuum records the number it removed."),
}


# Bugs this harness found in deltavacuum, each with the check that recognises it. While a bug's
# tag is in KNOWN_BUGS, a scenario whose only differences are that bug is marked xfail with the
# reason (any other difference still fails it); otherwise the bug is a plain failure, so that a
# fixed bug that comes back fails the run. Both were fixed in deltavacuum (commits 65ac5b4 and
# ec0b0ef), so KNOWN_BUGS is empty.
BUGS = {
    "bug:lite-crc-companions": (
        "deltavacuum VACUUM LITE leaves the Hadoop .crc companion of every file it deletes (its LITE "
        "plan named no checksumFile, FULL plans did). Spark's LITE run deletes each companion with "
        "its file (Hadoop's local file system), and spec section 5 says the companion is deleted "
        "with the file in every mode."),
    "bug:stale-last-vacuum-info-crc": (
        "deltavacuum rewrites _delta_log/_last_vacuum_info but leaves the Hadoop checksum "
        "._last_vacuum_info.crc that Spark wrote beside the previous content. Hadoop's local file "
        "system then fails Spark's read with a checksum error, Spark takes the file as corrupt "
        "(LastVacuumInfo.getLastVacuumInfo returns None), and Spark's next VACUUM LITE refuses "
        "with DELTA_CANNOT_VACUUM_LITE on a table whose first commits were cleaned up (or starts "
        "again from the first commit). The harness removes the stale checksum and goes on."),
}
KNOWN_BUGS: set[str] = set()


@dataclasses.dataclass
class Outcome:
    scenario: str
    violations: list[str] = dataclasses.field(default_factory=list)
    intended: list[tuple[str, list[str]]] = dataclasses.field(default_factory=list)
    info: list[str] = dataclasses.field(default_factory=list)
    bugs: list[tuple[str, list[str]]] = dataclasses.field(default_factory=list)
    context: dict = dataclasses.field(default_factory=dict)  # printed when the test fails

    def violate(self, what: str, keys=None) -> None:
        self.violations.append(what + (_fmt(keys) if keys is not None else ""))

    def allow(self, tag: str, keys) -> None:
        assert tag in INTENDED, tag
        if keys:
            self.intended.append((tag, sorted(keys)))

    def bug(self, tag: str, keys) -> None:
        """A difference recognised as one of BUGS: tolerated (xfail) only while it is known."""
        assert tag in BUGS, tag
        if not keys:
            return
        if tag in KNOWN_BUGS:
            self.bugs.append((tag, sorted(keys)))
        else:
            self.violate(f"{tag}: {BUGS[tag]}", keys)

    def xfail_reason(self) -> str:
        tags = sorted({t for t, _ in self.bugs})
        return ("known deltavacuum bug(s) " + ", ".join(tags) +
                " (BUGS in conformance/harness/compare.py, docs/conformance.md)")

    def note(self, what: str, keys=None) -> None:
        self.info.append(what + (_fmt(keys) if keys is not None else ""))

    def failure_message(self) -> str:
        lines = [f"{self.scenario}: {len(self.violations)} difference(s) the contract does not allow:"]
        lines += [f"  - {v}" for v in self.violations]
        for name, value in self.context.items():
            lines.append(f"  {name}:{_fmt(value)}")
        return "\n".join(lines)


def _fmt(keys) -> str:
    if isinstance(keys, (set, frozenset, list, tuple)):
        items = sorted(keys)
        if not items:
            return " (none)"
        return "".join(f"\n      {k!r}" for k in items)
    return f" {keys!r}"


@dataclasses.dataclass
class Run:
    """What one engine did to its copy: its DRY RUN's keys and the tree after its real run."""

    dry_files: set[str]
    dry_dirs: set[str]
    dry_missing: set[str]  # printed by the DRY RUN but not on disk
    after: fs.Tree


def split_dry(pre: fs.Tree, keys) -> tuple[set[str], set[str], set[str]]:
    files, dirs, missing = set(), set(), set()
    for k in keys:
        if k in pre.files:
            files.add(k)
        elif k in pre.dirs:
            dirs.add(k)
        else:
            missing.add(k)
    return files, dirs, missing


def deleted_files(pre: fs.Tree, after: fs.Tree) -> set[str]:
    # The released tickets of the table's lock (docs/lock.md), left by an earlier deltavacuum
    # run and cleaned up by the next, are deltavacuum's own bookkeeping, not the table's files.
    return {k for k in pre.data_files() - after.data_files() if not _is_lock_file(k)}


def deleted_dirs(pre: fs.Tree, after: fs.Tree) -> set[str]:
    return pre.data_dirs() - after.data_dirs()


def _companion_of(key: str) -> str | None:
    """The file a Hadoop checksum key '.<name>.crc' goes with, or None."""
    d, _, name = key.rpartition("/")
    if not (name.startswith(".") and name.endswith(".crc")) or len(name) <= 5:
        return None
    main = name[1:-4]
    return f"{d}/{main}" if d else main


def _is_run_record(key: str) -> bool:
    name = key.removeprefix("_deltavacuum/runs/")
    return name != key and "/" not in name and name.endswith(".jsonl.gz")


_LOCK_FILE = re.compile(r"\d{20}\.(json|released|heartbeat)")


def _is_lock_file(key: str) -> bool:
    """A ticket of the table's lock (docs/lock.md), its release marker or its heartbeat."""
    name = key.removeprefix("_deltavacuum/lock/")
    return name != key and _LOCK_FILE.fullmatch(name) is not None


def with_companions(pre: fs.Tree, keys: set[str]) -> set[str]:
    """Keys plus the Hadoop .crc companion of each, where one exists."""
    return keys | {fs.crc_companion(k) for k in keys if fs.crc_companion(k) in pre.files}


def compare_with_spark(out: Outcome, pre: fs.Tree, spark: Run, dv: Run, dv_dry: DVResult,
                       dv_real: DVResult, lite: bool) -> None:
    """The rules. `pre` is the aged table before either run (the copies are identical)."""
    # 1. DRY RUN, files: deltavacuum must never list a file Spark keeps; every file Spark lists
    #    and deltavacuum keeps needs a documented reason (none is known for files written by
    #    Spark or delta-rs: the [safer] file rules concern paths these engines do not write).
    out_dv = dv.dry_files - spark.dry_files
    if out_dv:
        out.violate("DRY RUN: deltavacuum lists files Spark's DRY RUN keeps", out_dv)
    out_spark = spark.dry_files - dv.dry_files
    if out_spark:
        out.violate("DRY RUN: Spark lists files deltavacuum keeps (no documented reason)", out_spark)
    if lite:
        # LITE names its candidates from the log without listing: both engines may name files a
        # previous run already deleted. Those must be the same names too.
        if spark.dry_missing or dv.dry_missing:
            out.note("LITE DRY RUN names files that no longer exist (Spark and deltavacuum alike)",
                     spark.dry_missing | dv.dry_missing)
        if dv.dry_missing - spark.dry_missing:
            out.violate("LITE DRY RUN: deltavacuum names missing files Spark does not", dv.dry_missing - spark.dry_missing)
        if spark.dry_missing - dv.dry_missing:
            out.violate("LITE DRY RUN: Spark names missing files deltavacuum does not", spark.dry_missing - dv.dry_missing)
    else:
        if spark.dry_missing:
            out.note("Spark's DRY RUN lists paths that do not exist (not compared)", spark.dry_missing)
        if dv.dry_missing:
            out.violate("deltavacuum's DRY RUN lists paths that do not exist", dv.dry_missing)

    # 2. Real run, physically: every file (data, deletion vectors, change data, untracked, and
    #    the .crc companions that Hadoop deletes with them).
    s_del, d_del = deleted_files(pre, spark.after), deleted_files(pre, dv.after)
    if d_del - s_del:
        out.violate("real run: deltavacuum deleted files that Spark's real run kept", d_del - s_del)
    kept = s_del - d_del
    if lite:
        left_crc = {k for k in kept if _companion_of(k) in d_del}
        out.bug("bug:lite-crc-companions", left_crc)
        kept -= left_crc
    if kept:
        out.violate("real run: Spark deleted files that deltavacuum kept (no documented reason)", kept)
    created = (dv.after.data_files() - pre.data_files()) | (dv.after.data_dirs() - pre.data_dirs())
    # The run record (deltavacuum runs / undo) and the table's lock are what a real run adds
    # outside the log: one _deltavacuum/runs/<id>.jsonl.gz, and the lock's last ticket (with its
    # release marker), in a folder whose '_' hides it from readers and VACUUM.
    records = {k for k in created if _is_run_record(k)}
    locks = {k for k in created if _is_lock_file(k)}
    run_id = dv_real.doc.get("runId")
    if not run_id or f"_deltavacuum/runs/{run_id}.jsonl.gz" not in records:
        out.violate(f"deltavacuum's real run kept no run record under _deltavacuum/runs/ (runId {run_id!r})")
    created -= records | locks | {"_deltavacuum", "_deltavacuum/runs", "_deltavacuum/lock"}
    if created:
        out.violate("deltavacuum created files or directories outside _delta_log", created)

    # 3. deltavacuum's DRY RUN is exactly its real run (spec 12), companions included.
    want = dv.dry_files | set(dv_dry.checksum_files)
    if d_del != want:
        out.violate("deltavacuum's real run deleted other files than its DRY RUN listed: "
                    f"deleted-not-listed {sorted(d_del - want)}, listed-not-deleted {sorted(want - d_del)}")
    if sorted(dv_dry.files) != sorted(dv_real.files):
        out.violate("deltavacuum's DRY RUN and real run planned different files")
    if set(dv_dry.directories) != set(dv_real.directories):
        out.violate("deltavacuum's DRY RUN and real run planned different directories")
    for c in dv_dry.checksum_files:
        if c not in pre.files:
            out.violate("deltavacuum names a checksum companion that does not exist", [c])

    # Spark's own consistency is recorded, not enforced (it is the reference).
    s_want = with_companions(pre, spark.dry_files)
    if s_del != s_want:
        out.note("Spark's real run deleted other files than its DRY RUN listed: "
                 f"deleted-not-listed {sorted(s_del - s_want)}, listed-not-deleted {sorted(s_want - s_del)}")

    # 4. Directories, after the real runs.
    s_dirs, d_dirs = deleted_dirs(pre, spark.after), deleted_dirs(pre, dv.after)
    if set(dv_real.directories) != d_dirs:
        out.violate("deltavacuum reports other deleted directories than it removed: reported "
                    f"{sorted(dv_real.directories)}, removed {sorted(d_dirs)}")
    beyond, bad = set(), set()
    for d in d_dirs - s_dirs:
        (beyond if not spark.after.files_under(d) else bad).add(d)
    out.allow("beyond:emptied-directory", beyond)
    if bad:
        out.violate("deltavacuum removed directories under which Spark keeps files", bad)
    kept = s_dirs - d_dirs
    if lite:
        out.allow("lite:keeps-directories", kept)
    else:
        fresh = {d for d in kept if pre.dirs[d] >= dv_real.cutoff}
        out.allow("safer:fresh-empty-directory", fresh)
        if kept - fresh:
            out.violate("Spark removed old empty directories that deltavacuum kept", kept - fresh)

    # 5. The log: nothing in it is deleted, except the Hadoop checksum of the _last_vacuum_info
    #    that deltavacuum rewrites (Spark rewrites that checksum; a stale one breaks Spark's read).
    gone = pre.log_files() - dv.after.log_files()
    lvi_crc = f"{fs.LOG_DIR}/._last_vacuum_info.crc"
    if lvi_crc in gone and f"{fs.LOG_DIR}/_last_vacuum_info" in dv.after.files:
        out.note("deltavacuum removed the checksum of the _last_vacuum_info it rewrote", [lvi_crc])
        gone.discard(lvi_crc)
    if gone:
        out.violate("deltavacuum deleted files under _delta_log/", gone)


def compare_history(out: Outcome, spark_commits: list[dict], dv_commits: list[dict]) -> None:
    """The commits each real run appended: VACUUM START and VACUUM END, same parameters."""
    s_ops = [c.get("operation") for c in spark_commits]
    d_ops = [c.get("operation") for c in dv_commits]
    if s_ops != d_ops:
        out.violate(f"history: Spark appended {s_ops}, deltavacuum appended {d_ops}")
        return
    for s, d in zip(spark_commits, dv_commits):
        sp, dp = set(s.get("operationParameters", {})), set(d.get("operationParameters", {}))
        if not sp <= dp:
            out.violate(f"history: {s['operation']} parameters {sorted(sp - dp)} missing in deltavacuum's")
        if (extra := dp - sp):
            out.note(f"history: {s['operation']}: deltavacuum adds parameters {sorted(extra)}")
        sm, dm = s.get("operationMetrics", {}), d.get("operationMetrics", {})
        if not set(sm) <= set(dm):
            out.violate(f"history: {s['operation']} metrics {sorted(set(sm) - set(dm))} missing in deltavacuum's")
        if s["operation"] == "VACUUM END":
            if sm.get("numVacuumedDirectories") != dm.get("numVacuumedDirectories"):
                out.allow("metric:numVacuumedDirectories",
                          [f"Spark {sm.get('numVacuumedDirectories')}, deltavacuum {dm.get('numVacuumedDirectories')}"])
        for k in ("status",):
            if s.get("operationParameters", {}).get(k) != d.get("operationParameters", {}).get(k):
                out.violate(f"history: {s['operation']} {k}: Spark {s['operationParameters'].get(k)!r}, "
                            f"deltavacuum {d['operationParameters'].get(k)!r}")


def compare_delta_rs(out: Outcome, pre: fs.Tree, spark: Run, dv: Run, rs_dry: set[str],
                     rs_after: fs.Tree) -> list[str]:
    """Where delta-rs's vacuum(full=True) differs from both Spark and deltavacuum (recorded only)."""
    notes = []
    s_del, d_del = deleted_files(pre, spark.after), deleted_files(pre, dv.after)
    r_del = deleted_files(pre, rs_after)
    both = s_del & d_del
    more = r_del - (s_del | d_del)
    less = both - r_del
    if more:
        notes.append("delta-rs deletes files that Spark and deltavacuum keep:" + _fmt(more))
    if less:
        notes.append("delta-rs keeps files that Spark and deltavacuum delete:" + _fmt(less))
    r_dirs = deleted_dirs(pre, rs_after)
    s_dirs, d_dirs = deleted_dirs(pre, spark.after), deleted_dirs(pre, dv.after)
    if r_dirs - (s_dirs | d_dirs):
        notes.append("delta-rs removes directories that Spark and deltavacuum keep:" + _fmt(r_dirs - (s_dirs | d_dirs)))
    if (s_dirs & d_dirs) - r_dirs:
        notes.append("delta-rs keeps directories that Spark and deltavacuum remove:" + _fmt((s_dirs & d_dirs) - r_dirs))
    rs_files = {k for k in rs_dry if k in pre.files}
    if rs_files != (r_del & rs_files) or (r_del - rs_files):
        notes.append("delta-rs's real run differs from its DRY RUN:" +
                     _fmt({f"listed-not-deleted {k}" for k in rs_files - r_del} |
                          {f"deleted-not-listed {k}" for k in r_del - rs_files}))
    return notes

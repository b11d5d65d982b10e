"""The three engines, each behind a small interface: Spark (Delta Lake), deltavacuum, delta-rs.

Every VACUUM result is returned as raw keys relative to the table root, so that the three can be
compared as sets.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import re
import subprocess
import urllib.parse

from . import fs

CHECK_OFF = "spark.databricks.delta.retentionDurationCheck.enabled"


def quote_path(path: str) -> str:
    """A table path as Spark SQL's delta.`path` identifier."""
    if "`" in path:
        raise ValueError(f"table path with a backtick: {path}")
    return f"delta.`{path}`"


def spark_key(table_root: str, printed: str) -> str:
    """Spark's DRY RUN prints absolute paths already URI-decoded by Hadoop ('file:/t/p=a b/x').
    Returns the raw key relative to the table root ('p=a b/x')."""
    p = printed
    if p.startswith("file://"):
        p = p[len("file://"):]
    elif p.startswith("file:"):
        p = p[len("file:"):]
    root = os.path.realpath(table_root).rstrip("/") + "/"
    if not p.startswith(root):
        raise AssertionError(f"Spark printed a path outside the table {root}: {printed}")
    return p[len(root):]


@dataclasses.dataclass
class EngineError(Exception):
    engine: str
    error_class: str
    message: str

    def __str__(self) -> str:
        return f"{self.engine}: [{self.error_class}] {self.message[:2000]}"


def _canonical_rows(rows: list[tuple]) -> list[tuple]:
    return sorted(tuple("NULL" if v is None else str(v) for v in r) for r in rows)


class Spark:
    """Spark with Delta Lake, through one SparkSession."""

    def __init__(self, session):
        self.session = session

    @property
    def version(self) -> str:
        return self.session.version

    def sql(self, stmt: str):
        return self.session.sql(stmt)

    def set_conf(self, key: str, value: str | None) -> None:
        if value is None:
            self.session.conf.unset(key)
        else:
            self.session.conf.set(key, value)

    def vacuum(self, root: str, retain_hours: float | None = None, dry_run: bool = False,
               mode: str | None = None, check: bool = False) -> list[str]:
        """Runs VACUUM; returns the DRY RUN's keys (files and directories), or [] for a real run.
        Raises EngineError with Spark's error class when Spark refuses."""
        stmt = f"VACUUM {quote_path(root)}"
        if mode:
            stmt += f" {mode}"
        if retain_hours is not None:
            stmt += f" RETAIN {retain_hours:g} HOURS"
        if dry_run:
            stmt += " DRY RUN"
        self.set_conf(CHECK_OFF, "true" if check else "false")
        try:
            rows = self.sql(stmt).collect()
        except Exception as e:  # py4j / pyspark errors: keep the error class
            raise EngineError("spark", _spark_error_class(e), str(e)) from None
        finally:
            self.set_conf(CHECK_OFF, "false")
        if not dry_run:
            return []
        return [spark_key(root, r[0]) for r in rows]

    def rows(self, root: str) -> list[tuple]:
        """Every row of the current version, read from the data files (collect, not a count
        that Delta could answer from statistics)."""
        df = self.session.read.format("delta").load(root)
        cols = sorted(df.columns)
        return _canonical_rows([tuple(r[c] for c in cols) for r in df.collect()])

    def rows_at(self, root: str, version: int) -> list[tuple]:
        """Every row of an older version (time travel), read from its data files."""
        df = self.session.read.format("delta").option("versionAsOf", version).load(root)
        cols = sorted(df.columns)
        return _canonical_rows([tuple(r[c] for c in cols) for r in df.collect()])

    def history(self, root: str) -> list[dict]:
        rows = self.sql(f"DESCRIBE HISTORY {quote_path(root)}").collect()
        return [r.asDict(recursive=True) for r in rows]

    def properties(self, root: str) -> dict[str, str]:
        return {r["key"]: r["value"] for r in self.sql(f"SHOW TBLPROPERTIES {quote_path(root)}").collect()}


def _spark_error_class(e: Exception) -> str:
    """Spark's error class (condition): from the exception where pyspark converted it, else the
    first [ERROR_CLASS] in the message (a Py4JJavaError around a Delta exception)."""
    for attr in ("getCondition", "getErrorClass"):
        f = getattr(e, attr, None)
        if f:
            try:
                c = f()
            except Exception:  # noqa: BLE001
                c = None
            if c:
                return c
    m = re.search(r"\[([A-Z][A-Z0-9_]{3,})\]", str(e))
    return m.group(1) if m else type(e).__name__


@dataclasses.dataclass
class DVResult:
    """deltavacuum's --json document."""

    doc: dict

    @property
    def files(self) -> list[str]:
        return [f["path"] for f in self.doc.get("files") or []]

    @property
    def checksum_files(self) -> list[str]:
        return [f["checksumFile"] for f in self.doc.get("files") or [] if f.get("checksumFile")]

    @property
    def directories(self) -> list[str]:
        return [d["path"] for d in self.doc.get("directories") or []]

    @property
    def cutoff(self) -> float:
        return parse_time(self.doc["cutoff"])

    def __getitem__(self, k):
        return self.doc[k]

    def get(self, k, default=None):
        return self.doc.get(k, default)


def parse_time(s: str) -> float:
    """RFC 3339 with up to nanoseconds, as Go prints it."""
    m = re.fullmatch(r"(.*?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", s)
    if not m:
        raise ValueError(f"not an RFC 3339 time: {s}")
    head, frac, tz = m.group(1), m.group(2) or "0", m.group(3)
    t = dt.datetime.fromisoformat(head + ("+00:00" if tz == "Z" else tz)).timestamp()
    return t + int(frac[:9].ljust(9, "0")) / 1e9


class DeltaVacuum:
    """The deltavacuum binary."""

    def __init__(self, binary: str):
        self.binary = binary

    def run(self, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, *args], capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "NO_COLOR": "1"})

    def vacuum(self, root: str, retain_hours: float | None = None, dry_run: bool = False,
               mode: str | None = None, check: bool = False, extra: tuple[str, ...] = ()) -> DVResult:
        args = ["vacuum", root, "--json", *extra]
        if retain_hours is not None:
            args += ["--retain-hours", f"{retain_hours:g}"]
        if dry_run:
            args.append("--dry-run")
        if mode == "LITE":
            args.append("--lite")
        elif mode == "FULL":
            args.append("--full")
        if not check:
            args += ["--conf", f"{CHECK_OFF}=false"]
        p = self.run(*args)
        if p.returncode != 0:
            raise EngineError("deltavacuum", _dv_error_class(p.stderr), p.stderr.strip() or p.stdout)
        return DVResult(json.loads(p.stdout))

    def undo(self, root: str, *extra: str) -> dict:
        p = self.run("undo", root, "--json", *extra)
        if p.returncode != 0:
            raise EngineError("deltavacuum", _dv_error_class(p.stderr), p.stderr.strip() or p.stdout)
        return json.loads(p.stdout)

    def sql(self, statements: str, json_out: bool = False) -> str:
        args = ["sql", statements] + (["--json"] if json_out else [])
        p = self.run(*args)
        if p.returncode != 0:
            raise EngineError("deltavacuum", _dv_error_class(p.stderr), p.stderr.strip() or p.stdout)
        return p.stdout


def _dv_error_class(stderr: str) -> str:
    for token in ("DELTA_CANNOT_VACUUM_LITE", "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE",
                  "not a Delta table", "retentionDurationCheck", "less than 0 hours"):
        if token in stderr:
            return token
    return "error"


class DeltaRS:
    """delta-rs (the deltalake Python package)."""

    @property
    def version(self) -> str:
        import deltalake
        return deltalake.__version__

    def vacuum(self, root: str, retain_hours: int | None = 0, dry_run: bool = False) -> list[str]:
        from deltalake import DeltaTable
        try:
            out = DeltaTable(root).vacuum(retention_hours=retain_hours, dry_run=dry_run,
                                          enforce_retention_duration=False, full=True)
        except Exception as e:
            raise EngineError("delta-rs", type(e).__name__, str(e)) from None
        keys = []
        for p in out:
            if "://" in p:  # an absolute URI: make it a raw relative key
                p = urllib.parse.unquote(urllib.parse.urlparse(p).path)
                p = os.path.relpath(p, os.path.realpath(root))
            keys.append(p)
        return keys

    def rows(self, root: str) -> list[tuple]:
        from deltalake import DeltaTable
        try:
            t = DeltaTable(root).to_pyarrow_table()
        except Exception as e:
            raise EngineError("delta-rs", type(e).__name__, str(e)) from None
        cols = sorted(t.column_names)
        data = t.select(cols).to_pylist()
        return _canonical_rows([tuple(r[c] for c in cols) for r in data])

    def history(self, root: str) -> list[dict]:
        from deltalake import DeltaTable
        return DeltaTable(root).history()


def last_vacuum_info(root: str):
    p = os.path.join(root, fs.LOG_DIR, "_last_vacuum_info")
    if not os.path.exists(p):
        return None
    with open(p, encoding="utf-8") as f:
        text = f.read()
    try:
        return json.loads(text)
    except ValueError:
        return text

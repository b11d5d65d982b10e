"""Typed results of the deltavacuum commands (their --json documents as dataclasses).

Every result keeps the whole JSON document in ``raw``: the fields below are the ones notebooks
use; ``raw`` has the rest (docs/insight.md and docs/spec.md define them)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, List, Mapping, Optional

_TS = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?$")


def parse_time(s: Optional[str]) -> Optional[datetime]:
    """An RFC 3339 time of the tool (nanoseconds, Z) as an aware datetime (microseconds)."""
    if not s:
        return None
    m = _TS.match(s)
    if not m:
        return None
    frac = (m.group(2) or "0")[:6].ljust(6, "0")
    tz = m.group(3) or "Z"
    tz = "+00:00" if tz == "Z" else tz
    dt = datetime.fromisoformat(f"{m.group(1)}.{frac}{tz}")
    return dt.astimezone(timezone.utc)


@dataclass(frozen=True)
class VacuumFile:
    """A file VACUUM deletes (or would, in a dry run). path is relative to the table."""

    path: str
    size: int
    modification_time: Optional[datetime]
    reason: str  # untracked, tombstoned, ...


@dataclass(frozen=True)
class Undoability:
    """Whether deltavacuum undo can bring back what a run deletes: ``possible`` is "yes", "no"
    or "unknown" (the store's settings could not be read); ``via`` is "trash" or
    "store recovery"; ``why`` says it in words, with what to do when it cannot."""

    possible: str
    via: str
    why: str

    @classmethod
    def from_json(cls, d: Optional[Mapping[str, Any]]) -> Optional["Undoability"]:
        if not d:
            return None
        return cls(str(d.get("possible", "")), str(d.get("via", "")), str(d.get("why", "")))


@dataclass
class VacuumResult:
    """The plan of a DRY RUN, or what a real run did. ``files`` are the files planned."""

    table: str
    version: int
    mode: str
    dry_run: bool
    status: str
    retention_hours: float
    cutoff: Optional[datetime]
    files: List[VacuumFile]
    directories: List[str]
    num_files_to_delete: int
    size_of_data_to_delete: int
    num_deleted_files: int
    num_deleted_directories: int
    size_of_deleted_data: int
    run_id: Optional[str]
    warnings: List[str]
    raw: Dict[str, Any] = field(repr=False)
    undo: Optional[Undoability] = None
    #: The planned files a run that stopped part-way (interrupted, cancelled) did not delete:
    #: every one of them, those it never sent included. The next run plans them again.
    not_reached: List[str] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        """Bytes of the files planned for deletion."""
        return self.size_of_data_to_delete

    @property
    def paths(self) -> List[str]:
        return [f.path for f in self.files]

    def to_pyarrow(self) -> Any:
        """The planned files as a pyarrow.Table (needs pyarrow)."""
        try:
            import pyarrow as pa
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("to_pyarrow needs pyarrow: pip install pyarrow") from e
        return pa.table({
            "path": pa.array([f.path for f in self.files], pa.string()),
            "size": pa.array([f.size for f in self.files], pa.int64()),
            "modification_time": pa.array([f.modification_time for f in self.files], pa.timestamp("us", tz="UTC")),
            "reason": pa.array([f.reason for f in self.files], pa.string()),
        })

    def to_pandas(self) -> Any:
        """The planned files as a pandas.DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("to_pandas needs pandas: pip install pandas") from e
        return pd.DataFrame({
            "path": pd.Series([f.path for f in self.files], dtype="object"),
            "size": pd.Series([f.size for f in self.files], dtype="int64"),
            "modification_time": pd.to_datetime([f.modification_time for f in self.files], utc=True),
            "reason": pd.Series([f.reason for f in self.files], dtype="object"),
        })

    @classmethod
    def from_json(cls, d: Mapping[str, Any], warnings: Optional[List[str]] = None) -> "VacuumResult":
        files = [VacuumFile(str(f["path"]), int(f.get("size", 0)), parse_time(f.get("modificationTime")), str(f.get("reason", "")))
                 for f in d.get("files") or []]
        return cls(
            table=str(d.get("table", "")),
            version=int(d.get("version", -1)),
            mode=str(d.get("mode", "")),
            dry_run=bool(d.get("dryRun", False)),
            status=str(d.get("status", "")),
            retention_hours=float(d.get("retentionHours", 0)),
            cutoff=parse_time(d.get("cutoff")),
            files=files,
            directories=[str(x.get("path", "")) for x in d.get("directories") or []],
            num_files_to_delete=int(d.get("numFilesToDelete", 0)),
            size_of_data_to_delete=int(d.get("sizeOfDataToDelete", 0)),
            num_deleted_files=int(d.get("numDeletedFiles", 0)),
            num_deleted_directories=int(d.get("numDeletedDirectories", 0)),
            size_of_deleted_data=int(d.get("sizeOfDeletedData", 0)),
            run_id=d.get("runId") or None,
            warnings=list(d.get("warnings") or []) + list(warnings or []),
            raw=dict(d),
            undo=Undoability.from_json(d.get("undo")),
            not_reached=[str(p) for p in d.get("notReached") or []],
        )


@dataclass(frozen=True)
class HistoryEntry:
    """One version of DESCRIBE HISTORY."""

    version: int
    timestamp: Optional[datetime]
    operation: str
    operation_parameters: Dict[str, Any]
    operation_metrics: Dict[str, Any]
    engine_info: str
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "HistoryEntry":
        return cls(int(d.get("version", -1)), parse_time(d.get("timestamp")), str(d.get("operation", "")),
                   dict(d.get("operationParameters") or {}), dict(d.get("operationMetrics") or {}),
                   str(d.get("engineInfo", "")), dict(d))


@dataclass(frozen=True)
class RunSummary:
    """A VACUUM run recorded beside the table (deltavacuum runs).

    ``state`` is the run's one state, as the command line, the service and its pages show it:
    "running", "completed", "failed" (an interrupted run too), "partially undone", "undone" or
    "unreadable"; ``state_detail`` says it in words. ``undone_at`` is set only once an undo
    brought every file back; ``undo`` says whether an undo can bring its files back now ("no"
    once an undo brought them all back, or its trash was purged: ``purged_at``)."""

    id: str
    status: str
    complete: bool
    started_at: Optional[datetime]
    finished_at: Optional[datetime]
    mode: str
    num_files: int
    bytes: int
    undone_at: Optional[datetime]
    raw: Dict[str, Any] = field(repr=False)
    state: str = ""
    state_detail: str = ""
    undo: Optional[Undoability] = None
    purged_at: Optional[datetime] = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "RunSummary":
        purged = d.get("purged") or {}
        return cls(str(d.get("id", "")), str(d.get("status", "")), bool(d.get("complete", False)),
                   parse_time(d.get("startedAt")), parse_time(d.get("finishedAt")), str(d.get("mode", "")),
                   int(d.get("numFiles", 0)), int(d.get("bytes", 0)), parse_time(d.get("undoneAt")), dict(d),
                   str(d.get("state", "")), str(d.get("stateDetail", "")), Undoability.from_json(d.get("undo")),
                   parse_time(purged.get("at")))


@dataclass(frozen=True)
class UndoResult:
    """What deltavacuum undo restored. ``num_restored`` counts the Hadoop checksum companions
    too; ``num_checksum_companions`` says how many of them there are (a run counts its files
    without them: ``num_restored - num_checksum_companions`` files)."""

    run: str
    table: str
    dry_run: bool
    via: str
    num_restored: int
    bytes_restored: int
    num_present: int
    num_not_restorable: int
    num_failed: int
    raw: Dict[str, Any] = field(repr=False)
    num_checksum_companions: int = 0

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "UndoResult":
        return cls(str(d.get("run", "")), str(d.get("table", "")), bool(d.get("dryRun", False)), str(d.get("via", "")),
                   int(d.get("numRestored", 0)), int(d.get("bytesRestored", 0)), int(d.get("numPresent", 0)),
                   int(d.get("numNotRestorable", 0)), int(d.get("numFailed", 0)), dict(d),
                   int(d.get("numChecksumCompanions", 0)))


@dataclass(frozen=True)
class InspectReport:
    """deltavacuum inspect: what VACUUM would reclaim now, later, at other retentions."""

    table: str
    version: int
    retention_hours: float
    reclaimable_files: int
    reclaimable_bytes: int
    reclaimable_cost_per_month: float
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "InspectReport":
        r = d.get("reclaimable") or {}
        return cls(str(d.get("table", "")), int(d.get("version", -1)), float(d.get("retentionHours", 0)),
                   int(r.get("files", 0)), int(r.get("bytes", 0)), float(r.get("costPerMonth", 0.0)), dict(d))


@dataclass(frozen=True)
class StatementResult:
    """The result of one SQL statement. ``vacuum`` is set for VACUUM, ``history`` for
    DESCRIBE HISTORY, ``properties`` for SHOW TBLPROPERTIES, ``version`` for an ALTER TABLE's commit."""

    statement: str
    kind: str
    table: Optional[str]
    vacuum: Optional[VacuumResult]
    history: Optional[List[HistoryEntry]]
    properties: Optional[Dict[str, str]]
    settings: Optional[Dict[str, str]]
    version: Optional[int]
    warnings: List[str]
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "StatementResult":
        v = d.get("vacuum")
        h = d.get("history")
        return cls(
            statement=str(d.get("statement", "")),
            kind=str(d.get("kind", "")),
            table=d.get("table"),
            vacuum=VacuumResult.from_json(v) if v else None,
            history=[HistoryEntry.from_json(x) for x in h] if h is not None else None,
            properties=d.get("properties"),
            settings=d.get("settings"),
            version=d.get("version"),
            warnings=list(d.get("warnings") or []),
            raw=dict(d),
        )

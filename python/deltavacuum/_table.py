"""DeltaTable and sql: the commands of the deltavacuum binary, with delta-rs's and Delta
Spark's keywords."""

from __future__ import annotations

import json
import math
import os
import re
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from . import _options
from ._progress import progress_callback
from ._redact import redact, sensitive_key
from ._run import Completed, ProgressCallback, message_of, run, warnings_of
from .errors import DeltaVacuumError, VacuumInterrupted, from_failure
from .results import HistoryEntry, InspectReport, RunSummary, StatementResult, UndoResult, VacuumResult, parse_time

SETTING_RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

ProgressArg = Union[None, bool, ProgressCallback]


def _documents(text: str) -> List[Any]:
    """The JSON documents the tool printed one after another."""
    dec = json.JSONDecoder()
    out: List[Any] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return out
        doc, i = dec.raw_decode(text, i)
        out.append(doc)


def _location_arg(path: Union[str, "os.PathLike[str]"]) -> str:
    """A table location for the command line: URIs as given, local paths made absolute (so that
    a relative path is never read as a table name)."""
    s = os.fspath(path)
    if _SCHEME.match(s):
        return s
    return os.path.abspath(os.path.expanduser(s))


def split_sas(uri: str, options: Optional[Mapping[str, Any]]) -> "tuple[str, Dict[str, Any]]":
    """A location URI without its shared access signature (https://acct.blob.core.windows.net/
    c/t?sv=...&sig=...), which then goes as the option azure_storage_sas_token: by environment,
    not on the command line. Other URIs are returned as they are."""
    opts = dict(options or {})
    base, q, query = uri.partition("?")
    if q and _SCHEME.match(uri) and "sig=" in query and not any(_options.canonical(k) == "azure_storage_sas_token" for k in opts):
        opts["azure_storage_sas_token"] = query
        return base, opts
    return uri, opts


def _conf_args(conf: Optional[Mapping[str, object]]) -> List[str]:
    args: List[str] = []
    for k, v in (conf or {}).items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        args.append(f"--conf={k}={v}")
    return args


class _Session:
    """What every command shares: how names resolve, storage options, settings, credentials."""

    def __init__(self, *, warehouse: Optional[str], catalog: Optional[str], storage_options: Optional[Mapping[str, Any]],
                 conf: Optional[Mapping[str, object]], use_notebook_credentials: bool) -> None:
        self.warehouse = warehouse
        self.catalog = catalog
        self.storage_options = dict(storage_options or {})
        self.conf = dict(conf or {})
        self.use_notebook_credentials = use_notebook_credentials

    def secrets(self) -> List[str]:
        """The values a repr or a message must not show: those of the storage options and
        settings whose keys name a secret (as the tool marks them), every line of each."""
        out: List[str] = []
        for k, v in [*self.storage_options.items(), *self.conf.items()]:
            if v is not None and not isinstance(v, bool) and sensitive_key(str(k)):
                out.append(str(v))
                out.extend(line.strip() for line in str(v).splitlines() if len(line.strip()) >= 8)
        return out

    def private(self, conf: Optional[Mapping[str, object]] = None) -> List[str]:
        """The session's arguments for the private channel (_run.run's private), never argv:
        the catalog, every storage option that does not go by environment, the settings. The
        warehouse goes by environment (env)."""
        a: List[str] = []
        if self.catalog:
            a.append(f"--catalog={os.fspath(self.catalog)}")
        opt_args, _ = _options.split(self.storage_options)
        merged = dict(self.conf)
        merged.update(conf or {})
        return a + opt_args + _conf_args(merged)

    def env(self, locations: Sequence[str]) -> Dict[str, str]:
        _, env = _options.split(self.storage_options)
        if self.warehouse:
            env["DELTAVACUUM_WAREHOUSE"] = self.warehouse  # what --warehouse would say, off argv
        env.update(_options.credentials_env([*locations, self.warehouse or "", os.environ.get("DELTAVACUUM_WAREHOUSE", "")],
                                            self.storage_options, self.use_notebook_credentials))
        return env

    def call(self, args: List[str], locations: Sequence[str], *, table: Optional[str] = None, private: Sequence[str] = (),
             conf: Optional[Mapping[str, object]] = None, stdin: Optional[str] = None,
             on_progress: Optional[ProgressCallback] = None) -> Completed:
        """Runs the command args (no location, no option: the command line is public). The
        session's arguments, the command's private ones (--inventory=...) and the table (after
        "--", so that no name or path is ever read as a flag) go by the private channel."""
        p = self.private(conf) + list(private)
        if table is not None:
            p += ["--", table]
        return run(args, env=self.env(locations), stdin=stdin, on_progress=on_progress, private=p)


def _fail(done: Completed, result: Any = None) -> DeltaVacuumError:
    return from_failure(message_of(done.stderr) or f"deltavacuum exited with status {done.returncode}", done.returncode, result)


class DeltaTable:
    """A Delta table for deltavacuum: a location (local path, abfss://, s3://, gs://, az://, ...)
    or, with DeltaTable.for_name, a table name resolved in a warehouse or catalog.

    storage_options take delta-rs's keys (azure_storage_account_key, aws_region, ...; see
    docs/python.md). Secrets among them reach the tool by environment variable, never on its
    command line. In a Fabric notebook, an Azure or OneLake table without a credential in
    storage_options takes the notebook's storage token (notebookutils.credentials.getToken).
    """

    def __init__(self, table_uri: Union[str, "os.PathLike[str]"], *, storage_options: Optional[Mapping[str, Any]] = None,
                 conf: Optional[Mapping[str, object]] = None, use_notebook_credentials: bool = True) -> None:
        self._arg, storage_options = split_sas(_location_arg(table_uri), storage_options)
        self._session = _Session(warehouse=None, catalog=None, storage_options=storage_options, conf=conf,
                                 use_notebook_credentials=use_notebook_credentials)

    @classmethod
    def for_name(cls, name: str, *, warehouse: Optional[str] = None, catalog: Optional[str] = None,
                 storage_options: Optional[Mapping[str, Any]] = None, conf: Optional[Mapping[str, object]] = None,
                 use_notebook_credentials: bool = True) -> "DeltaTable":
        """The table called name (schema.table, or table) in a warehouse (a Fabric lakehouse:
        .../lh.Lakehouse, whose Tables/<schema>/<table> it resolves; or a Spark warehouse,
        <schema>.db/<table>), or in a catalog file (YAML or TOML). Without either,
        $DELTAVACUUM_WAREHOUSE is the warehouse."""
        if not name or _SCHEME.match(name) or "/" in name or "\\" in name:
            raise ValueError(f"for_name takes a table name such as sales.orders, got {redact(repr(name))}: "
                             "give a location to DeltaTable(...) instead")
        t = cls.__new__(cls)
        t._arg = name
        t._session = _Session(warehouse=warehouse, catalog=catalog, storage_options=storage_options, conf=conf,
                              use_notebook_credentials=use_notebook_credentials)
        return t

    @property
    def table_uri(self) -> str:
        """The location or name as given to the tool."""
        return self._arg

    def __repr__(self) -> str:
        # Redacted as the tool's output is: a password in the URI, a secret storage option's
        # value, a key=value that names a secret (str() is this too).
        return f"DeltaTable({redact(repr(self._arg), self._session.secrets())})"

    # --- VACUUM -------------------------------------------------------------------------

    def vacuum(self, retention_hours: Optional[float] = None, dry_run: bool = True, enforce_retention_duration: bool = True,
               full: Optional[bool] = None, *, retentionHours: Optional[float] = None, lite: bool = False,
               progress: ProgressArg = None, trash: Optional[str] = None, record: bool = True,
               inventory: Optional[str] = None, inventory_format: Optional[str] = None,
               conf: Optional[Mapping[str, object]] = None, shard: Optional[str] = None,
               version: Optional[int] = None, streaming_checkpoints: Sequence[str] = ()) -> VacuumResult:
        """VACUUM the table. dry_run=True (the default, as delta-rs) only plans.

        retention_hours (or Delta Spark's retentionHours): the retention; default the table's
        delta.deletedFileRetentionDuration (168 hours). A retention shorter than the table's
        raises VacuumRefused unless enforce_retention_duration=False (Spark's
        spark.databricks.delta.retentionDurationCheck.enabled = false).
        full=True is VACUUM FULL; full=False (delta-rs: only what the log removed) or lite=True
        is VACUUM LITE; None is the tool's default (FULL unless the session says LITE).
        progress: None (a tqdm bar when tqdm is installed), False (none), True (a bar), or a
        function called with each Progress event.
        trash: move the files into this hidden folder of the table instead of deleting them.
        streaming_checkpoints: checkpoint locations of Structured Streaming queries that read the
        table: what each reads next is kept (the table property deltavacuum.streamingCheckpoints
        lists them too).
        version: plan on that snapshot version instead of the latest. shard: "I/N", vacuum
        only shard I of N (it needs version): N workers with one N and one version together do
        one run (docs/cli.md, --shard).
        An interrupt (the notebook's stop button) stops the run cleanly and raises
        VacuumInterrupted, a KeyboardInterrupt."""
        hours = _one_retention(retention_hours, retentionHours)
        args = ["vacuum", "--json", "--progress=json"]
        if hours is not None:
            args.append(f"--retain-hours={float(hours)!r}")
        if dry_run:
            args.append("--dry-run")
        if full is True and lite:
            raise TypeError("full=True and lite=True exclude each other")
        if full is True:
            args.append("--full")
        elif full is False or lite:
            args.append("--lite")
        if trash is not None:
            args.append(f"--trash={trash}")
        if not record:
            args.append("--no-run-record")
        if version is not None:
            args.append(f"--version={int(version)}")
        if shard is not None:
            args.append(f"--shard={shard}")
        private: List[str] = []
        if isinstance(streaming_checkpoints, str):
            raise TypeError("streaming_checkpoints is a list of locations, not one string")
        for loc in streaming_checkpoints:
            private.append(f"--streaming-checkpoint={loc}")  # a URI that may hold a SAS
        if inventory is not None:
            private.append(f"--inventory={inventory}")  # a URI that may hold a SAS
            if inventory_format:
                args.append(f"--inventory-format={inventory_format}")
        extra = dict(conf or {})
        if not enforce_retention_duration:
            extra[SETTING_RETENTION_CHECK] = "false"
        cb, close = progress_callback(progress, desc=f"VACUUM {self._arg}")
        try:
            done = self._session.call(args, [self._arg], table=self._arg, private=private, conf=extra, on_progress=cb)
        except VacuumInterrupted as e:
            close()
            c = e.result
            res = _vacuum_result(c) if isinstance(c, Completed) else None
            raise VacuumInterrupted(e.message, result=res) from None
        close()
        res = _vacuum_result(done)
        if done.returncode != 0:
            raise _fail(done, res)
        assert res is not None
        return res

    # --- the other commands -------------------------------------------------------------

    def inspect(self, retention_hours: Optional[float] = None, *, lite: bool = False,
                price_per_gb_month: Optional[float] = None, currency: Optional[str] = None,
                what_if_hours: Optional[Sequence[float]] = None, forecast_days: Optional[int] = None,
                top: Optional[int] = None) -> InspectReport:
        """What VACUUM would reclaim: now, over the next days, at other retentions, at what cost.
        Deletes and writes nothing."""
        args = ["inspect", "--json"]
        if retention_hours is not None:
            args.append(f"--retain-hours={float(retention_hours)!r}")
        if lite:
            args.append("--lite")
        if price_per_gb_month is not None:
            args.append(f"--price-per-gb-month={float(price_per_gb_month)!r}")
        if currency:
            args.append(f"--currency={currency}")
        if what_if_hours is not None:
            args.append("--what-if-hours=" + ",".join(repr(float(h)) for h in what_if_hours))
        if forecast_days is not None:
            args.append(f"--forecast-days={int(forecast_days)}")
        if top is not None:
            args.append(f"--top={int(top)}")
        return InspectReport.from_json(self._one(args))

    def history(self, limit: Optional[int] = None) -> List[HistoryEntry]:
        """DESCRIBE HISTORY: the table's versions, newest first."""
        args = ["history", "--json"]
        if limit is not None:
            if int(limit) < 1:
                raise ValueError(f"limit must be at least 1, got {limit!r}")
            args.append(f"--limit={int(limit)}")
        doc = self._one(args)
        return [HistoryEntry.from_json(h) for h in doc.get("history") or []]

    def runs(self) -> List[RunSummary]:
        """The VACUUM runs recorded beside the table, newest first (as the service's pages list
        them), each with its state and whether an undo can bring its files back now."""
        doc = self._one(["runs", "--json"])
        return [RunSummary.from_json(r) for r in doc]

    def undo(self, run_id: Optional[str] = None, *, dry_run: bool = False, unfinished: bool = False) -> UndoResult:
        """Restore what a VACUUM run deleted (the newest run not undone, or run_id) where the
        store or the run's trash kept it. A file at its path now is never replaced."""
        args = ["undo", "--json"]
        if run_id is not None:
            args.append(f"--run={run_id}")
        if dry_run:
            args.append("--dry-run")
        if unfinished:
            args.append("--unfinished")
        return UndoResult.from_json(self._one(args))

    def pin(self, reason: str, *, version: Optional[int] = None, timestamp: Optional[datetime] = None,
            duration: Union[str, timedelta] = "24h") -> "Pin":
        """Pin a version of the table for a reader VACUUM cannot see (a notebook job, a report):
        every VACUUM of deltavacuum keeps every snapshot from it to the newest until the pin
        ends (``duration``: "6h", "7d" or a timedelta; at most 30 days). Without ``version``
        or ``timestamp`` the version the table has now is pinned. Use it as a context manager
        to let go when the job ends::

            with table.pin(reason="month-end report"):
                ...  # read the table; no deltavacuum VACUUM deletes what this version needs

        Only deltavacuum honours pins: a Spark or delta-rs VACUUM of the table does not."""
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError("a pin needs a reason: who needs the version, and why")
        if version is not None and timestamp is not None:
            raise TypeError("give version or timestamp, not both")
        args = ["pin", "--json", f"--reason={reason}", f"--for={_duration_arg(duration)}"]
        if version is not None:
            if isinstance(version, bool) or not isinstance(version, int) or version < 0:
                raise ValueError(f"version must be a table version, 0 or more, got {version!r}")
            args.append(f"--version={version}")
        else:
            at = timestamp if timestamp is not None else datetime.now(timezone.utc)
            if at.tzinfo is None:
                raise ValueError("timestamp must carry a time zone (datetime(..., tzinfo=timezone.utc))")
            args.append("--timestamp=" + at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
        doc = self._one(args)
        return Pin(self, str(doc["id"]), int(doc["version"]), str(doc["reason"]), parse_time(doc.get("until")), dict(doc))

    def pins(self) -> List[Dict[str, Any]]:
        """The table's pins, each with its state ("active", "expired" or "invalid")."""
        return list(self._one(["pins", "--json"]).get("pins", []))

    def unpin(self, pin_id: str) -> None:
        """Remove pin ``pin_id`` of the table."""
        self._one(["unpin", "--json", f"--id={pin_id}"])

    def _one(self, args: List[str]) -> Any:
        """Runs a command that prints one JSON document."""
        done = self._session.call(args, [self._arg], table=self._arg)
        docs = _documents(done.stdout) if done.stdout.strip() else []
        if done.returncode != 0:
            raise _fail(done, docs[0] if docs else None)
        if len(docs) != 1:
            raise DeltaVacuumError(f"deltavacuum {args[0]} printed {len(docs)} JSON documents, expected one")
        return docs[0]


def _duration_arg(d: Union[str, timedelta]) -> str:
    if isinstance(d, timedelta):
        secs = int(d.total_seconds())
        if secs <= 0:
            raise ValueError(f"duration must be positive, got {d!r}")
        return f"{secs}s"
    if not isinstance(d, str) or not d.strip():
        raise ValueError(f"duration must be such as '6h' or '7d', or a timedelta, got {d!r}")
    return d


class Pin:
    """A pin of a table (DeltaTable.pin). As a context manager it removes itself on exit."""

    def __init__(self, table: DeltaTable, pin_id: str, version: int, reason: str, until: Optional[datetime],
                 raw: Dict[str, Any]) -> None:
        self.table, self.id, self.version, self.reason, self.until, self.raw = table, pin_id, version, reason, until, raw

    def __repr__(self) -> str:
        return f"Pin(id={self.id!r}, version={self.version}, until={self.until!r}, reason={self.reason!r})"

    def release(self) -> None:
        """Remove the pin."""
        self.table.unpin(self.id)

    def __enter__(self) -> "Pin":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def _one_retention(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is not None and b is not None and float(a) != float(b):
        raise TypeError(f"retention_hours={a!r} and retentionHours={b!r} disagree: give one")
    h = a if a is not None else b
    if h is not None and (isinstance(h, bool) or not isinstance(h, (int, float))):
        raise TypeError(f"retention_hours must be a number of hours, got {h!r}")
    if h is not None and not (math.isfinite(h) and h >= 0):
        raise ValueError(f"retention_hours must be a finite number of hours, 0 or more, got {h!r}")
    return h


def _vacuum_result(done: Completed) -> Optional[VacuumResult]:
    docs = _documents(done.stdout) if done.stdout.strip() else []
    return VacuumResult.from_json(docs[0], warnings_of(done.stderr)) if docs else None


def sql(statements: str, *, warehouse: Optional[str] = None, catalog: Optional[str] = None,
        storage_options: Optional[Mapping[str, Any]] = None, conf: Optional[Mapping[str, object]] = None,
        use_notebook_credentials: bool = True) -> List[StatementResult]:
    """Run statements as a Fabric or Databricks notebook runs them, separated by ';':
    VACUUM, SET, RESET, ALTER TABLE ... SET/UNSET TBLPROPERTIES, SHOW TBLPROPERTIES,
    DESCRIBE HISTORY/DETAIL, INSPECT, EXPLAIN VACUUM. Table names resolve in warehouse or
    catalog. The statements reach the tool on its standard input. Returns one result per
    statement; the first failing statement raises (its error has the results before it in
    ``result``)."""
    s = _Session(warehouse=warehouse, catalog=catalog, storage_options=storage_options, conf=conf,
                 use_notebook_credentials=use_notebook_credentials)
    done = s.call(["sql", "--json"], [statements], stdin=statements)
    results = [StatementResult.from_json(d) for d in (_documents(done.stdout) if done.stdout.strip() else [])]
    if done.returncode != 0:
        raise _fail(done, results)
    return results

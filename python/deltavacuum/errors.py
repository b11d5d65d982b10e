"""The exceptions of deltavacuum: each carries the message the tool printed."""

from __future__ import annotations

import re
from typing import Any, Optional

from ._redact import redact


class DeltaVacuumError(Exception):
    """A run of deltavacuum failed; str(e) is the tool's message (it names the table)."""

    def __init__(self, message: str, *, exit_code: Optional[int] = None, result: Any = None) -> None:
        # The tool's messages are redacted already; one made here may hold what a caller gave.
        message = redact(message)
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        #: What the run did before it failed (a VacuumResult of a partial run), or None.
        self.result = result


class UsageError(DeltaVacuumError, ValueError):
    """The call was wrong: an unknown setting or storage option, a bad argument."""


class TableNotFound(DeltaVacuumError):
    """The location does not exist or holds no Delta table (no _delta_log), or the name
    resolves to none."""


class VacuumRefused(DeltaVacuumError):
    """VACUUM refused to run, as Spark does: the retention is shorter than the table's.

    ``setting`` is the session setting that turns the check off
    (``spark.databricks.delta.retentionDurationCheck.enabled``); pass
    ``enforce_retention_duration=False`` only when no writer is running on the table.
    """

    def __init__(self, message: str, *, setting: Optional[str] = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.setting = setting


class VacuumInterrupted(KeyboardInterrupt):
    """The run was interrupted (the notebook's stop button, Ctrl-C): the tool was told to stop,
    finished its in-flight requests, recorded the run as failed (VACUUM END with status FAILED)
    and exited. ``result`` is what it reported, ``message`` what it printed."""

    def __init__(self, message: str, *, result: Any = None) -> None:
        message = redact(message)
        super().__init__(message)
        self.message = message
        self.result = result


_SETTING = re.compile(r"^\s*(spark\.[A-Za-z0-9_.]+)\s*=\s*\S+\s*$", re.M)


def from_failure(message: str, exit_code: int, result: Any = None) -> DeltaVacuumError:
    """The exception of a failed run, from its message and exit code."""
    message = message.strip()
    if "refusing to vacuum" in message:
        m = _SETTING.search(message)
        return VacuumRefused(message, setting=m.group(1) if m else None, exit_code=exit_code, result=result)
    if "is not a Delta table" in message or "unknown table" in message or "does not exist: check the path" in message:
        return TableNotFound(message, exit_code=exit_code, result=result)
    if exit_code == 2:
        return UsageError(message, exit_code=exit_code, result=result)
    return DeltaVacuumError(message, exit_code=exit_code, result=result)

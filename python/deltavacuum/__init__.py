"""deltavacuum: Delta Lake VACUUM without Spark, for notebooks.

    from deltavacuum import DeltaTable, sql
    dt = DeltaTable("abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse/Tables/sales/orders")
    plan = dt.vacuum(retention_hours=168)          # a dry run: nothing deleted
    plan.files, plan.total_bytes, plan.to_pandas()
    dt.vacuum(retention_hours=168, dry_run=False)  # delete

It runs the deltavacuum binary shipped in this package (docs/python.md).
"""

from ._binary import binary_path
from ._run import Progress
from ._table import SETTING_RETENTION_CHECK, DeltaTable, Pin, sql
from ._version import __git_version__, __version__
from .errors import DeltaVacuumError, TableNotFound, UsageError, VacuumInterrupted, VacuumRefused
from .results import (HistoryEntry, InspectReport, RunSummary, StatementResult, UndoResult, VacuumFile,
                      VacuumResult)

__all__ = [
    "DeltaTable", "Pin", "sql", "binary_path", "Progress", "SETTING_RETENTION_CHECK",
    "DeltaVacuumError", "TableNotFound", "UsageError", "VacuumInterrupted", "VacuumRefused",
    "HistoryEntry", "InspectReport", "RunSummary", "StatementResult", "UndoResult", "VacuumFile", "VacuumResult",
    "__version__", "__git_version__",
]

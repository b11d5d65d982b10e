"""The oldest supported Python (3.9): python/test.sh installs the SDIST there (its build
backend compiles the Go binary) and runs this, with no other package installed: a dry run
and a real run of a fixture table that delta-rs's own VACUUM tests use."""

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import deltavacuum
from deltavacuum import DeltaTable, VacuumRefused

src = Path(sys.argv[1])  # $DELTAVACUUM_FIXTURES/delta-rs/delta-0.2.0: 4 tombstoned files
with tempfile.TemporaryDirectory() as tmp:
    t = Path(tmp) / "t"
    shutil.copytree(src, t)
    old = time.time() - 30 * 86400  # git keeps no modification times: the files look 30 days old
    for f in t.rglob("*.parquet"):
        os.utime(f, (old, old))
    plan = DeltaTable(t).vacuum(retention_hours=169)
    assert plan.dry_run and len(plan.files) == 4, plan.paths
    try:
        DeltaTable(t).vacuum(retention_hours=1)
        raise AssertionError("a retention under the table's was not refused")
    except VacuumRefused as e:
        assert e.setting == deltavacuum.SETTING_RETENTION_CHECK
    res = DeltaTable(t).vacuum(retention_hours=169, dry_run=False)
    assert res.num_deleted_files == 4 and not any((t / f.path).exists() for f in plan.files)
    try:
        plan.to_pandas()
        raise AssertionError("to_pandas worked without pandas")
    except ImportError as e:
        assert "pip install pandas" in str(e)
print(f"python {sys.version.split()[0]}: deltavacuum {deltavacuum.__version__} from the sdist: ok")

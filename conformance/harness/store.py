"""The tables of a run, each built once (on first use) and never vacuumed: tests copy them."""

from __future__ import annotations

import os
import time

import pytest

from . import fs
from .engines import EngineError
from .tables import TABLES, SparkCtx


class Built:
    """A table as its engine left it, never vacuumed; tests copy it."""

    def __init__(self, name: str, root: str, fresh: list[str], spark_rows, rs_rows, rs_error):
        self.name = name
        self.root = root
        self.fresh = fresh
        self.spark_rows = spark_rows
        self.rs_rows = rs_rows
        self.rs_error = rs_error
        self.spec = TABLES.get(name)

    def copy(self, dst: str, now: float | None = None) -> str:
        """A copy with every file and directory (commits included) aged 30 days before `now`,
        except the fresh keys, which get `now`."""
        fs.copy_table(self.root, dst)
        now = fs.now() if now is None else now
        fs.age_tree(dst, now - 30 * fs.DAY, {k: now for k in self.fresh})
        return dst


class TableStore:
    def __init__(self, spark, rs, workdir: str, report):
        self.spark, self.rs, self.report = spark, rs, report
        self.dir = os.path.join(workdir, "tables")
        self.built: dict[str, Built] = {}
        self.failed: dict[str, str] = {}

    def get(self, name: str, builder=None) -> Built:
        if name in self.failed:
            pytest.fail(f"table {name} could not be built: {self.failed[name]}")
        if name not in self.built:
            t0 = time.time()
            try:
                self.built[name] = self._build(name, builder)
            except Exception as e:
                self.failed[name] = f"{type(e).__name__}: {e}"
                raise
            finally:
                self.report.phase("building tables", time.time() - t0)
        return self.built[name]

    def _build(self, name: str, builder=None) -> Built:
        root = os.path.join(self.dir, name)
        os.makedirs(root)
        spec = TABLES.get(name)
        build = builder or spec.build
        if builder is not None or spec.engine == "spark":
            fresh = build(SparkCtx(self.spark, root)) or []
        else:
            fresh = build(root) or []
        return snapshot(name, root, fresh, self.spark, self.rs)


def snapshot(name: str, root: str, fresh: list[str], spark, rs) -> "Built":
    """A Built for the table at root as it is now (its rows read by both engines)."""
    spark_rows = spark.rows(root)
    try:
        rs_rows, rs_error = rs.rows(root), None
    except EngineError as e:
        rs_rows, rs_error = None, e.message.splitlines()[0][:300]
    return Built(name, root, fresh, spark_rows, rs_rows, rs_error)

"""Fixtures of the conformance run: one SparkSession for the whole run, the deltavacuum binary,
delta-rs, a temporary work folder, and the tables (built once each, on first use).

Environment:
  DELTAVACUUM_BIN               the binary to test; built from this repository when unset
  DELTAVACUUM_CONFORMANCE_WORK  work folder (default: a new temporary folder, removed at the end
                                unless DELTAVACUUM_CONFORMANCE_KEEP=1)
  DELTAVACUUM_CONFORMANCE_REPORT  where the Markdown report goes
                                (default: <repo>/.cache/conformance/report.md)
  DELTAVACUUM_IVY               Ivy cache for the Delta jars (default: <repo>/.cache/ivy)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from harness.engines import DeltaRS, DeltaVacuum, Spark  # noqa: E402
from harness.report import Report  # noqa: E402
from harness.store import TableStore  # noqa: E402

REPORT = Report()


@pytest.fixture(scope="session")
def report():
    return REPORT


@pytest.fixture(scope="session")
def workdir():
    base = os.environ.get("DELTAVACUUM_CONFORMANCE_WORK")
    if base:
        os.makedirs(base, exist_ok=True)
        path = tempfile.mkdtemp(prefix="run-", dir=base)
    else:
        path = tempfile.mkdtemp(prefix="deltavacuum-conformance-")
    path = os.path.realpath(path)
    yield path
    if os.environ.get("DELTAVACUUM_CONFORMANCE_KEEP") != "1":
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def dv(workdir) -> DeltaVacuum:
    binary = os.environ.get("DELTAVACUUM_BIN")
    if not binary:
        binary = os.path.join(workdir, "bin", "deltavacuum")
        t0 = time.time()
        subprocess.run(["go", "build", "-o", binary, "./cmd/deltavacuum"], cwd=REPO, check=True)
        REPORT.phase("building deltavacuum", time.time() - t0)
    binary = os.path.abspath(binary)
    if not os.access(binary, os.X_OK):
        pytest.exit(f"DELTAVACUUM_BIN={binary} is not an executable", returncode=2)
    REPORT.versions["deltavacuum"] = binary + _git_head()
    return DeltaVacuum(binary)


def _git_head() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, timeout=10).stdout.strip()
        return f" (commit {head})" if head else ""
    except Exception:
        return ""


def spark_builder(workdir: str):
    """The one SparkSession: local[2], small, quiet, Delta from Maven Central through Ivy."""
    from delta import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    ivy = os.environ.get("DELTAVACUUM_IVY", os.path.join(REPO, ".cache", "ivy"))
    conf = {
        "spark.master": "local[2]",
        "spark.app.name": "deltavacuum-conformance",
        "spark.driver.memory": "2g",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        # VACUUM lists with this many tasks (default 10000): far too many for tiny tables.
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": "2",
        "spark.databricks.delta.snapshotPartitions": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.warehouse.dir": os.path.join(workdir, "spark-warehouse"),
        "spark.local.dir": os.path.join(workdir, "spark-local"),
        "spark.jars.ivy": ivy,
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        # RETAIN 0 HOURS needs the safety check off (Spark.vacuum turns it on where a test wants it).
        "spark.databricks.delta.retentionDurationCheck.enabled": "false",
        # Delta 4.x ignores RETAIN values other than 0 unless this is false; the contract honours them.
        "spark.databricks.delta.vacuum.retentionWindowIgnore.enabled": "false",
    }
    b = SparkSession.builder
    for k, v in conf.items():
        b = b.config(k, v)
    return configure_spark_with_delta_pip(b)


@pytest.fixture(scope="session")
def spark(workdir) -> Spark:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    t0 = time.time()
    session = spark_builder(workdir).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    REPORT.phase("starting Spark (Ivy resolution included)", time.time() - t0)
    import importlib.metadata as md
    REPORT.versions["Spark"] = session.version
    REPORT.versions["delta-spark"] = md.version("delta-spark")
    REPORT.versions["Java"] = session.sparkContext._jvm.System.getProperty("java.version")
    yield Spark(session)
    _record_cpu(session)
    session.stop()


def _record_cpu(session) -> None:
    """CPU seconds used by the Spark JVM, this Python process and its finished children (the
    deltavacuum runs): on a loaded machine, a better measure of the harness's cost than wall time."""
    import resource
    try:
        pid = session.sparkContext._gateway.proc.pid
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        jvm = (int(fields[11]) + int(fields[12])) / tick
        REPORT.versions["CPU seconds, Spark JVM"] = f"{jvm:.0f}"
    except Exception as e:  # noqa: BLE001 - informational only
        REPORT.versions["CPU seconds, Spark JVM"] = f"unknown ({e})"
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    REPORT.versions["CPU seconds, Python and deltavacuum"] = \
        f"{me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime:.0f}"


@pytest.fixture(scope="session")
def rs() -> DeltaRS:
    r = DeltaRS()
    REPORT.versions["delta-rs (deltalake)"] = r.version
    return r


@pytest.fixture(scope="session")
def tables(spark, rs, workdir) -> TableStore:
    return TableStore(spark, rs, workdir, REPORT)


@pytest.fixture
def scenario_dir(workdir, request):
    d = os.path.join(workdir, "scenarios", request.node.name.replace("/", "_"))
    os.makedirs(d)
    return d


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    path = os.environ.get("DELTAVACUUM_CONFORMANCE_REPORT",
                          os.path.join(REPO, ".cache", "conformance", "report.md"))
    if not REPORT.entries and not REPORT.versions:
        return
    REPORT.write(path)
    terminalreporter.section("deltavacuum conformance report")
    terminalreporter.write(REPORT.markdown())
    terminalreporter.write_line(f"(written to {path})")

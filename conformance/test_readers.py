"""The readers packages (issue 34) against what the real engines write: a Structured Streaming
checkpoint of Spark reading a Delta table (readers/streaming), and Iceberg metadata written by
pyiceberg over a Delta table's own data files as XTable and Fabric do (readers/iceberg). The
engines write the fixtures here; the Go tests read them (DELTAVACUUM_READERS_FIXTURES) and
compare with what the engines said. Skipped when pyiceberg is not installed (CI's setup.sh
installs it from requirements.txt)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from harness import readers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def fixtures(spark, workdir):
    pytest.importorskip("pyiceberg")
    d = os.path.join(workdir, "readers")
    os.makedirs(d)
    exp = {"streaming": readers.streaming_checkpoints(spark.session, d),
           "iceberg": readers.iceberg_over_delta(spark.session, d)}
    with open(os.path.join(d, "expect.json"), "w") as f:
        json.dump(exp, f, indent=1)
    return d, exp


def _go_test(pkg: str, fixtures_dir: str) -> None:
    env = dict(os.environ, DELTAVACUUM_READERS_FIXTURES=fixtures_dir)
    r = subprocess.run([os.environ.get("GO", "go"), "test", "-count=1", "-run", "TestConformance", "-v", pkg],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "--- PASS: TestConformance" in out, out  # not skipped


def test_streaming_checkpoint(fixtures):
    d, exp = fixtures
    s = exp["streaming"]
    # What Spark says it processed: the sink holds every row of the table.
    assert s["latest_version"] == 5
    _go_test("./readers/streaming", d)


def test_iceberg_over_delta(fixtures):
    d, exp = fixtures
    i = exp["iceberg"]
    assert i["data_files"], i
    assert i["metadata_file"].startswith("metadata/"), i
    _go_test("./readers/iceberg", d)

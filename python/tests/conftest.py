"""Fixtures of the Python package's tests. They run against the INSTALLED package (the wheel
python/test.sh builds and installs in a fresh virtual environment), never the source tree."""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict, List

import pytest

REPO = Path(os.environ.get("DELTAVACUUM_PY_REPO", Path(__file__).resolve().parents[2]))
DAY = 86400


@pytest.fixture(scope="session", autouse=True)
def installed_package() -> None:
    import deltavacuum

    src = (REPO / "python").resolve()
    here = Path(deltavacuum.__file__).resolve()
    if src in here.parents and not os.environ.get("DELTAVACUUM_PY_ALLOW_SOURCE"):
        pytest.exit(f"deltavacuum was imported from the source tree ({here}); run python/test.sh, which installs the wheel", 2)


def write_table(path: Path, versions: int = 3) -> None:
    """A Delta table written by delta-rs: `versions` overwrites of a small table (each removes
    the previous file), all files dated 30 days ago."""
    import pyarrow as pa
    from deltalake import write_deltalake

    for i in range(versions):
        write_deltalake(str(path), pa.table({"id": [i, i + 1], "v": [f"a{i}", f"b{i}"]}), mode="overwrite")
    age(path, 30 * DAY, "*.parquet")


def age(path: Path, seconds: float, pattern: str) -> None:
    old = time.time() - seconds
    for f in path.glob(pattern):
        os.utime(f, (old, old))


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """A delta-rs table with two stale untracked files (30 days old) and a fresh one."""
    t = tmp_path / "orders"
    write_table(t)
    for name in ("stale-1.parquet", "stale-2.parquet"):
        (t / name).write_bytes(b"x" * 100)
    age(t, 30 * DAY, "stale-*.parquet")
    (t / "fresh.parquet").write_bytes(b"y" * 10)  # now: inside any retention
    return t


@pytest.fixture
def recorder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """$DELTAVACUUM_BINARY set to a wrapper that records the argv and environment of every run
    (as the operating system gives them to the process) and then runs the real binary."""
    import deltavacuum

    real = deltavacuum.binary_path()
    log = tmp_path / "runs.jsonl"
    shim = tmp_path / "shim.py"
    shim.write_text(textwrap.dedent(f"""\
        import json, os, sys
        with open({str(log)!r}, "a") as f:
            f.write(json.dumps({{"argv": sys.argv[1:], "env": dict(os.environ)}}) + "\\n")
        os.execv({real!r}, [{real!r}] + sys.argv[1:])
        """))
    exe = tmp_path / "deltavacuum-shim"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {shim} \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    if sys.platform == "win32":
        pytest.skip("the recording wrapper is a POSIX shell script")
    monkeypatch.setenv("DELTAVACUUM_BINARY", str(exe))

    def runs() -> List[Dict]:
        return [json.loads(l) for l in log.read_text().splitlines()] if log.exists() else []

    return runs


@pytest.fixture
def fake_notebookutils(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A notebookutils module on sys.path, as in a Fabric notebook: credentials.getToken
    returns a fixed token and records the audience asked for."""
    d = tmp_path / "nbmods"
    (d / "notebookutils").mkdir(parents=True)
    (d / "notebookutils" / "__init__.py").write_text(textwrap.dedent("""\
        class _Credentials:
            asked = []
            def getToken(self, audience):
                self.asked.append(audience)
                return "FAKE-FABRIC-TOKEN-0123456789"
        credentials = _Credentials()
        """))
    monkeypatch.syspath_prepend(str(d))
    sys.modules.pop("notebookutils", None)
    for v in ("AZURE_STORAGE_TOKEN", "AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_SAS_TOKEN", "AZURE_CLIENT_SECRET"):
        monkeypatch.delenv(v, raising=False)
    yield "FAKE-FABRIC-TOKEN-0123456789"
    sys.modules.pop("notebookutils", None)

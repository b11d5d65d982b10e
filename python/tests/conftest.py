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
    """$DELTAVACUUM_BINARY set to a wrapper that records every run, as the operating system
    gives it to the process: its argv, its raw command line (/proc/self/cmdline, which any user
    of the machine can read; None where there is no /proc), its environment and its private
    arguments (read from the pipe of --args-fd, or the variable of --args-env), and then runs
    the real binary with the same argv (the private arguments put back into a pipe on the
    same descriptor). With $DELTAVACUUM_TEST_NO_EXEC set (the fixture `capture`) it exits 1
    instead, for locations that must not be reached."""
    import deltavacuum

    real = deltavacuum.binary_path()
    log = tmp_path / "runs.jsonl"
    shim = tmp_path / "shim.py"
    shim.write_text(textwrap.dedent(f"""\
        import json, os, sys
        argv = sys.argv[1:]
        if argv[:1] == ["storage-options"]:
            # The package reading the tool's option table: not a run of the test's.
            os.execv({real!r}, [{real!r}] + argv)
        try:
            with open("/proc/self/cmdline", "rb") as f:
                cmdline = f.read().decode("utf-8", "replace").split("\\0")
        except OSError:
            cmdline = None
        private, fd = None, None
        if argv and argv[0].startswith("--args-fd="):
            fd = int(argv[0].split("=", 1)[1])
            data = b""
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                data += chunk
            private = json.loads(data)
        elif argv and argv[0].startswith("--args-env="):
            private = json.loads(os.environ[argv[0].split("=", 1)[1]])
        with open({str(log)!r}, "a") as f:
            f.write(json.dumps({{"argv": argv, "cmdline": cmdline, "env": dict(os.environ), "private": private}}) + "\\n")
        if os.environ.get("DELTAVACUUM_TEST_NO_EXEC"):
            sys.stderr.write("deltavacuum: not run (the test's wrapper)\\n")
            sys.exit(1)
        if fd is not None:
            r, w = os.pipe()
            os.write(w, data)
            os.close(w)
            os.dup2(r, fd)
            os.close(r)
        os.execv({real!r}, [{real!r}] + argv)
        """))
    exe = tmp_path / "deltavacuum-shim"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {shim} \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    if sys.platform == "win32":
        pytest.skip("the recording wrapper is a POSIX shell script")
    monkeypatch.setenv("DELTAVACUUM_BINARY", str(exe))
    monkeypatch.delenv("DELTAVACUUM_TEST_NO_EXEC", raising=False)

    def runs() -> List[Dict]:
        return [json.loads(l) for l in log.read_text().splitlines()] if log.exists() else []

    return runs


@pytest.fixture
def capture(recorder, monkeypatch: pytest.MonkeyPatch):
    """recorder, without running the binary: each run is recorded and fails."""
    monkeypatch.setenv("DELTAVACUUM_TEST_NO_EXEC", "1")
    return recorder


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

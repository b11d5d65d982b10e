"""The built wheel: its name and tags, its files, the executable bit, RECORD, and one version
in METADATA, the package and the binary."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import deltavacuum
from conftest import REPO

sys.path.insert(0, str(REPO / "python" / "_build"))
import dvbuild  # noqa: E402


def wheel() -> Path:
    w = os.environ.get("DELTAVACUUM_PY_WHEEL")
    if not w:
        pytest.skip("DELTAVACUUM_PY_WHEEL is not set (python/test.sh sets it)")
    return Path(w)


def test_name_and_tags_are_the_host_platform_s() -> None:
    w = wheel()
    plat = dvbuild.host_platform()
    tag = dvbuild.PLATFORMS[plat][2]
    assert w.name == f"deltavacuum-{deltavacuum.__version__}-py3-none-{tag}.whl"
    with zipfile.ZipFile(w) as z:
        info = f"deltavacuum-{deltavacuum.__version__}.dist-info"
        lines = z.read(f"{info}/WHEEL").decode().splitlines()
        assert "Root-Is-Purelib: false" in lines
        assert sorted(l[5:] for l in lines if l.startswith("Tag: ")) == sorted(f"py3-none-{t}" for t in tag.split("."))
        meta = z.read(f"{info}/METADATA").decode()
        assert f"\nVersion: {deltavacuum.__version__}\n" in meta and "Requires-Python: >=3.9" in meta
        assert "Requires-Dist: pandas; extra ==" in meta  # optional only


def test_contents_record_and_executable_bit() -> None:
    w = wheel()
    exe = "deltavacuum.exe" if sys.platform == "win32" else "deltavacuum"
    with zipfile.ZipFile(w) as z:
        names = set(z.namelist())
        info = f"deltavacuum-{deltavacuum.__version__}.dist-info"
        for n in ("deltavacuum/__init__.py", "deltavacuum/py.typed", "deltavacuum/_version.py", f"deltavacuum/bin/{exe}",
                  f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD", f"{info}/entry_points.txt"):
            assert n in names, n
        assert not any("__pycache__" in n or n.endswith(".pyc") or "tests/" in n for n in names)
        mode = z.getinfo(f"deltavacuum/bin/{exe}").external_attr >> 16
        assert mode & 0o111 == 0o111, oct(mode)
        record = list(csv.reader(io.StringIO(z.read(f"{info}/RECORD").decode())))
        assert {r[0] for r in record} == names
        for path, digest, size in record:
            if path.endswith("RECORD"):
                assert digest == size == ""
                continue
            data = z.read(path)
            assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode(), path
            assert int(size) == len(data), path
    installed = Path(deltavacuum.binary_path())
    assert installed.name == exe and os.access(installed, os.X_OK)


def test_one_version_everywhere() -> None:
    """The wheel, its package and its binary name the version of the commit that make build, make
    dist and make image name (internal/buildinfo.VersionOf), each in its own spelling."""
    assert metadata.version("deltavacuum") == deltavacuum.__version__
    assert deltavacuum.__git_version__
    if not os.environ.get("DELTAVACUUM_VERSION"):
        want = dvbuild.version_of_commit()
        assert deltavacuum.__version__ == want["pep440"]
        assert deltavacuum.__git_version__ == want["version"]
    p = subprocess.run([deltavacuum.binary_path(), "version"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"deltavacuum {deltavacuum.__git_version__}\n"), p.stdout


def test_console_script_runs_the_binary() -> None:
    exe = Path(sys.executable).parent / ("deltavacuum.exe" if sys.platform == "win32" else "deltavacuum")
    p = subprocess.run([str(exe), "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "no longer references" in p.stdout


def test_every_platform_has_a_correct_tag() -> None:
    want = {
        "linux-amd64": {"manylinux_2_17_x86_64", "manylinux2014_x86_64", "musllinux_1_1_x86_64"},
        "linux-arm64": {"manylinux_2_17_aarch64", "manylinux2014_aarch64", "musllinux_1_1_aarch64"},
        "darwin-amd64": {"macosx_12_0_x86_64"},
        "darwin-arm64": {"macosx_12_0_arm64"},
        "windows-amd64": {"win_amd64"},
    }
    assert {k: set(v[2].split(".")) for k, v in dvbuild.PLATFORMS.items()} == want


def test_sdist_holds_the_go_module_and_the_version(tmp_path: Path) -> None:
    s = os.environ.get("DELTAVACUUM_PY_SDIST")
    if not s:
        pytest.skip("DELTAVACUUM_PY_SDIST is not set (python/test.sh sets it)")
    import tarfile

    with tarfile.open(s) as t:
        names = set(t.getnames())
        base = f"deltavacuum-{deltavacuum.__version__}"
        for n in ("PKG-INFO", "VERSION", "pyproject.toml", "_build/dvbuild.py", "deltavacuum/__init__.py",
                  "go/go.mod", "go/go.sum", "go/cmd/deltavacuum/main.go"):
            assert f"{base}/{n}" in names, n
        assert not any(n.endswith("_test.go") for n in names)
        assert t.extractfile(f"{base}/VERSION").read().decode().split("\n")[0] == deltavacuum.__version__


@pytest.mark.parametrize("rel,plat", [
    ("deltavacuum-linux-arm64", "linux-arm64"),
    ("deltavacuum_windows_amd64.exe", "windows-amd64"),
    ("darwin-arm64/deltavacuum", "darwin-arm64"),
])
def test_wheels_of_make_dist_binaries(tmp_path: Path, rel: str, plat: str) -> None:
    dist = tmp_path / "dist"
    (dist / rel).parent.mkdir(parents=True, exist_ok=True)
    (dist / rel).write_bytes(b"\x7fELF binary of " + plat.encode())
    found = dvbuild.find_dist_binary(dist, plat)
    assert found == dist / rel
    w = dvbuild.write_wheel(tmp_path / "out", plat, found, "1.2.3", "v1.2.3")
    assert w.name == f"deltavacuum-1.2.3-py3-none-{dvbuild.PLATFORMS[plat][2]}.whl"
    exe = "deltavacuum.exe" if plat.startswith("windows") else "deltavacuum"
    with zipfile.ZipFile(w) as z:
        assert z.read(f"deltavacuum/bin/{exe}") == (dist / rel).read_bytes()
        assert b"__version__ = '1.2.3'" in z.read("deltavacuum/_version.py")
    with pytest.raises(FileNotFoundError, match="no linux/amd64 binary"):
        dvbuild.find_dist_binary(dist, "linux-amd64")

"""Builds the deltavacuum Python package: platform wheels that carry the Go binary, and a
source distribution that builds one with a Go toolchain.

It is both the PEP 517 build backend of python/pyproject.toml (pip install of the sdist, or of
python/ itself: a wheel for this machine) and the library of python/build_wheels.py (make wheel:
all five platforms). Only the standard library: the wheel (a zip with METADATA, WHEEL and
RECORD) is written here, by the rules of the wheel specification.

The version comes from one place, the one make build, make dist and make image use:
internal/buildinfo.VersionOf through `go run ./internal/tools/version` (git, or
$DELTAVACUUM_VERSION), in its PEP 440 spelling; an sdist keeps it in its VERSION file.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import platform
import re
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

NAME = "deltavacuum"
SUMMARY = "Delta Lake VACUUM without Spark: preview and delete a table's stale files from a notebook"
REQUIRES_PYTHON = ">=3.9"
# The Go package the version, commit and date are linked into (-X), as scripts/dist.sh (make
# dist) links them; the linker ignores a name that does not exist, so test_one_version_everywhere
# compares the binary's `version` with the wheel's.
GO_BUILDINFO = "github.com/deltavacuum/deltavacuum/internal/buildinfo"
# The build tags of the release build (scripts/dist.sh): the GCS client without gRPC.
GO_TAGS = "disable_grpc_modules"

# Wheel platform tags per Go target. The binary is static (CGO_ENABLED=0), so one Linux build
# runs on glibc (manylinux) and musl (musllinux) alike. Go 1.25 and newer need macOS 12.
PLATFORMS: Dict[str, Tuple[str, str, str]] = {
    "linux-amd64": ("linux", "amd64", "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64"),
    "linux-arm64": ("linux", "arm64", "manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64"),
    "darwin-amd64": ("darwin", "amd64", "macosx_12_0_x86_64"),
    "darwin-arm64": ("darwin", "arm64", "macosx_12_0_arm64"),
    "windows-amd64": ("windows", "amd64", "win_amd64"),
}

HERE = Path(__file__).resolve().parent.parent  # python/ (or the root of an unpacked sdist)


# --- version ------------------------------------------------------------------------------

def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def version_info() -> Tuple[str, str]:
    """(PEP 440 version, version) of this build: the VERSION file of an sdist, else the version of
    the commit as make build, make dist and make image name it (go run ./internal/tools/version,
    which reads $DELTAVACUUM_VERSION or git: internal/buildinfo.VersionOf decides)."""
    vf = HERE / "VERSION"
    if vf.is_file() and not os.environ.get("DELTAVACUUM_VERSION"):  # an sdist
        lines = vf.read_text().split("\n")
        return lines[0].strip(), (lines[1].strip() if len(lines) > 1 else lines[0].strip())
    v = version_of_commit()
    return v["pep440"], v["version"]


def version_of_commit() -> Dict[str, str]:
    """What go run ./internal/tools/version -json prints: version, pep440, imageTag, commit, date."""
    go = os.environ.get("GO", "go")
    out = subprocess.run([go, "run", "./internal/tools/version", "-json"], cwd=go_root(), check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


# --- the Go binary ------------------------------------------------------------------------

def go_root() -> Path:
    """The Go module: go/ in an sdist, the repository root beside python/ otherwise."""
    for d in (HERE / "go", HERE.parent):
        if (d / "go.mod").is_file():
            return d
    raise FileNotFoundError(f"no Go module (go.mod) in {HERE / 'go'} or {HERE.parent}")


def host_platform() -> str:
    """The PLATFORMS key of this machine."""
    osname = {"linux": "linux", "darwin": "darwin", "win32": "windows"}.get(sys.platform)
    mach = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(mach)
    key = f"{osname}-{arch}"
    if key not in PLATFORMS:
        raise RuntimeError(f"no wheel for this platform ({sys.platform}, {mach}); supported: {', '.join(PLATFORMS)}")
    return key


def exe_name(goos: str) -> str:
    return "deltavacuum.exe" if goos == "windows" else "deltavacuum"


def go_build(plat: str, out_dir: Path, git_version: str) -> Path:
    """Cross-compiles cmd/deltavacuum for plat into out_dir, with the release build's flags."""
    goos, goarch, _ = PLATFORMS[plat]
    out = out_dir / plat / exe_name(goos)
    out.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CGO_ENABLED="0", GOOS=goos, GOARCH=goarch)
    ldflags = f"-s -w -X {GO_BUILDINFO}.Version={git_version}"
    for var, args in (("Commit", ("rev-parse", "HEAD")), ("Date", ("log", "-1", "--format=%cI"))):
        try:
            ldflags += f" -X {GO_BUILDINFO}.{var}={_git(*args, cwd=go_root())}"
        except (OSError, subprocess.CalledProcessError):
            pass  # an unpacked sdist has no git: the version alone
    go = os.environ.get("GO", "go")
    subprocess.run([go, "build", "-trimpath", "-tags", GO_TAGS, "-ldflags", ldflags, "-o", str(out), "./cmd/deltavacuum"],
                   cwd=go_root(), env=env, check=True)
    return out


def find_dist_binary(dist: Path, plat: str) -> Path:
    """The binary `make dist` left in dist for plat, under one of the usual names."""
    goos, goarch, _ = PLATFORMS[plat]
    exe = exe_name(goos)
    stem, ext = (exe[:-4], ".exe") if exe.endswith(".exe") else (exe, "")
    # scripts/dist.sh names them deltavacuum_VERSION_OS_ARCH[.exe]
    found = sorted(dist.glob(f"{stem}_*_{goos}_{goarch}{ext}"))
    if len(found) == 1:
        return found[0]
    for rel in (f"{stem}-{goos}-{goarch}{ext}", f"{stem}_{goos}_{goarch}{ext}",
                f"{goos}-{goarch}/{exe}", f"{goos}_{goarch}/{exe}", f"{stem}-{goos}-{goarch}/{exe}",
                f"{stem}_{goos}_{goarch}/{exe}"):
        if (dist / rel).is_file():
            return dist / rel
    raise FileNotFoundError(f"no {goos}/{goarch} binary in {dist} (looked for {stem}-{goos}-{goarch}{ext} and {goos}-{goarch}/{exe})")


# --- package files ------------------------------------------------------------------------

def _package_files() -> List[Tuple[str, bytes]]:
    """The Python package's files (arcname, content), _version.py excluded."""
    pkg = HERE / NAME
    out = []
    for p in sorted(pkg.rglob("*")):
        rel = p.relative_to(HERE).as_posix()
        if p.is_dir() or "__pycache__" in rel or p.suffix in (".pyc", ".pyo"):
            continue
        if rel.startswith(f"{NAME}/bin/") or rel == f"{NAME}/_version.py":
            continue
        out.append((rel, p.read_bytes()))
    return out


def _version_py(version: str, git_version: str) -> bytes:
    return (f"# Written by python/_build/dvbuild.py for this build.\n"
            f"__version__ = {version!r}\n__git_version__ = {git_version!r}\n").encode()


def readme() -> str:
    p = HERE / "README.md"
    return p.read_text(encoding="utf-8") if p.is_file() else ""


def metadata(version: str) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {version}",
        f"Summary: {SUMMARY}",
        f"Requires-Python: {REQUIRES_PYTHON}",
        "Keywords: delta,deltalake,vacuum,fabric,onelake,databricks",
        "Classifier: Programming Language :: Python :: 3",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Operating System :: MacOS",
        "Classifier: Operating System :: Microsoft :: Windows",
        "Classifier: Typing :: Typed",
        "Provides-Extra: pandas",
        'Requires-Dist: pandas; extra == "pandas"',
        "Provides-Extra: pyarrow",
        'Requires-Dist: pyarrow; extra == "pyarrow"',
        "Provides-Extra: progress",
        'Requires-Dist: tqdm; extra == "progress"',
        "Description-Content-Type: text/markdown",
        "",
        readme(),
    ]
    return "\n".join(lines)


# --- wheel --------------------------------------------------------------------------------

def _epoch() -> Tuple[int, int, int, int, int, int]:
    t = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01: reproducible
    return time.gmtime(max(t, 315532800))[:6]


def _zip_add(z: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=_epoch())
    info.external_attr = ((stat.S_IFREG | mode) & 0xFFFF) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3  # Unix: pip reads the mode (the binary's executable bit)
    z.writestr(info, data)


def wheel_tags(plat_tag: str) -> List[str]:
    return [f"py3-none-{p}" for p in plat_tag.split(".")]


def wheel_name(version: str, plat_tag: str) -> str:
    return f"{NAME}-{version.replace('-', '_')}-py3-none-{plat_tag}.whl"


def write_wheel(out_dir: Path, plat: str, binary: Path, version: str, git_version: str) -> Path:
    """Writes the wheel of plat that carries binary; returns its path."""
    goos, _, plat_tag = PLATFORMS[plat]
    dist_info = f"{NAME}-{version.replace('-', '_')}.dist-info"
    files: List[Tuple[str, bytes, int]] = [(n, d, 0o644) for n, d in _package_files()]
    files.append((f"{NAME}/_version.py", _version_py(version, git_version), 0o644))
    files.append((f"{NAME}/bin/{exe_name(goos)}", binary.read_bytes(), 0o755))
    files.append((f"{dist_info}/METADATA", metadata(version).encode("utf-8"), 0o644))
    wheel = ["Wheel-Version: 1.0", "Generator: deltavacuum dvbuild", "Root-Is-Purelib: false"]
    wheel += [f"Tag: {t}" for t in wheel_tags(plat_tag)]
    files.append((f"{dist_info}/WHEEL", ("\n".join(wheel) + "\n").encode(), 0o644))
    files.append((f"{dist_info}/entry_points.txt", b"[console_scripts]\ndeltavacuum = deltavacuum.__main__:main\n", 0o644))
    files.append((f"{dist_info}/top_level.txt", f"{NAME}\n".encode(), 0o644))
    record = []
    for name, data, _ in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / wheel_name(version, plat_tag)
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w") as z:
        for name, data, mode in files:
            _zip_add(z, name, data, mode)
    os.replace(tmp, path)
    return path


# --- sdist --------------------------------------------------------------------------------

def _go_sources(root: Path) -> Iterable[Tuple[str, Path]]:
    """The Go module's files a build of cmd/deltavacuum reads: go.mod, go.sum, non-test .go,
    and the files its packages embed (the service's web page), as `go list` names them."""
    yield "go.mod", root / "go.mod"
    yield "go.sum", root / "go.sum"
    seen = set()
    for p in sorted(root.rglob("*.go")):
        rel = p.relative_to(root)
        top = rel.parts[0]
        if p.name.endswith("_test.go") or top.startswith(".") or top in ("python", "bin", "dist") or "testdata" in rel.parts:
            continue
        seen.add(rel.as_posix())
        yield rel.as_posix(), p
    for rel in _embedded(root):
        if rel not in seen:
            seen.add(rel)
            yield rel, root / rel


def _embedded(root: Path) -> List[str]:
    """The files the module's packages embed (//go:embed), relative to root, sorted."""
    go = os.environ.get("GO", "go")
    out = subprocess.run([go, "list", "-f", '{{$d := .Dir}}{{range .EmbedFiles}}{{$d}}/{{.}}\n{{end}}', "./..."],
                         cwd=root, check=True, capture_output=True, text=True).stdout
    return sorted({Path(line).resolve().relative_to(root.resolve()).as_posix() for line in out.splitlines() if line.strip()})


def write_sdist(out_dir: Path, version: str, git_version: str) -> Path:
    base = f"{NAME}-{version}"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{base}.tar.gz"
    mtime = time.mktime(time.struct_time(_epoch() + (0, 0, 0)))

    def add(t: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
        info = tarfile.TarInfo(f"{base}/{name}")
        info.size, info.mode, info.mtime = len(data), mode, int(mtime)
        t.addfile(info, io.BytesIO(data))

    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as t:
        add(t, "PKG-INFO", metadata(version).encode("utf-8"))
        add(t, "VERSION", f"{version}\n{git_version}\n".encode())
        for rel in ("pyproject.toml", "README.md", "_build/dvbuild.py"):
            add(t, rel, (HERE / rel).read_bytes())
        for rel, data in _package_files():
            add(t, rel, data)
        add(t, f"{NAME}/_version.py", _version_py(version, git_version))
        for rel, p in _go_sources(go_root()):
            add(t, f"go/{rel}", p.read_bytes())
    return path


# --- PEP 517 hooks ------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):  # noqa: D103
    return []


def get_requires_for_build_sdist(config_settings=None):  # noqa: D103
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel for this machine, its binary built with the Go toolchain on PATH ($GO)."""
    version, git_version = version_info()
    plat = host_platform()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            binary = go_build(plat, Path(tmp), git_version)
        except FileNotFoundError as e:
            raise RuntimeError("building deltavacuum from source needs Go (https://go.dev/dl/) on PATH, "
                               "or install a platform wheel instead") from e
        return write_wheel(Path(wheel_directory), plat, binary, version, git_version).name


def build_sdist(sdist_directory, config_settings=None):
    version, git_version = version_info()
    return write_sdist(Path(sdist_directory), version, git_version).name


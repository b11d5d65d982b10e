"""Copying, aging and listing table folders.

Every key here is a raw path relative to the table root, '/'-separated, exactly as the file
system stores it (no percent-encoding): the same keys deltavacuum prints.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
import zlib

LOG_DIR = "_delta_log"
DAY = 24 * 3600


@dataclasses.dataclass(frozen=True)
class Tree:
    """Everything under a table root: files (key -> (size, mtime)) and directories (keys)."""

    files: dict[str, tuple[int, float]]
    dirs: dict[str, float]  # key -> modification time

    def data_files(self) -> set[str]:
        """Files outside _delta_log/."""
        return {k for k in self.files if not in_log(k)}

    def data_dirs(self) -> set[str]:
        return {k for k in self.dirs if not in_log(k) and k != LOG_DIR}

    def log_files(self) -> set[str]:
        return {k for k in self.files if in_log(k)}

    def files_under(self, d: str) -> set[str]:
        prefix = d + "/"
        return {k for k in self.files if k.startswith(prefix)}


def in_log(key: str) -> bool:
    return key == LOG_DIR or key.startswith(LOG_DIR + "/")


def list_tree(root: str) -> Tree:
    files: dict[str, tuple[int, float]] = {}
    dirs: dict[str, float] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        rel = "" if rel == "." else rel.replace(os.sep, "/")
        for d in dirnames:
            dirs[f"{rel}/{d}" if rel else d] = os.lstat(os.path.join(dirpath, d)).st_mtime
        for f in filenames:
            st = os.lstat(os.path.join(dirpath, f))
            files[f"{rel}/{f}" if rel else f] = (st.st_size, st.st_mtime)
    return Tree(files, dirs)


def copy_table(src: str, dst: str) -> str:
    """Copies a table folder (content and modification times; directories too)."""
    shutil.copytree(src, dst, symlinks=False, copy_function=shutil.copy2)
    return dst


def set_mtime(path: str, when: float) -> None:
    os.utime(path, (when, when), follow_symlinks=False)


def age_tree(root: str, when: float, fresh: dict[str, float] | None = None) -> None:
    """Sets the modification time of every file and directory under root (root included,
    _delta_log included: commits too) to `when`, then gives each key in `fresh` its own time.

    Directories are set after their content, so that nothing done here changes a time set here.
    """
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for f in filenames:
            set_mtime(os.path.join(dirpath, f), when)
        set_mtime(dirpath, when)
    for key, t in sorted((fresh or {}).items(), key=lambda kv: -kv[0].count("/")):
        set_mtime(os.path.join(root, key), t)


def write_file(root: str, key: str, data: bytes = b"untracked\n", crc: bool = False) -> None:
    """Writes an untracked file (and, with crc, a Hadoop-style checksum companion beside it)."""
    path = os.path.join(root, key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    if crc:
        d, name = os.path.split(path)
        with open(os.path.join(d, f".{name}.crc"), "wb") as f:
            f.write(b"crc\x00" + len(data).to_bytes(4, "big"))


def crc_companion(key: str) -> str:
    d, _, name = key.rpartition("/")
    return f"{d}/.{name}.crc" if d else f".{name}.crc"


def hadoop_crc_stale(path: str) -> bool | None:
    """Whether the Hadoop checksum companion of a file (.<name>.crc: "crc\\0", bytes per
    checksum, then a CRC-32 per chunk) no longer matches the file; None when there is none.
    Hadoop's local file system verifies it on every read and fails the read when it is stale."""
    d, name = os.path.split(path)
    crc_path = os.path.join(d, f".{name}.crc")
    if not os.path.exists(crc_path):
        return None
    with open(path, "rb") as f:
        data = f.read()
    with open(crc_path, "rb") as f:
        crc = f.read()
    if crc[:4] != b"crc\0" or len(crc) < 8:
        return True
    per = int.from_bytes(crc[4:8], "big") or 512
    want = b"".join(zlib.crc32(data[i:i + per]).to_bytes(4, "big") for i in range(0, len(data), per))
    return crc[8:] != want


def read_json(path: str):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def commits(root: str) -> dict[int, list[dict]]:
    """The commit files of a table: version -> its actions."""
    out = {}
    log = os.path.join(root, LOG_DIR)
    for name in os.listdir(log):
        if len(name) == 25 and name.endswith(".json") and name[:20].isdigit():
            with open(os.path.join(log, name), encoding="utf-8") as f:
                out[int(name[:20])] = [json.loads(line) for line in f if line.strip()]
    return dict(sorted(out.items()))


def commit_info(actions: list[dict]) -> dict:
    for a in actions:
        if "commitInfo" in a:
            return a["commitInfo"]
    return {}


def now() -> float:
    return time.time()

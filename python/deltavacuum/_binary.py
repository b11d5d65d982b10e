"""Where the deltavacuum binary is: inside the package, or $DELTAVACUUM_BINARY."""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: Names a binary to run instead of the one in the package (development, a newer build).
ENV_BINARY = "DELTAVACUUM_BINARY"


def binary_path() -> str:
    """The path of the deltavacuum executable this package runs."""
    override = os.environ.get(ENV_BINARY)
    if override:
        if not os.path.isfile(override):
            raise FileNotFoundError(f"${ENV_BINARY} names {override!r}, which is not a file")
        return override
    name = "deltavacuum.exe" if sys.platform == "win32" else "deltavacuum"
    p = Path(__file__).resolve().parent / "bin" / name
    if not p.is_file():
        raise FileNotFoundError(
            f"the deltavacuum binary is missing at {p}: install a platform wheel "
            f"(pip install deltavacuum), build one with `make wheel`, or set ${ENV_BINARY}"
        )
    return str(p)

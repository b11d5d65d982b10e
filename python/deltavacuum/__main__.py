"""python -m deltavacuum ARGS and the `deltavacuum` console script: the binary itself."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import List, Optional

from ._binary import binary_path


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    exe = binary_path()
    if sys.platform != "win32":
        os.execv(exe, [exe, *args])  # the process becomes the binary: signals, exit code and all
    try:
        return subprocess.call([exe, *args])
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

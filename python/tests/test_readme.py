"""The Python snippet of README.md runs as it is written (issue 36, item 7), on a table standing
for /data/sales. The Go test internal/cli/readme_test.go runs the README's other commands."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from conftest import REPO

STALE = ["stale-1.parquet", "stale-2.parquet"]


def test_readme_python_snippet_runs(table: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", readme, flags=re.S | re.M)
    assert len(blocks) == 1, "README.md shows one Python snippet"
    code = blocks[0].replace("/data/sales", str(table))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().split()[0] == "2", out.getvalue()  # the plan's two stale files
    assert not any((table / n).exists() for n in STALE), "the real run deleted nothing"

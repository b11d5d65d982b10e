"""Storage options (delta-rs's keys) to the child's private arguments.

The command line of a process is visible to every user of the machine (ps, /proc), so no
option goes there: every option, secrets included, travels as --storage-option=KEY=VALUE among
the private arguments (_run.run), which reach the tool through a pipe (or, on Windows, a
variable of the child's own environment); the tool keeps the secrets' values out of what it
prints. The table of the keys (names, aliases, which choose a credential) is the tool's own:
``deltavacuum storage-options --json``, read once per binary, never copied here.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Tuple

from ._binary import binary_path


@functools.lru_cache(maxsize=4)
def _table_of(binary: str) -> Dict[str, Any]:
    done = subprocess.run([binary, "storage-options", "--json"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{binary} storage-options --json failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


def table() -> Dict[str, Any]:
    """The tool's table of storage options (deltavacuum storage-options --json)."""
    return _table_of(binary_path())


def _aliases() -> Dict[str, str]:
    out: Dict[str, str] = {}
    for o in table()["options"]:
        out[o["name"]] = o["name"]
        for a in o["aliases"]:
            out[a] = o["name"]
    return out


def _azure_credentials() -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The Azure options that choose a credential, and the variables that do."""
    t = table()
    keys = {o["name"] for o in t["options"] if o["credential"] and o["for"] == "azure"}
    env = {e for o in t["options"] if o["credential"] and o["for"] == "azure" for e in o["env"]}
    env.update(t["sdkCredentialEnv"].get("azure") or [])
    return frozenset(keys), frozenset(env)


def canonical(key: str) -> str:
    """The tool's name of a key (aliases resolved, any case), or the key."""
    k = key.strip().lower()
    return _aliases().get(k, k)


def split(options: Optional[Mapping[str, object]]) -> Tuple[List[str], Dict[str, str]]:
    """The --storage-option arguments of options, for the private channel (never argv), and the
    environment variables they need (none: every option goes by the private channel)."""
    args: List[str] = []
    for k, v in (options or {}).items():
        if v is None:
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        args.append(f"--storage-option={canonical(str(k))}={v}")
    return args, {}


def has_azure_credential(options: Optional[Mapping[str, object]]) -> bool:
    """Whether options or the environment already choose an Azure credential."""
    keys, env = _azure_credentials()
    if any(canonical(str(k)) in keys for k in (options or {})):
        return True
    return any(os.environ.get(v) for v in env)


_AZURE_MARKERS = ("abfss://", "abfs://", "az://", "azure://", "adl://", "wasbs://", "wasb://",
                  ".blob.core.windows.net", ".dfs.core.windows.net", "fabric.microsoft.com")


def is_azure(text: str) -> bool:
    """Whether a location (or a SQL script) names an Azure or OneLake location."""
    t = text.lower()
    return any(m in t for m in _AZURE_MARKERS)


def notebook_token() -> Optional[str]:
    """The storage token of a Fabric (or Synapse) notebook: notebookutils.credentials.getToken
    ("storage"), or mssparkutils', when either is importable; None elsewhere."""
    for mod in ("notebookutils", "mssparkutils"):
        try:
            m = __import__(mod)
        except ImportError:
            continue
        creds = getattr(m, "credentials", None)
        if creds is None or not hasattr(creds, "getToken"):
            continue
        tok = creds.getToken("storage")
        if tok:
            return str(tok)
    return None


def credentials_env(locations: List[str], options: Optional[Mapping[str, object]], use_notebook: bool) -> Dict[str, str]:
    """The bearer token of the notebook for an Azure location without a credential of its own,
    as the tool's AZURE_STORAGE_TOKEN; nothing otherwise (the CLI's default chains apply)."""
    if not use_notebook or has_azure_credential(options):
        return {}
    if not any(is_azure(l) for l in locations if l):
        return {}
    tok = notebook_token()
    return {"AZURE_STORAGE_TOKEN": tok} if tok else {}

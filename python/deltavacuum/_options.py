"""Storage options (delta-rs's keys) to the child's private arguments and environment.

The command line of a process is visible to every user of the machine (ps, /proc), so no
option goes there: each secret option travels in an environment variable the tool reads (see
storage/location/options.go), the others as --storage-option=KEY=VALUE among the private
arguments (_run.run), which reach the tool through a pipe.
"""

from __future__ import annotations

import os
from typing import Dict, List, Mapping, Optional, Tuple

# Secret options that the tool reads from an environment variable of its own, with their
# aliases (the tool's Key.Aliases; tests/test_options.py checks this against options.go).
_ENV_SECRETS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "azure_storage_account_key": ("AZURE_STORAGE_ACCOUNT_KEY", (
        "azure_storage_access_key", "azure_storage_key", "azure_storage_master_key",
        "account_key", "access_key", "master_key")),
    "azure_storage_sas_token": ("AZURE_STORAGE_SAS_TOKEN", ("azure_storage_sas_key", "sas_token", "sas_key")),
    "azure_storage_token": ("AZURE_STORAGE_TOKEN", ("bearer_token", "azure_storage_bearer_token")),
    "google_service_account_key": ("GOOGLE_SERVICE_ACCOUNT_KEY", ("service_account_key",)),
}

# Secret options the tool has no variable for: their credential goes to the cloud SDK's
# environment variables instead, together with the options that belong to it, so that the SDK's
# default chain takes the same credential (static AWS keys; an Azure service principal).
_SDK_GROUPS: Dict[str, Dict[str, Tuple[str, Tuple[str, ...]]]] = {
    "aws": {
        "aws_access_key_id": ("AWS_ACCESS_KEY_ID", ("access_key_id",)),
        "aws_secret_access_key": ("AWS_SECRET_ACCESS_KEY", ("secret_access_key",)),
        "aws_session_token": ("AWS_SESSION_TOKEN", ("aws_token", "session_token")),
    },
    "azure_sp": {
        "azure_client_secret": ("AZURE_CLIENT_SECRET", ("azure_storage_client_secret", "client_secret")),
        "azure_client_id": ("AZURE_CLIENT_ID", ("azure_storage_client_id", "client_id")),
        "azure_tenant_id": ("AZURE_TENANT_ID", (
            "azure_storage_tenant_id", "tenant_id", "azure_authority_id", "azure_storage_authority_id", "authority_id")),
        "azure_authority_host": ("AZURE_AUTHORITY_HOST", ("azure_storage_authority_host", "authority_host")),
    },
}
# The option whose presence moves its group to the environment.
_GROUP_TRIGGER = {"aws": ("aws_secret_access_key", "aws_session_token"), "azure_sp": ("azure_client_secret",)}

# Secret options the tool refuses: sent with an empty value, so that the tool says why.
_REFUSED_SECRETS: Dict[str, Tuple[str, ...]] = {
    "azure_fabric_session_token": ("fabric_session_token",),
    "azure_storage_encryption_key": ("encryption_key",),
}

# Options that choose an Azure credential: with any of them, no notebook token is taken.
_AZURE_CREDENTIAL_KEYS = (
    "azure_storage_account_key", "azure_storage_sas_token", "azure_storage_token", "azure_client_id",
    "azure_client_secret", "azure_federated_token_file", "azure_object_id", "azure_msi_resource_id",
    "azure_use_azure_cli", "azure_skip_signature", "azure_storage_use_emulator",
)
_AZURE_CREDENTIAL_ENV = (
    "AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_ACCESS_KEY", "AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_SAS_KEY", "AZURE_STORAGE_TOKEN", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE",
)

_ALIASES: Dict[str, str] = {}
for _table in (_ENV_SECRETS, *_SDK_GROUPS.values()):
    for _name, (_env, _aliases) in _table.items():
        _ALIASES[_name] = _name
        for _a in _aliases:
            _ALIASES[_a] = _name
for _name, _aliases in _REFUSED_SECRETS.items():
    _ALIASES[_name] = _name
    for _a in _aliases:
        _ALIASES[_a] = _name
_ALIASES.update({k: k for k in _AZURE_CREDENTIAL_KEYS})
_ALIASES.update({"azure_storage_client_id": "azure_client_id", "client_id": "azure_client_id",
                 "use_azure_cli": "azure_use_azure_cli", "federated_token_file": "azure_federated_token_file",
                 "object_id": "azure_object_id", "msi_resource_id": "azure_msi_resource_id",
                 "use_emulator": "azure_storage_use_emulator", "azure_use_emulator": "azure_storage_use_emulator",
                 "object_store_use_emulator": "azure_storage_use_emulator"})


def canonical(key: str) -> str:
    """The tool's name of a key this module knows (aliases resolved, any case), or the key."""
    k = key.strip().lower()
    return _ALIASES.get(k, k)


def split(options: Optional[Mapping[str, object]]) -> Tuple[List[str], Dict[str, str]]:
    """The --storage-option arguments (for the private channel, never argv) and the environment
    variables of options."""
    opts: Dict[str, str] = {}
    for k, v in (options or {}).items():
        if v is None:
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        opts[canonical(str(k))] = str(v)
    env: Dict[str, str] = {}
    for group, keys in _SDK_GROUPS.items():
        if any(t in opts for t in _GROUP_TRIGGER[group]):
            for name, (var, _) in keys.items():
                if name in opts:
                    env[var] = opts.pop(name)
    for name, (var, _) in _ENV_SECRETS.items():
        if name in opts:
            env[var] = opts.pop(name)
    args: List[str] = []
    for name, value in opts.items():
        if name in _REFUSED_SECRETS:
            value = ""
        args.append(f"--storage-option={name}={value}")
    return args, env


def has_azure_credential(options: Optional[Mapping[str, object]]) -> bool:
    """Whether options or the environment already choose an Azure credential."""
    if any(canonical(str(k)) in _AZURE_CREDENTIAL_KEYS for k in (options or {})):
        return True
    return any(os.environ.get(v) for v in _AZURE_CREDENTIAL_ENV)


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

"""Secrets reach the binary by the private channel (test_private_args.py), never in its argv; the
table of the storage options is the binary's own (storage-options --json); in a Fabric notebook
the storage token of notebookutils is taken and sent as a bearer token."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

import azurite
from deltavacuum import DeltaTable, DeltaVacuumError, _options
from conftest import REPO


def test_secret_options_go_by_the_private_channel(table: Path, recorder) -> None:
    opts = {"account_key": "SECRET-AZ-KEY-1", "AZURE_STORAGE_SAS_TOKEN": "sv=SECRET-SAS-2",
            "aws_access_key_id": "AKIDEXAMPLE", "aws_secret_access_key": "SECRET-AWS-3",
            "google_service_account_key": "{\"SECRET-GCS-4\": 1}", "azure_client_id": "cid",
            "azure_client_secret": "SECRET-SP-5", "azure_tenant_id": "tid", "aws_region": "eu-west-1"}
    DeltaTable(table, storage_options=opts).vacuum(168)
    [run] = recorder()
    argv = " ".join(run["argv"])
    for secret in ("SECRET-AZ-KEY-1", "SECRET-SAS-2", "SECRET-AWS-3", "SECRET-GCS-4", "SECRET-SP-5", "AKIDEXAMPLE", "eu-west-1"):
        assert secret not in argv
    private = run["private"]
    assert "--storage-option=azure_storage_account_key=SECRET-AZ-KEY-1" in private
    assert "--storage-option=azure_storage_sas_token=sv=SECRET-SAS-2" in private
    assert "--storage-option=aws_secret_access_key=SECRET-AWS-3" in private
    assert "--storage-option=azure_client_secret=SECRET-SP-5" in private
    assert "--storage-option=aws_region=eu-west-1" in private
    assert not any("SECRET" in v for v in run["env"].values() if v)


def test_a_refused_secret_option_is_refused_by_the_tool_without_its_value(table: Path, recorder) -> None:
    with pytest.raises(DeltaVacuumError, match="not supported") as e:
        DeltaTable(table, storage_options={"fabric_session_token": "SECRET-FABRIC-6"}).vacuum()
    assert "SECRET-FABRIC-6" not in " ".join(recorder()[0]["argv"]) and "SECRET-FABRIC-6" not in str(e.value)


def test_the_option_table_is_the_tools() -> None:
    """The keys, aliases and credential keys come from the binary (storage-options --json), not
    from a copy: every key and alias it lists resolves to its name, and none reaches argv."""
    import json
    import subprocess

    from deltavacuum._binary import binary_path

    doc = json.loads(subprocess.run([binary_path(), "storage-options", "--json"], capture_output=True, text=True, check=True).stdout)
    assert _options.table() == doc
    assert len(doc["options"]) >= 40 and sum(o["secret"] for o in doc["options"]) >= 8
    for o in doc["options"]:
        for k in [o["name"], *o["aliases"]]:
            assert _options.canonical(k) == o["name"], k
            assert _options.canonical(k.upper()) == o["name"], k
            args, env = _options.split({k: "SECRET-VALUE"})
            assert args == [f"--storage-option={o['name']}=SECRET-VALUE"] and env == {}, k
    assert _options.has_azure_credential({"account_key": "x"}) and not _options.has_azure_credential({"azure_endpoint": "x"})


def test_notebook_token_only_for_azure_without_a_credential(fake_notebookutils: str) -> None:
    env = _options.credentials_env(["abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse/Tables/t"], {}, True)
    assert env == {"AZURE_STORAGE_TOKEN": fake_notebookutils}
    import notebookutils  # the fake

    assert notebookutils.credentials.asked == ["storage"]
    assert _options.credentials_env(["s3://bucket/t", "/local/t"], {}, True) == {}
    assert _options.credentials_env(["az://c/t"], {"azure_storage_account_key": "k"}, True) == {}
    assert _options.credentials_env(["az://c/t"], {}, False) == {}


def test_no_notebookutils_no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "notebookutils", None)  # import fails
    monkeypatch.setitem(sys.modules, "mssparkutils", None)
    assert _options.notebook_token() is None


@pytest.fixture
def azure_table():
    """A table on the Azurite test server, written by delta-rs (three overwrites), with a
    recording proxy in front of the server."""
    import pyarrow as pa
    from deltalake import write_deltalake

    s = azurite.settings()
    azurite.ensure_container(s)
    uri = f"az://{s['container']}/python-{uuid.uuid4().hex[:12]}/orders"
    rs = {"azure_storage_account_name": s["account"], "azure_storage_account_key": s["key"],
          "azure_storage_use_emulator": "true", "allow_http": "true"}
    for i in range(3):
        write_deltalake(uri, pa.table({"id": [i]}), mode="overwrite", storage_options=rs)
    proxy = azurite.Proxy(s["endpoint"])
    opts = {"azure_storage_account_name": s["account"], "azure_endpoint": azurite.endpoint_via(proxy, s),
            "azure_allow_http": "true"}
    yield uri, opts, s, rs, proxy
    proxy.close()


def test_fabric_token_reaches_the_store_as_a_bearer_token(azure_table, fake_notebookutils: str, recorder) -> None:
    uri, opts, s, _, proxy = azure_table
    with pytest.raises(DeltaVacuumError) as e:
        DeltaTable(uri, storage_options=opts).vacuum(168)
    # Azurite takes no OAuth token over http: it answers 403, after the request carried it.
    assert uri in str(e.value) and "403" in str(e.value)
    auth = {r["authorization"] for r in proxy.requests}
    assert auth == {f"Bearer {fake_notebookutils}"}, auth
    [run] = recorder()
    assert fake_notebookutils not in " ".join(run["argv"])
    assert run["env"]["AZURE_STORAGE_TOKEN"] == fake_notebookutils
    assert fake_notebookutils not in str(e.value)


def test_an_account_key_wins_over_the_notebook_token(azure_table, fake_notebookutils: str) -> None:
    uri, opts, s, _, proxy = azure_table
    plan = DeltaTable(uri, storage_options=dict(opts, azure_storage_account_key=s["key"])).vacuum(
        retention_hours=0, enforce_retention_duration=False)
    assert len(plan.files) == 2
    assert all(r["authorization"].startswith("SharedKey ") for r in proxy.requests)


def test_a_sas_in_the_location_goes_by_the_private_channel() -> None:
    from deltavacuum._table import split_sas

    uri = "https://acct.blob.core.windows.net/c/t?sv=2024-01-01&sp=rl&sig=SECRET%2Fsig"
    base, opts = split_sas(uri, {"aws_region": "x"})
    assert base == "https://acct.blob.core.windows.net/c/t"
    assert opts == {"aws_region": "x", "azure_storage_sas_token": "sv=2024-01-01&sp=rl&sig=SECRET%2Fsig"}
    args, env = _options.split(opts)
    assert args == ["--storage-option=aws_region=x", "--storage-option=azure_storage_sas_token=sv=2024-01-01&sp=rl&sig=SECRET%2Fsig"] and env == {}
    assert split_sas("/data/t?x", {}) == ("/data/t?x", {})  # a local path: kept whole
    assert split_sas(uri, {"sas_token": "given"})[0] == uri  # a SAS given twice: the tool decides


def test_the_warehouse_goes_by_environment(table: Path, tmp_path: Path, recorder) -> None:
    import shutil

    wh = tmp_path / "wh?sig=SECRET-WH"
    (wh / "s.db").mkdir(parents=True)
    shutil.copytree(table, wh / "s.db" / "t", copy_function=shutil.copy2)
    assert len(DeltaTable.for_name("s.t", warehouse=str(wh)).vacuum(168).files) == 2
    [run] = recorder()
    assert "SECRET-WH" not in " ".join(run["argv"]) and run["env"]["DELTAVACUUM_WAREHOUSE"] == str(wh)


def test_repr_str_and_errors_are_redacted() -> None:
    """A repr, a str and an exception show what the tool would print: no password of a URI, no
    secret storage option's value, no sensitive key=value, no token."""
    import deltavacuum

    dt = DeltaTable("s3://user:PASSWORD-1@bucket/t", storage_options={"aws_secret_access_key": "SECRET-AWS-7", "aws_region": "eu-west-1"})
    for shown in (repr(dt), str(dt), f"{dt}", repr([dt])):
        assert "PASSWORD-1" not in shown and "SECRET-AWS-7" not in shown, shown
        assert "s3://user:*********(redacted)@bucket/t" in shown, shown
    assert dt.table_uri == "s3://user:PASSWORD-1@bucket/t"  # what the tool is given is the location itself
    sas = DeltaTable("https://acct.blob.core.windows.net/c/t?sv=2024&sig=SECRET-SIG-8")
    assert "SECRET-SIG-8" not in repr(sas)
    opts = DeltaTable("/tmp/t", storage_options={"azure_storage_account_key": "c2VjcmV0LWtleS05\nline-two-secret"}, conf={"fs.azure.sas.token": "SECRET-CONF-10"})
    assert "c2VjcmV0LWtleS05" not in repr(opts) and "SECRET-CONF-10" not in repr(opts)
    plain = DeltaTable("/data/sales/date=2026-01-01/token=x")
    assert repr(plain) == "DeltaTable('/data/sales/date=2026-01-01/token=x')"  # a partition folder is no secret
    with pytest.raises(ValueError) as e:
        DeltaTable.for_name("s3://u:PASSWORD-11@b/t")
    assert "PASSWORD-11" not in str(e.value) and "PASSWORD-11" not in repr(e.value)
    for err in (deltavacuum.DeltaVacuumError("failed reading s3://u:PASSWORD-12@b/t?token=SECRET-13"),
                deltavacuum.errors.from_failure("refusing to vacuum abfss://c@a.dfs.core.windows.net/t (client_secret=SECRET-14)", 1),
                deltavacuum.errors.VacuumInterrupted("interrupted: Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXNlY3JldA")):
        shown = str(err) + repr(err) + str(getattr(err, "message", ""))
        for secret in ("PASSWORD-12", "SECRET-13", "SECRET-14", "c2lnbmF0dXJlLXNlY3JldA"):
            assert secret not in shown, shown
    # Already redacted text (the tool's) is left as it is.
    done = deltavacuum.DeltaVacuumError("s3://u:*********(redacted)@b/t password=*********(redacted)")
    assert str(done) == "s3://u:*********(redacted)@b/t password=*********(redacted)"

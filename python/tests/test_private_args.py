"""Nothing the binary's redactor treats as secret reaches its command line, which every user of
the machine reads (ps, /proc/PID/cmdline): not a storage option (any of them), not a location
holding a password or a SAS (the table, an endpoint, the inventory, the warehouse, the catalog),
not a setting. The recording wrapper (conftest.recorder) sees the child's real argv and raw
command line, and what came through the private channel (a pipe, --args-fd; on Windows an
environment variable, --args-env)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Dict, List

import pytest

from deltavacuum import DeltaTable, DeltaVacuumError, sql

from conftest import DAY


def _public(run: Dict) -> str:
    """Everything of a run another user can read: its argv and its raw command line."""
    return "\0".join(run["argv"] + (run["cmdline"] or []))


def _reached(run: Dict, s: str) -> bool:
    """Whether s reached the binary by a private way: the private arguments or the environment."""
    return any(s in a for a in run["private"] or []) or any(s in v for v in run["env"].values())


def _on_command_line(run: Dict, s: str) -> bool:
    """Whether s is on the run's command line. A short value (concurrency "7") is looked for as
    an argument or an argument's value: as a substring it is in any path of the temporary
    folder pytest numbers (pytest-7/), and the test failed on every tenth run."""
    if len(s) >= 8:
        return s in _public(run)
    return any(a == s or a.endswith("=" + s) for a in run["argv"] + (run["cmdline"] or []))


def _assert_private(run: Dict, secrets: List[str], names: List[str] = []) -> None:
    """secrets reached the binary, but not by its command line; names are not on it either."""
    assert run["cmdline"] is not None, "no /proc/self/cmdline: the raw command line is not checked"
    assert run["argv"][0].startswith("--args-fd="), run["argv"]
    for s in secrets + names:
        assert not _on_command_line(run, s), (s, run["argv"])
    for s in secrets:
        assert _reached(run, s), (s, run["private"])


STORAGE_OPTIONS = {
    "aws_region": "eu-west-1-SECRET-1",
    "aws_endpoint": "http://user:SECRET-PW-2@127.0.0.1:9",
    "aws_access_key_id": "AKID-SECRET-3",
    "aws_allow_http": "true",
    "azure_storage_account_name": "acct-SECRET-4",
    "azure_storage_account_key": "SECRET-KEY-5",
    "azure_storage_sas_token": "sv=1&sig=SECRET-SAS-6",
    "azure_endpoint": "http://127.0.0.1:9/acct?sig=SECRET-7",
    "google_service_account": "/keys/SECRET-8.json",
    "google_service_account_key": '{"private_key": "SECRET-9"}',
    "concurrency": "7",
    "max_requests_per_second": "123",
}


@pytest.mark.parametrize("key", sorted(STORAGE_OPTIONS))
def test_each_storage_option_is_off_the_command_line(key: str, capture) -> None:
    value = STORAGE_OPTIONS[key]
    with pytest.raises(DeltaVacuumError):
        DeltaTable("/no/such/table", storage_options={key: value}).vacuum()
    [run] = capture()
    _assert_private(run, [value], [key])


def test_all_storage_options_together(capture) -> None:
    with pytest.raises(DeltaVacuumError):
        DeltaTable("s3://bucket/t", storage_options=STORAGE_OPTIONS).vacuum()
    [run] = capture()
    _assert_private(run, list(STORAGE_OPTIONS.values()))
    assert not any(a.startswith("--storage-option") for a in run["argv"])


@pytest.mark.parametrize("uri", [
    "abfss://c@acct.dfs.core.windows.net/t?sv=2024-01-01&sp=rl&sig=SECRET-SIG-10",
    "https://acct.blob.core.windows.net/c/t?sv=2024-01-01&sig=SECRET-SIG-11",
    "s3://AKID:SECRET-PW-12@bucket/t",
    "s3://bucket/t?X-Amz-Signature=SECRET-13",
])
def test_a_table_uri_with_a_secret_is_off_the_command_line(uri: str, capture) -> None:
    with pytest.raises(DeltaVacuumError):
        DeltaTable(uri).vacuum()
    [run] = capture()
    secret = uri[uri.index("SECRET"):].split("@")[0]
    _assert_private(run, [secret])


def test_inventory_warehouse_catalog_and_settings_are_off_the_command_line(capture) -> None:
    inv = "https://acct.blob.core.windows.net/inv/manifest.json?sv=1&sig=SECRET-INV-14"
    with pytest.raises(DeltaVacuumError):
        DeltaTable("/no/such/table", conf={"spark.databricks.delta.retentionDurationCheck.enabled": "false"}).vacuum(
            inventory=inv, inventory_format="azure", enforce_retention_duration=False)
    with pytest.raises(DeltaVacuumError):
        DeltaTable.for_name("s.t", warehouse="abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse?sig=SECRET-WH-15").inspect()
    with pytest.raises(DeltaVacuumError):
        DeltaTable.for_name("s.t", catalog="/etc/catalog?sig=SECRET-CAT-16.yaml").history()
    with pytest.raises(DeltaVacuumError):
        sql("VACUUM s.t", catalog="/etc/catalog?sig=SECRET-CAT-17.yaml", storage_options={"aws_endpoint": "http://u:SECRET-18@127.0.0.1:9"},
            conf={"fs.azure.sas.token": "SECRET-CONF-19"})
    vacuum_run, inspect_run, history_run, sql_run = capture()
    _assert_private(vacuum_run, [inv, "spark.databricks.delta.retentionDurationCheck.enabled"])
    assert "--inventory-format=azure" in vacuum_run["argv"]  # a format, not a location: public
    for s in ("SECRET-WH-15",):
        assert s not in _public(inspect_run) and s in inspect_run["env"].get("DELTAVACUUM_WAREHOUSE", "")
    _assert_private(history_run, ["SECRET-CAT-16"])
    _assert_private(sql_run, ["SECRET-CAT-17", "SECRET-18", "SECRET-CONF-19"])


@pytest.mark.parametrize("command", ["vacuum", "inspect", "history", "runs", "undo"])
def test_every_command_keeps_the_table_off_the_command_line(command: str, capture) -> None:
    t = DeltaTable("abfss://c@acct.dfs.core.windows.net/t?sig=SECRET-SIG-20", storage_options={"azure_storage_account_name": "acct"})
    with pytest.raises(DeltaVacuumError):
        getattr(t, command)()
    [run] = capture()
    _assert_private(run, ["SECRET-SIG-20", "abfss://c@acct.dfs.core.windows.net/t", "azure_storage_account_name=acct"])
    assert run["argv"][1] == command and run["private"][-2] == "--"


def test_windows_passes_them_in_an_environment_variable(capture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows has no pass_fds: there the private arguments go in a variable of the child's
    environment (readable by the same user only, as the secret options already are)."""
    from deltavacuum import _run

    monkeypatch.setattr(_run, "_PASS_FDS", False)
    with pytest.raises(DeltaVacuumError):
        DeltaTable("s3://AKID:SECRET-PW-21@bucket/t", storage_options={"aws_endpoint": "http://u:SECRET-22@127.0.0.1:9"}).vacuum()
    [run] = capture()
    assert run["argv"][0] == f"--args-env={_run.PRIVATE_ENV}"
    for s in ("SECRET-PW-21", "SECRET-22"):
        assert s not in _public(run) and s in json.dumps(run["private"])
    assert json.loads(run["env"][_run.PRIVATE_ENV]) == run["private"]


def _csv_inventory(path: Path, table: Path) -> None:
    old = int((time.time() - 30 * DAY) * 1000)
    rows = [f"file:{table}/{p.relative_to(table).as_posix()},{p.stat().st_size},false,{old}"
            for p in sorted(table.rglob("*")) if p.is_file() and "_delta_log" not in p.parts]
    path.write_text("path,length,isDir,modificationTime\n" + "\n".join(rows) + "\n")


def test_the_binary_gets_them_and_runs(table: Path, tmp_path: Path, recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real binary, given everything privately: the table, storage options, settings, an
    inventory whose name holds a SAS-like query, a catalog; through the pipe, then through
    the environment variable as on Windows."""
    inv = tmp_path / "inv?sig=SECRET-INV-23.csv"
    _csv_inventory(inv, table)
    opts = {"concurrency": "3", "max_requests_per_second": "50"}
    res = DeltaTable(table, storage_options=opts).vacuum(
        retention_hours=1, enforce_retention_duration=False, inventory=str(inv), inventory_format="csv")
    # The inventory dates fresh.parquet 30 days back: only a run that read it deletes that file.
    assert res.raw["source"] == "inventory" and "fresh.parquet" in res.paths and "stale-1.parquet" in res.paths
    cat_dir = tmp_path / "cat?sig=SECRET-CAT-24"
    cat_dir.mkdir()
    (cat_dir / "catalog.yaml").write_text(f"tables:\n  sales.orders: {table}\n")
    assert len(DeltaTable.for_name("sales.orders", catalog=str(cat_dir / "catalog.yaml")).vacuum(168).files) == 2
    from deltavacuum import _run

    monkeypatch.setattr(_run, "_PASS_FDS", False)
    assert len(DeltaTable(table, storage_options=opts).vacuum(168).files) == 2
    first, second, third = recorder()
    for run in (first, second):
        assert run["argv"][0].startswith("--args-fd=")
    assert third["argv"][0].startswith("--args-env=")
    for run in (first, second, third):
        for s in (str(table), "SECRET-INV-23", "SECRET-CAT-24", "concurrency", "retentionDurationCheck"):
            assert s not in _public(run), (s, run["argv"])


"""Issue 34, "Never break a reader", end to end: the real engines read the table after
deltavacuum's VACUUM with retention 0 (the safety check off), which deletes everything the
retention alone would.

- Iceberg metadata written by pyiceberg over the Delta table's own files, as XTable, Delta
  UniForm and Fabric's virtualization leave it, converted three commits behind Delta: pyiceberg
  still reads the current Iceberg snapshot.
- A stopped Structured Streaming query whose table was rewritten (OPTIMIZE, DELETE): with its
  checkpoint registered (--streaming-checkpoint, or the table property), it restarts and reads;
  without, it fails (why the feature matters).
- Two Spark shallow clones in the same warehouse (--warehouse) still read after their source
  was vacuumed; without --warehouse they break.
- Spark time travel to a pinned version (deltavacuum pin --version, --timestamp).
- A pin, a checkpoint or a log that lies (a pin from the future, too long, unreadable; a
  checkpoint of another table, unreadable, missing; a log another format's converter writes;
  Iceberg metadata that cannot be read) refuses the run and changes nothing.

The tables are built once per run (harness/readers.py) and copied for each test.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import time
import urllib.parse

import pytest

from harness import fs, readers
from harness.engines import CHECK_OFF

CHECK_OFF_ARGS = ("--conf", f"{CHECK_OFF}=false")

# What Spark says when a data file of the snapshot it reads is gone.
MISSING_FILE = re.compile(r"FileNotFound|FILE_NOT_EXIST|does not exist|DELTA_FILE_NOT_FOUND", re.I)


@pytest.fixture(scope="module")
def e2e_dir(workdir):
    d = os.path.join(workdir, "readers-e2e")
    os.makedirs(d, exist_ok=True)
    return d


@pytest.fixture(scope="module")
def base(spark, e2e_dir):
    t0 = time.time()
    b = readers.reader_base(spark.session, os.path.join(e2e_dir, "base"))
    print(f"reader_base built in {time.time() - t0:.1f} s")
    return b


@pytest.fixture(scope="module")
def other(spark, e2e_dir):
    return readers.other_table(spark.session, os.path.join(e2e_dir, "other"))


def _copy(src: str, dst: str) -> str:
    shutil.copytree(src, dst, copy_function=shutil.copy2)
    return dst


def copy_base(base: dict, dst: str, with_stream: bool = False) -> dict:
    """A copy of the base table (and of its query's checkpoint and sink)."""
    out = {"table": _copy(base["table"], os.path.join(dst, "table"))}
    if with_stream:
        out["checkpoint"] = _copy(base["checkpoint"], os.path.join(dst, "checkpoint"))
        out["sink"] = _copy(base["sink"], os.path.join(dst, "sink"))
    return out


def vacuum0(dv, root: str, *extra: str):
    """deltavacuum's DRY RUN, then its real VACUUM, retention 0 with the check off; the DRY RUN
    lists exactly what the real run deletes and keeps the same files for readers."""
    dry = dv.vacuum(root, 0.0, dry_run=True, extra=extra)
    real = dv.vacuum(root, 0.0, extra=extra)
    assert sorted(dry.files) == sorted(real.files), (dry.files, real.files)
    assert sorted(k["path"] for k in dry.get("keptForReaders") or []) == \
        sorted(k["path"] for k in real.get("keptForReaders") or [])
    return dry, real


def kept(res) -> dict[str, list[str]]:
    """The files the readers kept: path -> the readers that kept it."""
    return {k["path"]: k["keptBy"] for k in res.get("keptForReaders") or []}


def attempt(fn):
    """(what fn returned, None), or (None, the error it raised with the JVM's causes: a
    streaming query's error says only that the query failed; its cause says which file was
    missing)."""
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - py4j / pyspark / streaming errors
        return None, f"{e}\n{getattr(e, '_stackTrace', '') or ''}"


def reads(fn) -> str | None:
    """None when fn reads, else the error it raised (attempt)."""
    return attempt(fn)[1]


def set_property(spark, root: str, key: str, value: str) -> None:
    spark.sql(f"ALTER TABLE delta.`{root}` SET TBLPROPERTIES ('{key}' = '{value}')").collect()


# --- Iceberg ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def uniform(spark, e2e_dir):
    pytest.importorskip("pyiceberg")
    return readers.uniform_base(spark.session, os.path.join(e2e_dir, "uniform"))


def _iceberg_after_vacuum(spark, dv, t: str, loc: str, want: list[int], latest: list[int],
                          version: int | None, want_deleted: set[str], want_kept: set[str]) -> None:
    """deltavacuum's VACUUM with retention 0 of the Delta table t, whose folder holds the Iceberg
    metadata loc: pyiceberg still reads the current snapshot (want), from the folder alone."""
    assert readers.iceberg_ids(loc) == want  # what pyiceberg reads before the VACUUM
    meta = {k for k in fs.list_tree(t).files if k.startswith("metadata/")}
    assert any(k.endswith(".metadata.json") for k in meta) and any(k.endswith(".avro") for k in meta), meta

    # VACUUM LITE (candidates from the log) keeps the same files: its DRY RUN, checked below.
    lite = dv.vacuum(t, 0.0, dry_run=True, mode="LITE")
    _, real = vacuum0(dv, t)

    # The Iceberg reader: the current snapshot reads, every metadata file is there.
    assert readers.iceberg_ids(loc) == want, "pyiceberg no longer reads the current Iceberg snapshot"
    after = fs.list_tree(t).files
    assert meta <= after.keys(), f"metadata files deleted: {sorted(meta - after.keys())}"
    # Delta readers: the latest version, unchanged.
    assert readers.ids(spark.session, t) == latest

    deleted = set(real.files)
    assert deleted == want_deleted, f"deleted {sorted(deleted)}, expected {sorted(want_deleted)}"
    rs = real["readers"]
    assert [r["kind"] for r in rs] == ["iceberg"], rs
    assert rs[0]["name"] == os.path.relpath(urllib.parse.urlparse(loc).path, t), rs
    assert rs[0].get("version") == version, rs
    k = kept(real)
    assert set(k) == want_kept, f"kept for readers {sorted(k)}, expected {sorted(want_kept)}"
    assert all(any("Iceberg" in b for b in by) for by in k.values()), k
    assert rs[0]["numFilesKept"] == len(want_kept), rs
    for e in real["keptForReaders"]:
        assert e["size"] > 0 and e["modificationTime"] and e["reason"], e
    assert set(lite.files) == want_deleted and set(kept(lite)) == want_kept, (lite.files, kept(lite))


@pytest.mark.parametrize("converter", ["xtable", "uniform", "none"])
def test_iceberg_reads_its_snapshot_after_vacuum(converter, base, spark, dv, scenario_dir):
    """pyiceberg writes Iceberg metadata in the table's metadata/ folder over the Delta table's
    own files: a snapshot of Delta version 2, then the current one of version 4, while Delta
    goes on to version 7 (OPTIMIZE at 5 removes every file of version 4). After deltavacuum's
    VACUUM with retention 0, pyiceberg still reads the current snapshot, from the folder alone.
    With a converter's mark (XTable's XTABLE_METADATA; UniForm's delta-version, here on a table
    whose Delta log does not say UniForm) version 4 is pinned, so fe (removed at 7) is kept; with
    none (Fabric's virtualization) exactly the manifests' data files are kept, and fe goes."""
    pytest.importorskip("pyiceberg")
    t = copy_base(base, scenario_dir)["table"]
    f = base["files"]
    loc = readers.iceberg_metadata(t, os.path.join(scenario_dir, "catalog"), first=[f["fb"]],
                                   current=[f["fb"], f["fc"], f["fd"]], converter=converter,
                                   version=4, first_version=2)
    pinned = converter != "none"
    _iceberg_after_vacuum(spark, dv, t, loc, want=base["ids"][4], latest=base["ids"][7],
                          version=4 if pinned else None,
                          want_deleted={f["fa"]} | (set() if pinned else {f["fe"]}),
                          want_kept={f["fb"], f["fc"], f["fd"]} | ({f["fe"]} if pinned else set()))


def test_iceberg_over_uniform_table_reads_after_vacuum(uniform, spark, dv, scenario_dir):
    """The same on a table Delta Spark created with UniForm enabled (column mapping,
    IcebergCompatV2, data files under random prefixes with Parquet field ids), the Iceberg
    metadata written as UniForm writes it (delta-version 3, three versions behind Delta)."""
    t = _copy(uniform["table"], os.path.join(scenario_dir, "table"))
    f = uniform["files"]
    assert "/" in f["fb"], f  # random prefixes: the files are in folders
    loc = readers.iceberg_metadata(t, os.path.join(scenario_dir, "catalog"), first=[f["fb"]],
                                   current=[f["fb"], f["fc"]], converter="uniform", version=3,
                                   first_version=2, field_ids=True)
    _iceberg_after_vacuum(spark, dv, t, loc, want=uniform["ids"][3], latest=uniform["ids"][6], version=3,
                          want_deleted={f["fa"]}, want_kept={f["fb"], f["fc"], f["fd"]})


# --- Structured Streaming -----------------------------------------------------------------

@pytest.mark.parametrize("registration", ["flag", "property", "none"])
def test_streaming_query_restarts_after_vacuum(registration, base, spark, dv, scenario_dir):
    """A query read the table to version 3 and stopped; the table went on (append, OPTIMIZE,
    append, DELETE). With its checkpoint registered (--streaming-checkpoint, or the table
    property deltavacuum.streamingCheckpoints), deltavacuum's VACUUM with retention 0 keeps
    what the query reads next, and the query restarts and reads the appends (skipChangeCommits
    skips the DELETE). Without the registration the same VACUUM deletes them and the restart
    fails: the reason the feature exists."""
    c = copy_base(base, scenario_dir, with_stream=True)
    t, cp, sink = c["table"], c["checkpoint"], c["sink"]
    f = base["files"]
    extra: tuple[str, ...] = ()
    if registration == "flag":
        extra = ("--streaming-checkpoint", cp)
    elif registration == "property":
        set_property(spark, t, "deltavacuum.streamingCheckpoints", cp)

    _, real = vacuum0(dv, t, *extra)
    restart = lambda: readers.run_stream(spark.session, t, cp, sink)  # noqa: E731

    if registration == "none":
        assert {f["fb"], f["fc"], f["fd"], f["fe"]} <= set(real.files), real.files
        err = reads(restart)
        assert err is not None, "the query restarted without the files it reads next: the test proves nothing"
        assert MISSING_FILE.search(err), err[:3000]
        return

    err = reads(restart)
    assert err is None, f"the query failed after deltavacuum's VACUUM: {err[:3000]}"
    assert readers.ids(spark.session, sink) == base["sink_ids"] + [30, 31, 32, 40, 41, 42]
    assert set(real.files) == {f["fa"]}, real.files
    rs = real["readers"]
    assert [(r["kind"], r["name"], r.get("version")) for r in rs] == [("streaming", cp, 4)], rs
    assert set(kept(real)) == {f["fb"], f["fc"], f["fd"], f["fe"]}, kept(real)
    assert rs[0]["numFilesKept"] == 4, rs


def test_streaming_query_inside_its_initial_snapshot_restarts_after_vacuum(base, spark, dv, scenario_dir):
    """A query that started on the table (its snapshot at version 7: two files) read one file
    (maxFilesPerTrigger 1) and was stopped inside its initial snapshot; OPTIMIZE then removed
    both files. With the checkpoint registered (the table property), version 7 is pinned, the
    VACUUM keeps them, and the restarted query reads the rest of the snapshot: its sink ends
    with the table's rows."""
    t = copy_base(base, scenario_dir)["table"]
    cp, sink = os.path.join(scenario_dir, "checkpoint"), os.path.join(scenario_dir, "sink")
    readers.stop_after_first_batch(spark.session, t, cp, sink)
    assert len(readers.ids(spark.session, sink)) < len(base["ids"][7])  # stopped half way
    spark.sql(f"OPTIMIZE delta.`{t}`").collect()
    live7 = readers.files_at(spark.session, t, 7)
    assert len(live7) == 2, live7

    set_property(spark, t, "deltavacuum.streamingCheckpoints", cp)
    _, real = vacuum0(dv, t)
    err = reads(lambda: readers.run_stream(spark.session, t, cp, sink))
    assert err is None, f"the query failed after deltavacuum's VACUUM: {err[:3000]}"
    assert readers.ids(spark.session, sink) == base["ids"][7]
    assert [(r["kind"], r.get("version")) for r in real["readers"]] == [("streaming", 7)], real["readers"]
    assert set(live7) <= set(kept(real)), (live7, kept(real))
    assert not set(live7) & set(real.files)


# --- Shallow clones -----------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["spark", "lakehouse"])
def test_shallow_clones_read_after_source_vacuumed(layout, spark, dv, scenario_dir):
    """Spark's SHALLOW CLONEs of a table name files the source table no longer references (by
    absolute URIs, partition values with ' ', '%', ':'): in a Spark warehouse (its folder's
    name with a space and '%20'; one clone at the root, one in a <db>.db folder; the source
    vacuumed by its path) and in a Fabric lakehouse with schemas (Tables/dbo/, Tables/sales/; the source
    vacuumed by its name dbo.src, the warehouse given as a file:// URI). deltavacuum's VACUUM of
    the source with --warehouse keeps them, and both clones read; the same VACUUM without
    --warehouse does not see the clones and breaks them."""
    w = readers.clone_warehouse(spark.session, scenario_dir, layout)
    src, c1, c2, f = w["src"], w["c1"], w["c2"], w["files"]
    want = {c1: [10, 11, 12], c2: [20, 21, 22]}
    for c, ids in want.items():
        assert readers.ids(spark.session, c) == ids

    wh = w["warehouse"] if layout == "spark" else "file://" + w["warehouse"]
    _, real = vacuum0(dv, w["name"], "--warehouse", wh)
    for c, ids in want.items():
        got, err = attempt(lambda c=c: readers.ids(spark.session, c))
        assert err is None, f"the shallow clone {c} no longer reads: {err[:3000]}"
        assert got == ids
    assert readers.ids(spark.session, src) == [30, 31, 32]
    assert set(real.files) == {f["fa"]}, real.files
    rs = real["readers"]
    assert sorted((r["kind"], os.path.realpath(r["name"].removeprefix("file://"))) for r in rs) == \
        sorted([("clone", c1), ("clone", c2)]), rs
    assert [r["numFilesKept"] for r in rs] == [1, 1], rs
    k = kept(real)
    assert set(k) == {f["fb"], f["fc"]}, k
    assert any("c1" in b for b in k[f["fb"]]) and any("c2" in b for b in k[f["fc"]]), k

    # Without the warehouse: the clones' files go, and the clones break.
    _, real = vacuum0(dv, src)
    assert set(real.files) == {f["fb"], f["fc"]}, real.files
    for c in want:
        err = reads(lambda c=c: readers.ids(spark.session, c))
        assert err is not None and MISSING_FILE.search(err), f"{c}: {err and err[:2000]}"


# --- Pins ---------------------------------------------------------------------------------

def _pin(dv, t: str, *args: str) -> dict:
    p = dv.run("pin", t, *args, "--reason", "conformance: time travel to version 4", "--json")
    assert p.returncode == 0, f"deltavacuum pin exited {p.returncode}: {p.stderr}{p.stdout}"
    return json.loads(p.stdout)


def _pinned_vacuum(base, spark, dv, t: str, pin: dict, at) -> None:
    """VACUUM with retention 0 under the pin of version 4: time travel to 4 and after reads."""
    f = base["files"]
    p = dv.run("pins", t, "--json")
    assert p.returncode == 0, p.stderr
    pins = json.loads(p.stdout)["pins"]
    assert [(x["id"], x["version"], x["state"]) for x in pins] == [(pin["id"], 4, "active")], pins

    # The text DRY RUN says which files the pin keeps, and why.
    p = dv.run("vacuum", t, "--dry-run", "--retain-hours", "0", *CHECK_OFF_ARGS)
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("kept\t")]
    assert sorted(ln.split("\t")[3] for ln in lines) == sorted([f["fb"], f["fc"], f["fd"], f["fe"]]), p.stdout
    assert all(ln.split("\t")[4].startswith(f"read by the pin {pin['id']}") for ln in lines), lines

    lite = dv.vacuum(t, 0.0, dry_run=True, mode="LITE")  # LITE keeps the same files (checked below)
    _, real = vacuum0(dv, t)
    for v in range(4, 8):  # every version from the pinned one on
        got, err = attempt(lambda v=v: at(v))
        assert err is None, f"time travel to version {v} fails after the pinned VACUUM: {err[:3000]}"
        assert got == base["ids"][v], v
    assert set(real.files) == {f["fa"]}, real.files
    assert [(r["kind"], r.get("version"), r["numFilesKept"]) for r in real["readers"]] == [("pin", 4, 4)], \
        real["readers"]
    assert set(kept(real)) == {f["fb"], f["fc"], f["fd"], f["fe"]}, kept(real)
    assert set(lite.files) == {f["fa"]} and set(kept(lite)) == {f["fb"], f["fc"], f["fd"], f["fe"]}, \
        (lite.files, kept(lite))
    # The VACUUM did delete: version 1's only file is gone.
    err = reads(lambda: at(1))
    assert err is not None and MISSING_FILE.search(err), err


def test_time_travel_to_pinned_version(base, spark, dv, scenario_dir):
    """deltavacuum pin --version 4; VACUUM with retention 0; Spark time-travels to every version
    from 4 on (versionAsOf). After unpin, the next VACUUM deletes what only the pin kept and
    version 4 no longer reads: the pin is what kept it."""
    t = copy_base(base, scenario_dir)["table"]
    pin = _pin(dv, t, "--version", "4", "--for", "2h")
    assert pin["version"] == 4, pin
    at = lambda v: readers.ids(spark.session, t, v)  # noqa: E731
    _pinned_vacuum(base, spark, dv, t, pin, at)

    p = dv.run("unpin", t, pin["id"])
    assert p.returncode == 0, p.stderr
    _, real = vacuum0(dv, t)
    f = base["files"]
    assert set(real.files) == {f["fb"], f["fc"], f["fd"], f["fe"]}, real.files
    assert real["readers"] == [], real["readers"]
    err = reads(lambda: at(4))
    assert err is not None and MISSING_FILE.search(err), err
    assert readers.ids(spark.session, t) == base["ids"][7]


def test_time_travel_to_pinned_timestamp(base, spark, dv, scenario_dir):
    """The commits are dated an hour apart (their files' modification times, as Spark and
    deltavacuum read a commit's time); deltavacuum pin --timestamp half an hour after commit 4
    pins version 4, the version Spark's timestampAsOf reads there. After VACUUM with retention
    0, Spark time-travels to that timestamp and later ones."""
    t = copy_base(base, scenario_dir)["table"]
    start = time.time() - 12 * 3600
    for v in range(8):
        fs.set_mtime(os.path.join(t, "_delta_log", f"{v:020d}.json"), start + v * 3600)

    def iso(v: int) -> str:
        when = dt.datetime.fromtimestamp(start + v * 3600 + 1800, tz=dt.timezone.utc)
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")

    def at(v: int) -> list[int]:
        df = spark.session.read.format("delta").option("timestampAsOf", iso(v).replace("T", " ").rstrip("Z")).load(t)
        return sorted(r[0] for r in df.collect())

    assert at(4) == base["ids"][4], "Spark reads another version at the timestamp: the dates did not take"
    pin = _pin(dv, t, "--timestamp", iso(4), "--for", "2h")
    assert pin["version"] == 4, pin
    _pinned_vacuum(base, spark, dv, t, pin, at)


# --- Readers that lie ---------------------------------------------------------------------

def _lying_pin(dv, t: str, edit) -> None:
    """A pin made by deltavacuum pin, then its file changed by edit(path) as another writer (a
    clock ahead, a torn write) would leave it. The file is found through deltavacuum pins."""
    p = dv.run("pin", t, "--version", "0", "--for", "1h", "--reason", "conformance: a pin that lies")
    assert p.returncode == 0, f"deltavacuum pin exited {p.returncode}: {p.stderr}{p.stdout}"
    p = dv.run("pins", t, "--json")
    assert p.returncode == 0, p.stderr
    pins = json.loads(p.stdout)["pins"]
    assert len(pins) == 1 and pins[0]["state"] == "active", pins
    edit(os.path.join(t, pins[0]["key"]))


def _from_the_future(path: str) -> None:
    with open(path) as fh:
        doc = json.load(fh)
    ahead = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    doc["created"] = ahead.strftime("%Y-%m-%dT%H:%M:%SZ")
    doc["until"] = (ahead + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with open(path, "w") as fh:
        json.dump(doc, fh)


def _torn(path: str) -> None:
    with open(path, "r+") as fh:
        half = fh.read()[:40]
        fh.seek(0)
        fh.truncate()
        fh.write(half)


LIES = {
    # lie: what the refusal must say
    "pin-from-the-future": "ahead of this clock",
    "pin-too-long": "longer than the maximum",
    "pin-unreadable": "not a pin this deltavacuum reads",
    "checkpoint-of-another-table": "cannot be honoured",
    "checkpoint-of-another-table-flag": "cannot be honoured",
    "checkpoint-unreadable": "cannot be honoured",
    "checkpoint-missing": "cannot be honoured",
    "log-converted-by-xtable": "translation of another table format",
    "log-converted-by-onelake": "translation of another table format",
    "iceberg-unreadable": "Iceberg metadata that cannot be read",
}


@pytest.mark.parametrize("lie", list(LIES))
def test_a_reader_that_lies_fails_closed(lie, other, base, spark, dv, scenario_dir):
    """A reader that cannot be trusted refuses the run (exit 1, standard error says which),
    DRY RUN and real run alike, and the table is left exactly as it was: a VACUUM would
    otherwise delete fa, removed at version 1."""
    t = _copy(other["table"], os.path.join(scenario_dir, "table"))
    extra: tuple[str, ...] = ()
    if lie == "pin-from-the-future":
        _lying_pin(dv, t, _from_the_future)
    elif lie == "pin-too-long":
        # Written with a larger maximum than the VACUUM's (30 days).
        p = dv.run("pin", t, "--version", "0", "--for", "60d", "--max-pin", "90d", "--reason", "conformance: too long")
        assert p.returncode == 0, p.stderr
    elif lie == "pin-unreadable":
        _lying_pin(dv, t, _torn)
    elif lie == "checkpoint-of-another-table":
        cp = _copy(base["checkpoint"], os.path.join(scenario_dir, "checkpoint"))
        set_property(spark, t, "deltavacuum.streamingCheckpoints", cp)
    elif lie == "checkpoint-of-another-table-flag":
        cp = _copy(base["checkpoint"], os.path.join(scenario_dir, "checkpoint"))
        extra = ("--streaming-checkpoint", cp)
    elif lie == "checkpoint-unreadable":
        cp = _copy(other["checkpoint"], os.path.join(scenario_dir, "checkpoint"))
        offsets = os.path.join(cp, "offsets")
        newest = max((n for n in os.listdir(offsets) if n.isdigit()), key=int)
        with open(os.path.join(offsets, newest), "w") as fh:
            fh.write('v1\n{"batchWatermarkMs":0,\n')
        crc = os.path.join(offsets, f".{newest}.crc")
        if os.path.exists(crc):
            os.remove(crc)
        set_property(spark, t, "deltavacuum.streamingCheckpoints", cp)
    elif lie == "checkpoint-missing":
        set_property(spark, t, "deltavacuum.streamingCheckpoints", os.path.join(scenario_dir, "no-such-checkpoint"))
    elif lie == "log-converted-by-xtable":
        mark = json.dumps({"lastInstantSynced": "2026-01-02T03:04:05Z", "instantsToConsiderForNextSync": [],
                           "version": 0, "sourceTableFormat": "ICEBERG", "sourceIdentifier": "7"})
        set_property(spark, t, "XTABLE_METADATA", mark)
    elif lie == "log-converted-by-onelake":
        with open(os.path.join(t, "_delta_log", "latest_conversion_log.txt"), "w") as fh:
            fh.write("conversion succeeded\n")
    elif lie == "iceberg-unreadable":
        pytest.importorskip("pyiceberg")
        loc = readers.iceberg_metadata(t, os.path.join(scenario_dir, "catalog"), first=[other["files"]["fb"]],
                                       current=[other["files"]["fb"]], converter="none", version=1, first_version=1)
        from pyiceberg.table import StaticTable
        ml = StaticTable.from_metadata(loc).current_snapshot().manifest_list.removeprefix("file://")
        os.remove(ml)  # the current snapshot's manifest list is gone: what the snapshot reads is unknown
    else:
        raise AssertionError(lie)

    before = fs.list_tree(t)
    for dry in (True, False):
        args = ["vacuum", t, "--retain-hours", "0", *CHECK_OFF_ARGS, *extra] + (["--dry-run"] if dry else [])
        p = dv.run(*args)
        what = "DRY RUN" if dry else "VACUUM"
        assert p.returncode == 1, f"{what} exited {p.returncode}, not refused (1):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
        assert LIES[lie] in p.stderr, f"{what}: the refusal does not say {LIES[lie]!r}:\n{p.stderr[-3000:]}"
    after = fs.list_tree(t)
    assert after.files == before.files and after.dirs.keys() == before.dirs.keys(), \
        f"the refused runs changed the table: gone {sorted(before.files.keys() - after.files.keys())}, " \
        f"new {sorted(after.files.keys() - before.files.keys())}"

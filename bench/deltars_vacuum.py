#!/usr/bin/env python3
"""delta-rs baseline for dvbench: VACUUM FULL (or a log load) of one table with the `deltalake`
package, printing one JSON line with its own timings (import, table load, vacuum) and the number
of files it deleted (or would delete). The parent process measures wall time and peak RSS.

    python bench/deltars_vacuum.py TABLE [--dry-run | --load-only]
"""
import argparse
import json
import time

p = argparse.ArgumentParser()
p.add_argument("table")
p.add_argument("--dry-run", action="store_true")
p.add_argument("--load-only", action="store_true", help="only load the table (log replay) and count its files")
a = p.parse_args()

t0 = time.perf_counter()
import deltalake  # noqa: E402

t1 = time.perf_counter()
dt = deltalake.DeltaTable(a.table)
t2 = time.perf_counter()
if a.load_only:
    n = len(dt.file_uris())
else:
    n = len(dt.vacuum(retention_hours=0, dry_run=a.dry_run, enforce_retention_duration=False, full=True))
t3 = time.perf_counter()
print(json.dumps({
    "files": n,
    "deltalake": deltalake.__version__,
    "importSeconds": t1 - t0,
    "loadSeconds": t2 - t1,
    "vacuumSeconds": t3 - t2,
    "inProcessSeconds": t3 - t1,
}))

#!/usr/bin/env python3
"""Tables of the listing benchmarks (dvbench listing, bench/listing.sh) for docs/benchmarks.md:
one row per layout and case, medians over the reps, requests by kind, and the floors.

    python bench/listing_report.py RESULTS.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict

rows = defaultdict(list)
order = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = (r["label"], r["case"])
    if key not in rows:
        order.append(key)
    rows[key].append(r)


def med(xs):
    return statistics.median(xs)


print("| layout | case | wall s | CPU s | list | head | get | put | batch delete | delete | all | files |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
last = None
for label, case in order:
    rs = rows[(label, case)]
    req = rs[0]["inner"]["requests"]
    counts = {k: med([r["inner"]["requests"][k] for r in rs]) for k in req}
    total = sum(counts.values())
    wall = med([r["wallSeconds"] for r in rs])
    cpu = med([r["userSeconds"] + r["sysSeconds"] for r in rs])
    err = " (error)" if any(r.get("error") for r in rs) else ""
    name = label if label != last else ""
    last = label
    print(f"| {name} | {case}{err} | {wall:.2f} | {cpu:.2f} | {counts['List']:.0f} | {counts['Head']:.0f} | {counts['Get']:.0f} | "
          f"{counts['Put']:.0f} | {counts['BatchDelete']:.0f} | {counts['Delete']:.0f} | {total:.0f} | {rs[0]['files']} |")

print()
print("| layout | objects | in _delta_log/ | leaf folders | page | flat floor | data floor | batches |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
seen = set()
for label, case in order:
    if label in seen:
        continue
    seen.add(label)
    r = rows[(label, case)][0]
    f = r["inner"]["floor"]
    print(f"| {label} | {r['inner']['objects']} | {r['inner']['logObjects']} | {r['partitions']} | {f['pageSize']} | {f['flat']} | {f['data']} | {f['batches']} |")

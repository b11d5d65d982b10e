#!/usr/bin/env python3
"""Summarizes the JSON lines written by `dvbench suite` (bench/run.sh): medians per label and
case as Markdown tables, the target ratios, and a plot of wall time against number of files
for deltavacuum FULL, delta-rs FULL and the find + rm floor.

    python bench/report.py results.jsonl [more.jsonl ...] [--plot out.png]
"""
import argparse
import json
import statistics
from collections import defaultdict

p = argparse.ArgumentParser()
p.add_argument("results", nargs="+")
p.add_argument("--plot")
a = p.parse_args()

runs = defaultdict(list)  # (label, case) -> records
errors = []
order = []
for path in a.results:
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            key = (r.get("label", ""), r["case"])
            if r.get("error"):
                errors.append(r)
                continue
            if key not in runs:
                order.append(key)
            runs[key].append(r)


def med(rs, field):
    return statistics.median(x[field] for x in rs)


def cpu(rs):
    return statistics.median(x["userSeconds"] + x["sysSeconds"] for x in rs)


labels = []
for label, _ in order:
    if label not in labels:
        labels.append(label)

print("| table | case | runs | median wall s | min–max s | median CPU s | median peak RSS MiB | files |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for label in labels:
    for (l, case) in order:
        if l != label or case.startswith(("s3-", "azure-")):
            continue
        rs = runs[(l, case)]
        walls = [x["wallSeconds"] for x in rs]
        print(f"| {label} | {case} | {len(rs)} | {med(rs, 'wallSeconds'):.2f} | {min(walls):.2f}–{max(walls):.2f} | "
              f"{cpu(rs):.2f} | {med(rs, 'maxRSSMiB'):.0f} | {rs[-1]['files']} |")

print()
print("| table | FULL / floor (wall) | delta-rs FULL / deltavacuum FULL (wall) | same, DRY RUN | "
      "deltavacuum / delta-rs peak RSS (FULL) | same, DRY RUN |")
print("| --- | --- | --- | --- | --- | --- |")
for label in labels:
    def r(a_, b_, f):
        if (label, a_) in runs and (label, b_) in runs:
            return f"{med(runs[(label, a_)], f) / med(runs[(label, b_)], f):.2f}"
        return "–"
    if (label, "dv-full") not in runs or (label, "floor") not in runs:
        continue
    print(f"| {label} | {r('dv-full', 'floor', 'wallSeconds')} | {r('deltars-full', 'dv-full', 'wallSeconds')} | "
          f"{r('deltars-dry', 'dv-dry', 'wallSeconds')} | {r('dv-full', 'deltars-full', 'maxRSSMiB')} | "
          f"{r('dv-dry', 'deltars-dry', 'maxRSSMiB')} |")
for label in labels:
    if (label, "spark-full") in runs or (label, "spark-dry") in runs:
        def r2(a_, b_, f):
            if (label, a_) in runs and (label, b_) in runs:
                return f"{med(runs[(label, a_)], f) / med(runs[(label, b_)], f):.1f}"
            return "–"
        print(f"\n{label}: Spark FULL / deltavacuum FULL wall {r2('spark-full', 'dv-full', 'wallSeconds')}, "
              f"DRY RUN {r2('spark-dry', 'dv-dry', 'wallSeconds')}; peak RSS (JVM) / deltavacuum "
              f"{r2('spark-full', 'dv-full', 'maxRSSMiB')}")

planner = [(runs[k][0]["live"], runs[k]) for k in order if k[1] == "plan-synthetic"]
if planner:
    print()
    print("| live files (synthetic) | median plan s | median peak RSS MiB | peak heap MiB | retained heap MiB | retained without the plan MiB |")
    print("| --- | --- | --- | --- | --- | --- |")
    for live, rs in sorted(planner):
        i = lambda f: statistics.median(x["inner"][f] for x in rs)
        print(f"| {live:,} | {i('seconds'):.1f} | {med(rs, 'maxRSSMiB'):.0f} | {i('peakHeapMiB'):.0f} | "
              f"{i('retainedHeapMiB'):.0f} | {i('retainedNoPlanHeapMiB'):.0f} |")
    if len(planner) >= 2:
        (l0, r0), (l1, r1) = sorted(planner)[0], sorted(planner)[-1]
        mib = 1 << 20
        for name, f in [("peak RSS", None), ("peak heap", "peakHeapMiB"), ("retained heap", "retainedHeapMiB")]:
            v = (lambda rs: med(rs, "maxRSSMiB")) if f is None else (lambda rs, f=f: statistics.median(x["inner"][f] for x in rs))
            slope = (v(r1) - v(r0)) * mib / (l1 - l0)
            print(f"\nplanner {name} per live file between {l0:,} and {l1:,} live files: {slope:.1f} bytes")

s3 = [(k, runs[k]) for k in order if k[1].startswith(("s3-c", "azure-c"))]
if s3:
    print()
    print("| table | concurrency | runs | median plan s | median execute s | list requests (floor) | "
          "delete requests (floor) | get | put | list+delete / floor |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (label, case), rs in s3:
        inner = [x["inner"] for x in rs]
        rq = inner[-1]["requests"]
        fl, fd = inner[-1]["floorList"], inner[-1]["floorDelete"]
        print(f"| {label} | {inner[-1]['concurrency']} | {len(rs)} | "
              f"{statistics.median(i['planSeconds'] for i in inner):.2f} | "
              f"{statistics.median(i['executeSeconds'] for i in inner):.2f} | {rq['list']} ({fl}) | "
              f"{rq['delete']} ({fd}) | {rq['get']} | {rq['put']} | {(rq['list'] + rq['delete']) / (fl + fd):.3f} |")

if errors:
    print()
    print("Runs that failed or deleted a live file:")
    for r in errors:
        print(f"- {r.get('label')} {r['case']} run {r['rep']}: {r['error'].splitlines()[0][:300]}")

if a.plot:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = {"floor": "find + rm (floor)", "dv-full": "deltavacuum FULL", "deltars-full": "delta-rs FULL"}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    metrics = [("wall time, s (median; bars: min–max)", lambda x: x["wallSeconds"]),
               ("CPU time (user + sys), s (median; bars: min–max)", lambda x: x["userSeconds"] + x["sysSeconds"])]
    for ax, (ylabel, value) in zip(axes, metrics):
        for case, title in series.items():
            pts = []
            for (l, c), rs in runs.items():
                if c != case or not l.startswith("local-"):
                    continue
                vs = [value(x) for x in rs]
                pts.append((rs[0]["live"] + rs[0]["stale"], statistics.median(vs), min(vs), max(vs)))
            if not pts:
                continue
            pts.sort()
            xs = [x[0] / 1e6 for x in pts]
            ys = [x[1] for x in pts]
            err = [[y - x[2] for y, x in zip(ys, pts)], [x[3] - y for y, x in zip(ys, pts)]]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=title)
        ax.set_xlabel("files in the table, millions (live + 20 % to delete)")
        ax.set_ylabel(ylabel)
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle("VACUUM FULL on local disk (ext4, retention 0); 2 cores shared with other work")
    fig.tight_layout()
    fig.savefig(a.plot, dpi=100)

#!/usr/bin/env python3
"""Writes docs/mutation-results.md from gremlins' JSON results (scripts/mutation.sh).

For each target: killed, lived, not covered, timed out, not viable; the efficacy (killed over
killed and lived, as gremlins counts it) and the mutant coverage; then every mutant that lived
or was not covered, with the source line it changes, so that docs/mutation.md can explain each.
"""
import json
import os
import sys
from collections import Counter

TARGETS = [("rules", "vacuum's rule files (vacuum/doc.go)"), ("run", "the run package (run/)")]


def source_line(path, line):
    try:
        with open(path, encoding="utf-8") as f:
            for i, text in enumerate(f, 1):
                if i == line:
                    return text.strip()
    except OSError:
        pass
    return ""


def main(outdir, doc):
    lines = [
        "# Mutation testing: the results",
        "",
        "Written by `make mutation` (scripts/mutation.sh, gremlins "
        "v0.6.0); what each survivor means is in docs/mutation.md.",
        "",
        "| target | killed | lived | not covered | timed out | not viable | efficacy | mutant coverage |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    survivors = []
    for key, name in TARGETS:
        path = os.path.join(outdir, key + ".json")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
        c = Counter()
        for fl in r.get("files", []):
            for m in fl.get("mutations", []):
                c[m["status"]] += 1
                if m["status"] in ("LIVED", "NOT COVERED"):
                    survivors.append((key, fl["file_name"], m["line"], m["column"], m["type"], m["status"]))
        killed, lived = c["KILLED"], c["LIVED"]
        eff = 100.0 * killed / (killed + lived) if killed + lived else 0.0
        total = killed + lived + c["NOT COVERED"]
        cov = 100.0 * (killed + lived) / total if total else 0.0
        lines.append(
            f"| {name} | {killed} | {lived} | {c['NOT COVERED']} | {c['TIMED OUT']} | {c['NOT VIABLE']} | {eff:.1f} % | {cov:.1f} % |"
        )
    lines += ["", "## Every mutant that lived or was not covered", "",
              "| target | file:line:column | mutation | status | the line |", "| --- | --- | --- | --- | --- |"]
    for key, fname, line, col, typ, status in sorted(survivors):
        rel = fname
        for d in ("vacuum", "run"):
            if os.path.exists(os.path.join(d, os.path.basename(fname))) and "/" not in fname:
                rel = os.path.join(d, fname)
        text = source_line(rel, line).replace("|", "\\|")
        lines.append(f"| {key} | `{rel}:{line}:{col}` | {typ} | {status} | `{text}` |")
    with open(doc, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

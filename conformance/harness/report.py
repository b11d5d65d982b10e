"""The record of a run: every scenario's differences (violations, intended ones, delta-rs's), the
engine versions and the time each scenario took. Printed at the end of pytest's output and
written as Markdown."""

from __future__ import annotations

import dataclasses
import os
import time

from .compare import INTENDED, Outcome


@dataclasses.dataclass
class Entry:
    scenario: str
    outcome: Outcome
    delta_rs: list[str]
    counts: dict[str, object]
    seconds: float


class Report:
    def __init__(self):
        self.entries: list[Entry] = []
        self.versions: dict[str, str] = {}
        self.started = time.time()
        self.phases: dict[str, float] = {}

    def add(self, scenario: str, outcome: Outcome, delta_rs=(), counts=None, seconds=0.0) -> None:
        self.entries.append(Entry(scenario, outcome, list(delta_rs), dict(counts or {}), seconds))

    def phase(self, name: str, seconds: float) -> None:
        self.phases[name] = self.phases.get(name, 0.0) + seconds

    def markdown(self) -> str:
        out = ["# deltavacuum conformance report", ""]
        out += [f"- {k}: {v}" for k, v in self.versions.items()]
        out += [f"- wall time of the session: {time.time() - self.started:.0f} s"]
        out += [f"- {k}: {v:.0f} s" for k, v in sorted(self.phases.items())]
        out += ["", "| scenario | result | Spark deleted | deltavacuum deleted | delta-rs deleted | intended differences | s |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        for e in self.entries:
            tags = sorted({t for t, _ in e.outcome.intended})
            result = "FAIL" if e.outcome.violations else ("xfail (known bug)" if e.outcome.bugs else "ok")
            out.append(f"| {e.scenario} | {result} | {e.counts.get('spark', '')} | {e.counts.get('deltavacuum', '')} "
                       f"| {e.counts.get('delta-rs', '')} | {', '.join(tags)} | {e.seconds:.0f} |")
        out += ["", "## Differences", ""]
        for e in self.entries:
            if not (e.outcome.violations or e.outcome.bugs or e.outcome.intended or e.outcome.info or e.delta_rs):
                continue
            out.append(f"### {e.scenario}")
            for v in e.outcome.violations:
                out.append(f"- VIOLATION: {v}")
            for tag, keys in e.outcome.bugs:
                out.append(f"- KNOWN BUG `{tag}`: " + ", ".join(f"`{k}`" for k in keys))
            for tag, keys in e.outcome.intended:
                mark, _ = INTENDED[tag]
                out.append(f"- intended {mark} `{tag}`: " + ", ".join(f"`{k}`" for k in keys))
            for i in e.outcome.info:
                out.append(f"- note: {i}")
            for n in e.delta_rs:
                out.append(f"- delta-rs: {n}")
            out.append("")
        return "\n".join(out) + "\n"

    def write(self, path: str) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.markdown())

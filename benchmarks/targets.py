"""The measured targets, met or missed, gathered from every benchmark into one summary.

Each benchmark calls :func:`target` for every figure that has a target (besides printing its own
table). When the runner (``benchmarks/run.py``) started it, the runner named a file in the
environment variable ``YAK_BENCH_TARGETS``; each call appends one JSON line there, and the runner
prints them all in one table at the end and exits non-zero when one was missed. Run alone, a
benchmark only prints its own tables.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

ENV = "YAK_BENCH_TARGETS"


@dataclass(frozen=True)
class Target:
    """One figure against its target.

    Attributes:
        name: what was measured ("UI loop, stream+refresh: max gap").
        measured: the figure as measured, with its unit ("41.2 ms (p99 13.6 ms)").
        target: the target, with its unit ("<= 50 ms, p99 < 16 ms").
        met: whether the figure meets the target.
        source: the benchmark module that measured it.
    """

    name: str
    measured: str
    target: str
    met: bool
    source: str = ""


def target(name: str, measured: str, goal: str, met: bool) -> Target:
    """Record one figure against its target (appended to ``$YAK_BENCH_TARGETS`` when set).

    Args:
        name: what was measured.
        measured: the figure with its unit.
        goal: the target with its unit.
        met: whether the figure meets the target.

    Returns:
        The record.
    """
    import __main__

    source = getattr(__main__, "__spec__", None)
    record = Target(name, measured, goal, met, source.name if source is not None else "")
    path = os.environ.get(ENV)
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(json.dumps(asdict(record)) + "\n")
    return record


def read(path: Path) -> list[Target]:
    """The records in ``path`` (none when it does not exist)."""
    if not path.exists():
        return []
    return [
        Target(**json.loads(line))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def summary(records: list[Target]) -> str:
    """One table: every target with ``ok`` or ``MISSED``, in the order measured."""
    name_width = max([len(r.name) for r in records] + [len("target")])
    measured_width = max([len(r.measured) for r in records] + [len("measured")])
    goal_width = max([len(r.target) for r in records] + [len("goal")])
    lines = [
        f"{'target':{name_width}s}  {'measured':{measured_width}s}  {'goal':{goal_width}s}  result",
    ]
    for r in records:
        verdict = "ok" if r.met else "MISSED"
        lines.append(
            f"{r.name:{name_width}s}  {r.measured:{measured_width}s}  {r.target:{goal_width}s}  "
            f"{verdict}"
        )
    missed = sum(1 for r in records if not r.met)
    lines.append(
        f"{len(records)} targets: {len(records) - missed} ok, {missed} MISSED"
        if records
        else "no targets were recorded"
    )
    return "\n".join(lines)

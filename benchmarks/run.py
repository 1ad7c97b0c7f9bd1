"""Run every Yak benchmark in one go and print their tables.

Each ``bench_*.py`` beside this file measures against its own baseline in the same run (ratios
and medians, never absolute timings asserted anywhere) and prints a table; this runner runs them
one after another, each in its own process, so the machine's load is as alike as it can be for
all of them. Each benchmark also records every figure that has a target (``targets.py``); at the
end the runner prints them all in one table, each ``ok`` or ``MISSED``, and exits with status 1
when one was missed or a benchmark failed, so a missed target cannot hide in a long log.

The benchmarks get their core from ``yak.bootstrap.open_core`` and their fakes
(the scripted Messages API, the clock) from ``tests.support``, so they are run as modules from
the repository root, where both ``yak`` and ``tests`` import.

Usage, from the repository root (with the development environment active)::

    python -m benchmarks.run            # every benchmark, full repeats
    python -m benchmarks.run --quick    # fewer repeats: a rough look
    python -m benchmarks.bench_refresh  # one benchmark (each takes --repeat)

The memory evaluation runs too, offline, for its target: a refresh adding one line to a long
document asks for a fraction of the whole document's output tokens.

The summary also gives the machine's load average at the start and the end: the figures are wall
times on a machine that may be shared.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import targets

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a rough look)")
    args = parser.parse_args()
    modules = sorted(f"{HERE.name}.{script.stem}" for script in HERE.glob("bench_*.py"))
    modules.append(f"{HERE.name}.memory_eval")  # its one-line cost target, offline
    failed: list[str] = []
    load_before = _load()
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "targets.jsonl"
        env = dict(os.environ, **{targets.ENV: str(record)})
        for module in modules:
            extra = ["--repeat", "3"] if args.quick else []
            if module.endswith("memory_eval"):
                extra = ["--offline"]
            print(f"\n=== {module} ===", flush=True)
            started = time.monotonic()
            result = subprocess.run(
                [sys.executable, "-m", module, *extra], cwd=ROOT, env=env, check=False
            )
            print(f"({module} took {time.monotonic() - started:.0f} s)", flush=True)
            if result.returncode != 0:
                print(f"{module} failed with exit status {result.returncode}", file=sys.stderr)
                failed.append(module)
        records = targets.read(record)
    print(f"\n=== summary ({'quick' if args.quick else 'full'} run) ===")
    print(f"load average (1 min) at the start {load_before}, at the end {_load()}")
    print(targets.summary(records))
    for module in failed:
        print(f"{module} FAILED: its targets may be missing above")
    missed = any(not r.met for r in records)
    return 1 if missed or failed or not records else 0


def _load() -> str:
    """The 1-minute load average and the processor count, e.g. ``"3.52 on 2 CPUs"``."""
    try:
        return f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    except OSError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())

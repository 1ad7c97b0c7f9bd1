"""Run every Yak benchmark in one go and print their tables.

Each ``bench_*.py`` beside this file measures against its own baseline in the same run (ratios
and medians, never absolute timings asserted anywhere) and prints a table; this runner runs them
one after another, each in its own process, so the machine's load is as alike as it can be for
all of them. The benchmarks get their core from ``yak.bootstrap.open_core`` and their fakes
(the scripted Messages API, the clock) from ``tests.support``, so they are run as modules from
the repository root, where both ``yak`` and ``tests`` import.

Usage, from the repository root (with the development environment active)::

    python -m benchmarks.run            # every benchmark, full repeats
    python -m benchmarks.run --quick    # fewer repeats: a rough look
    python -m benchmarks.bench_refresh  # one benchmark (each takes --repeat)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a rough look)")
    args = parser.parse_args()
    modules = sorted(f"{HERE.name}.{script.stem}" for script in HERE.glob("bench_*.py"))
    status = 0
    for module in modules:
        extra = ["--repeat", "3"] if args.quick else []
        print(f"\n=== {module} ===", flush=True)
        started = time.monotonic()
        result = subprocess.run([sys.executable, "-m", module, *extra], cwd=ROOT, check=False)
        print(f"({module} took {time.monotonic() - started:.0f} s)", flush=True)
        if result.returncode != 0:
            print(f"{module} failed with exit status {result.returncode}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())

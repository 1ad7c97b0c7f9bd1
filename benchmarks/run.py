"""Run every Yak benchmark in one go and print their tables (DESIGN.md section 8).

Each ``bench_*.py`` beside this file measures against its own baseline in the same run (ratios
and medians, never absolute timings asserted anywhere) and prints a table; this runner runs them
one after another, so the machine's load is as alike as it can be for all of them.

Usage: ``python benchmarks/run.py [--quick]`` (``--quick``: fewer repeats).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a rough look)")
    args = parser.parse_args()
    scripts = sorted(HERE.glob("bench_*.py"))
    status = 0
    for script in scripts:
        extra = ["--repeat", "3"] if args.quick else []
        print(f"\n=== {script.stem} ===", flush=True)
        started = time.monotonic()
        result = subprocess.run([sys.executable, str(script), *extra], check=False)
        print(f"({script.stem} took {time.monotonic() - started:.0f} s)", flush=True)
        if result.returncode != 0:
            print(f"{script.name} failed with exit status {result.returncode}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())

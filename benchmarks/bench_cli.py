"""Command-line start-up: how long ``yak`` takes to answer, against a bare interpreter's start.

Each command runs as a subprocess, as a user runs it: the ``yak`` script installed beside this
interpreter (``python -m yak`` when there is none). The runs go round-robin (one of each command,
then the next round), so the machine's load falls alike on all of them; the table shows the
median wall time of each, its ratio to ``python -c pass`` in the same run, and the target:

- ``yak --version`` and ``yak --help``: at most 2x a bare interpreter (they need no core, no
  database and no event loop);
- ``yak memory show -w DIR``: at most 5x, on a data directory prepared here (a workspace with a
  150-line document, its schema current) so nothing is migrated while timing.

Below it, for reference, the start of an interpreter that only imports ``asyncio`` or
SQLAlchemy's ORM: what any command that opens the core pays at least. The interpreter writes its
bytecode caches to a temporary folder (``PYTHONPYCACHEPREFIX``), warmed by one untimed run of
each command, so the timings are those of an installed Yak and nothing is written into the
source tree. Asserts nothing about time (the machine is shared and noisy). In an editable
install (``pip install -e``) every interpreter, the bare one too, loads the install's import
finder first; the table then says so, since the ratios are lower than a regular install's.

Usage, from the repository root: ``python -m benchmarks.bench_cli [--repeat 15]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import targets
from tests.support.builders import project_folder, workspace_with_document
from yak.bootstrap import open_core

DOCUMENT = "".join(f"- fact {i:03d}: the project keeps this convention\n" for i in range(150))


def yak_command() -> list[str]:
    """The installed ``yak`` script beside this interpreter, else ``python -m yak``."""
    script = shutil.which("yak", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "yak"]


async def prepare(data_dir: Path, parent: Path) -> Path:
    """A data directory whose database is migrated and holds one workspace with
    :data:`DOCUMENT`; returns the workspace's folder."""
    folder = project_folder(parent, "project")
    core = open_core(data_dir)
    try:
        await workspace_with_document(core, folder, DOCUMENT)
    finally:
        await core.aclose()
    return folder


def run_once(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from starting ``argv`` to its exit; a failed run stops the benchmark."""
    started = time.perf_counter()
    result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(
            f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.decode()[-500:]}"
        )
    return elapsed


def measure(commands: dict[str, list[str]], env: dict[str, str], repeat: int) -> dict[str, float]:
    """The median seconds of each command over ``repeat`` round-robin rounds, after one
    untimed warm-up round (it fills the bytecode caches)."""
    for argv in commands.values():
        run_once(argv, env)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, argv in commands.items():
            samples[name].append(run_once(argv, env))
    return {name: statistics.median(times) for name, times in samples.items()}


def main(repeat: int) -> None:
    yak = yak_command()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data_dir = root / "data"
        data_dir.mkdir()
        folder = asyncio.run(prepare(data_dir, root))
        env = {
            **os.environ,
            "YAK_DATA_DIR": str(data_dir),
            "PYTHONPYCACHEPREFIX": str(root / "pycache"),
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        bare = [sys.executable, "-c", "pass"]
        goals = {"yak --version": 2.0, "yak --help": 2.0, "yak memory show -w DIR": 5.0}
        commands = {
            "python -c pass": bare,
            "yak --version": [*yak, "--version"],
            "yak --help": [*yak, "--help"],
            "yak memory show -w DIR": [*yak, "memory", "show", "-w", str(folder)],
            "python -c 'import asyncio'": [sys.executable, "-c", "import asyncio"],
            "python -c 'import sqlalchemy.orm'": [sys.executable, "-c", "import sqlalchemy.orm"],
        }
        medians = measure(commands, env, repeat)

    base = medians["python -c pass"]
    print(f"Command-line start-up: median of {repeat} runs each, '{' '.join(yak)}'")
    print(f"{'command':<34}  {'median ms':>9}  {'x bare':>6}  {'target':>6}  verdict")
    for name, median in medians.items():
        ratio = median / base
        target = goals.get(name)
        if target is None:
            goal, verdict = "-", "(reference)" if name != "python -c pass" else ""
        else:
            goal, verdict = f"{target:g}x", "ok" if ratio <= target else "MISSED"
            targets.target(
                f"CLI start-up, {name}",
                f"{median * 1000:.0f} ms = {ratio:.2f}x python -c pass",
                f"<= {target:g}x",
                ratio <= target,
            )
        print(f"{name:<34}  {median * 1000:>9.1f}  {ratio:>6.2f}  {goal:>6}  {verdict}".rstrip())
    if editable_install():
        print(
            "Note: Yak is installed in editable mode (pip install -e): every interpreter of this "
            "environment, the bare one included, first loads the install's import finder "
            "(pathlib, re and more), which a regular install does not, so the ratios here are "
            "lower than a regular install's."
        )


def editable_install() -> bool:
    """Whether this environment's interpreters load an editable install's import finder at
    start (``pip install -e`` adds a ``.pth`` file that imports it)."""
    return any(name.startswith("__editable__") for name in sys.modules)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    main(parser.parse_args().repeat)

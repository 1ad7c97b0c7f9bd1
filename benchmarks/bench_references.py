"""Checking a memory document's references against its workspace ("Checked at use" in
docs/memory.md), and gathering the workspace's facts for grounding.

A workspace of ``--files`` files (default 50,000: 500 folders of 100) with a Makefile and a
package.json, and a 200-line document: 120 lines naming a path, 20 a file at the root, 20 a
runner target (half gone), 20 a path that is gone, 20 prose. Timed, median of ``--repeat`` runs:

- the document as written (every name at its path: no walk of the tree);
- the same with 10 lines naming a file by its bare name deep in the tree (the walk stops once
  it has found them);
- the same with one bare file name that exists nowhere (the whole tree is walked);
- ``gather_facts``, what a refresh reads for grounding (bounded by its own entry count).

Target: the document as written checked in under 50 ms. Asserts nothing about time (the machine
is shared and noisy).

Usage, from the repository root: ``python -m benchmarks.bench_references [--files 50000]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

from benchmarks import targets
from yak.memory.freshness.references import check_references
from yak.memory.freshness.workspace import gather_facts

TARGET_MS = 50.0
PER_FOLDER = 100
DEADLINE_S = 5.0  # generous: the benchmark measures the work, not the bound


def build_workspace(root: Path, files: int) -> None:
    """``files`` files in folders of ``PER_FOLDER`` under ``root/src``, a Makefile with targets
    ``t0``…``t9`` and a package.json with scripts ``s0``…``s9``."""
    for n in range(files):
        folder = root / "src" / f"pkg{n // PER_FOLDER}"
        if n % PER_FOLDER == 0:
            folder.mkdir(parents=True)
        (folder / f"mod{n % PER_FOLDER}.py").write_bytes(b"")
    (root / "Makefile").write_text("".join(f"t{i}:\n\techo {i}\n" for i in range(10)))
    scripts = ", ".join(f'"s{i}": "echo {i}"' for i in range(10))
    (root / "package.json").write_text(f'{{"name": "bench", "scripts": {{{scripts}}}}}')
    for i in range(20):
        (root / f"NOTES{i}.md").write_text("notes")


def document(files: int, *, deep: bool = False, missing_name: bool = False) -> str:
    """The 200-line document (see the module doc); ``deep``: 10 of its path lines name their
    file by its bare name instead (the last folders' files, renamed uniquely beforehand);
    ``missing_name``: one prose line names ``nowhere.cfg``."""
    folders = max(1, files // PER_FOLDER)
    lines = [
        f"- Module {i} lives in src/pkg{i % folders}/mod{i % PER_FOLDER}.py." for i in range(120)
    ]
    if deep:
        lines[:10] = [f"- See deep{i}.py for the details." for i in range(10)]
    lines += [f"- Notes in NOTES{i}.md." for i in range(20)]
    lines += [f"- Build with make t{i}." for i in range(5)] + [
        f"- Run make gone{i}." for i in range(5)
    ]
    lines += [f"- Start with npm run s{i}." for i in range(5)]
    lines += [f"- Lint with npm run gone{i}." for i in range(5)]
    lines += [f"- Deploy with scripts/deploy{i}.sh." for i in range(20)]
    lines += [f"- The team prefers small pull requests, reviewed by {i} people." for i in range(20)]
    if missing_name:
        lines[-1] = "- Settings once lived in nowhere.cfg."
    return "\n".join(lines) + "\n"


def timed(run: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Median milliseconds of ``repeat`` runs, and the last run's result."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), result


def measure(root: Path, files: int, repeat: int) -> list[tuple[str, int, int, float, str]]:
    """The table's rows: (case, lines, files, median ms, what it found)."""
    last = root / "src" / f"pkg{max(0, files // PER_FOLDER - 1)}"
    for i in range(10):  # the deep names: in the last folders the walk reaches
        (last / f"deep{i}.py").write_bytes(b"")
    rows = []
    cases = (
        ("as written (no walk)", document(files)),
        ("10 bare names deep in the tree", document(files, deep=True)),
        ("1 bare name gone (whole walk)", document(files, missing_name=True)),
    )
    for case, text in cases:
        ms, found = timed(
            lambda text=text: check_references(
                text, root, today=date.today(), deadline_seconds=DEADLINE_S
            ),
            repeat,
        )
        gone = len(found.gone)  # type: ignore[attr-defined]
        gave_up = " (gave up)" if found.gave_up else ""  # type: ignore[attr-defined]
        rows.append((case, len(text.splitlines()), files, ms, f"{gone} lines gone{gave_up}"))
    ms, facts = timed(lambda: gather_facts(root), repeat)
    seen = "all" if facts.complete else f"first {len(facts.paths):,} entries"  # type: ignore[attr-defined]
    rows.append(("gather_facts (refresh grounding)", 0, files, ms, f"read {seen}"))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=50_000, help="files in the workspace")
    parser.add_argument("--repeat", type=int, default=7, help="runs per case (median)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "workspace"
        root.mkdir()
        build_workspace(root, args.files)
        rows = measure(root, args.files, args.repeat)
    print(f"{'case':<34} {'lines':>5} {'files':>7} {'ms':>8}  found")
    for case, lines, files, ms, found in rows:
        print(f"{case:<34} {lines:>5} {files:>7,} {ms:>8.1f}  {found}")
    written = rows[0][3]
    targets.target(
        f"References: {rows[0][1]}-line document, {args.files:,} files",
        f"{written:.1f} ms",
        f"< {TARGET_MS:.0f} ms",
        written < TARGET_MS,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

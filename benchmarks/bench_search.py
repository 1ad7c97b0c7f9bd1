"""Memory search: the full-text index against a plain scan, and what the index costs a write.

A data directory is filled with ``--workspaces`` workspaces (default 2,000), each with a
100-line document; one in a hundred mentions a rare word. Then, on the same database:

- ``yak memory search``'s core (``yak.memory.search.search_documents``) for the rare word and for
  a common one, through the FTS5 index and, after the index is dropped as on a SQLite without
  FTS5, by plain scan: median seconds of ``--repeat`` runs each;
- a hand save (``MemoryService.save``), and a search right after one (the index catches up
  with the saved document first): median seconds, with the index and without;
- the first search on the filled database, which indexes every document written since the
  last search (here all of them, written straight into the database): one run.

Target: a search for a rare word through the index at most a fifth of the plain scan's time.
Asserts nothing about time (the machine is shared and noisy).

Usage, from the repository root: ``python -m benchmarks.bench_search [--repeat 7]``
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks import targets
from yak.bootstrap import open_core
from yak.memory.search import search_documents

RARE = "zanzibar"


def document(n: int) -> str:
    """A 100-line document; every hundredth mentions :data:`RARE`."""
    lines = [
        f"- convention {i}: the service {n} keeps its config in settings {i}" for i in range(99)
    ]
    lines.append(f"- deploys go through {RARE}" if n % 100 == 0 else "- deploys go through CI")
    return "\n".join(lines) + "\n"


def fill(data_dir: Path, root: Path, count: int) -> None:
    """``count`` workspaces with their documents, written straight into the database after one
    real save (none is indexed until a search catches the index up)."""

    async def first() -> str:
        core = open_core(data_dir)
        try:
            folder = root / "w0"
            folder.mkdir()
            workspace = await core.workspaces.open(str(folder))
            await core.memory.save(workspace.id, document(0), expected_version=0)
            return workspace.id
        finally:
            await core.aclose()

    asyncio.run(first())
    with sqlite3.connect(data_dir / "yak.db") as conn:
        for n in range(1, count):
            folder = root / f"w{n}"
            folder.mkdir()
            wid = f"ws_bench{n:027d}"
            conn.execute(
                "INSERT INTO workspaces (id, path, memory_enabled, review_mode, created_at) "
                "VALUES (?, ?, 1, 'auto', '2026-12-01 00:00:00')",
                (wid, str(folder)),
            )
            conn.execute(
                "INSERT INTO memory_documents (workspace_id, content, version, flags, updated_at)"
                " VALUES (?, ?, 1, '[]', '2026-12-01 00:00:00')",
                (wid, document(n)),
            )


def median_s(run, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def measure(data_dir: Path, repeat: int) -> dict[str, float]:
    """Median seconds of the searches and of a hand save on the database as it is."""

    async def work() -> dict[str, float]:
        core = open_core(data_dir)
        try:
            figures: dict[str, float] = {}
            started = time.perf_counter()
            found = await search_documents(core.memory, RARE)
            caught_up = ", indexing what was written since" if found.method == "fts5" else ""
            figures[f"first search ({found.method}{caught_up})"] = time.perf_counter() - started
            for name, query in (("rare word", RARE), ("common word", "config")):
                samples = []
                for _ in range(repeat):
                    started = time.perf_counter()
                    found = await search_documents(core.memory, query)
                    samples.append(time.perf_counter() - started)
                figures[f"search, {name} ({found.method}, {len(found.hits)} lines)"] = (
                    statistics.median(samples)
                )
            summaries = await core.memory.list_documents()
            target = summaries[-1].workspace.id
            saves, after = [], []
            for i in range(repeat):
                current = await core.memory.current_version(target)
                started = time.perf_counter()
                await core.memory.save(target, document(i + 1), expected_version=current)
                saves.append(time.perf_counter() - started)
                started = time.perf_counter()
                await search_documents(core.memory, RARE)
                after.append(time.perf_counter() - started)
            figures["hand save"] = statistics.median(saves)
            figures["search, rare word, right after a hand save"] = statistics.median(after)
            return figures
        finally:
            await core.aclose()

    return asyncio.run(work())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--workspaces", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data_dir, root = Path(tmp) / "data", Path(tmp) / "folders"
        data_dir.mkdir()
        root.mkdir()
        fill(data_dir, root, args.workspaces)
        indexed = measure(data_dir, args.repeat)
        with sqlite3.connect(data_dir / "yak.db") as conn:
            conn.execute("DROP TABLE memory_search")
            conn.execute("DROP TABLE memory_search_indexed")
        scanned = measure(data_dir, args.repeat)
    print(f"{args.workspaces:,} workspaces of 100 lines, median of {args.repeat} runs")
    print(f"{'with the FTS5 index':<58}{'seconds':>10}")
    for name, seconds in indexed.items():
        print(f"  {name:<56}{seconds * 1000:>8.1f} ms")
    print(f"{'without it (plain scan)':<58}")
    for name, seconds in scanned.items():
        print(f"  {name:<56}{seconds * 1000:>8.1f} ms")
    rare_index = next(v for k, v in indexed.items() if k.startswith("search, rare"))
    rare_scan = next(v for k, v in scanned.items() if k.startswith("search, rare"))
    ratio = rare_index / rare_scan
    targets.target(
        f"Search, rare word, {args.workspaces:,} documents: index / plain scan",
        f"{ratio:.2f} ({rare_index * 1000:.1f} ms vs {rare_scan * 1000:.1f} ms)",
        "<= 0.20",
        ratio <= 0.2,
    )


if __name__ == "__main__":
    main()

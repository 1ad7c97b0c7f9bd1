"""The refresh benchmark (``benchmarks/bench_refresh.py``) times the refresher's steps by
wrapping them by name; a step moved or renamed would stop the benchmark at its start, so the
wrapping is checked here against the real core."""

from __future__ import annotations

import asyncio

from benchmarks.bench_refresh import instrument
from yak.bootstrap import open_core
from yak.memory.judging import per_line
from yak.refresh import asking


def test_every_step_the_breakdown_times_is_a_step_of_the_refresher(tmp_path):
    core = open_core(tmp_path)
    breakdown = instrument(core)  # AttributeError when a wrapped step is gone
    try:
        assert asking.decide_lines is not per_line.decide_lines  # wrapped where it is called
        asking.decide_lines("", "- a line\n", origins=(), tombstones=(), passages=(), known="")
        assert set(breakdown.take()) == {"decide"}
    finally:
        breakdown.restore()
        asyncio.run(core.aclose())
    assert asking.decide_lines is per_line.decide_lines

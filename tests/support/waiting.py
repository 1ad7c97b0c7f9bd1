"""The one way a test waits for something another task or thread does: poll a condition on the
event loop, with a hang guard (a failure after ``limit_s``, never a timing assertion)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

POLL_S = 0.005


async def until(
    condition: Callable[[], object], *, what: str = "the condition", limit_s: float = 20.0
) -> None:
    """Return as soon as ``condition()`` is true, yielding to the loop (a Qt window's too, on
    the qasync loop) in between.

    Raises:
        AssertionError: ``limit_s`` seconds passed first (the test would otherwise hang).
    """
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {limit_s:g} s waiting for {what}")
        await asyncio.sleep(POLL_S)

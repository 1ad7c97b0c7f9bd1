"""The one way a test waits for something another task or thread does: poll a condition on the
event loop, with a hang guard (a failure after ``timeout_s``, never a timing assertion)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

POLL_S = 0.005


async def until(
    condition: Callable[[], object], *, timeout_s: float = 10.0, what: str = "the condition"
) -> None:
    """Return as soon as ``condition()`` is true, yielding to the loop in between.

    Raises:
        AssertionError: ``timeout_s`` passed first (the test would otherwise hang).
    """
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout_s:g} s waiting for {what}")
        await asyncio.sleep(POLL_S)

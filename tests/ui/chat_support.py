"""Helpers for the chat UI tests: run a test body on the qasync loop (the ``qloop`` fixture of
``tests/ui/conftest.py``) and wait for what the user would see, without sleeping for timing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T], *,
        limit_s: float = 60.0) -> T:
    """Run a test body on ``loop``; ``limit_s`` only stops a hung test, it asserts no timing."""
    return loop.run_until_complete(asyncio.wait_for(coro, limit_s))


async def until(predicate: Callable[[], object], *, what: str = "the condition",
                limit_s: float = 20.0) -> None:
    """Let the loop run until ``predicate()`` is true (a hang guard, not a timing assertion)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.005)

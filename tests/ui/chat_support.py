"""Helpers for the chat UI tests: a qasync loop per test and polling without sleeps for timing.

Tests run their body as a coroutine on a Qt-pumping qasync loop (QT_TESTING.md): an
``@asyncSlot``-free design, but the controller spawns tasks that need a running loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

# Closed loops are kept, never freed. A qasync loop owns a QObject with live Qt timers; if
# Python's cyclic garbage collector freed it on another thread (the fake server's handler
# threads, ``to_thread`` workers), Qt could not unregister those timers there and one would
# later fire on freed memory (a segmentation fault in QTimerInfoList::activateTimers).
_closed_loops: list[asyncio.AbstractEventLoop] = []


@pytest.fixture
def qloop(qapp):
    """A qasync event loop on the test's QApplication; leftover tasks are cancelled after."""
    import qasync

    # A dialog closing as the last window would otherwise quit the app and stop the loop.
    qapp.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()
        asyncio.set_event_loop(None)
        _closed_loops.append(loop)


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

"""Fire-and-forget tasks that keep a reference and report their exceptions.

``asyncio.create_task`` keeps only a weak reference to its task, so an unreferenced task can be
garbage-collected mid-flight, and an exception in it is only reported when it is collected.
Every fire-and-forget coroutine in Yak goes through :func:`spawn`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)

_tasks: set[asyncio.Task[Any]] = set()


def spawn(coro: Coroutine[Any, Any, Any], *, name: str | None = None) -> asyncio.Task[Any]:
    """Schedule ``coro`` on the running loop; its exception (not cancellation) is logged."""
    task = asyncio.get_running_loop().create_task(coro, name=name)
    _tasks.add(task)
    task.add_done_callback(_done)
    return task


def _done(task: asyncio.Task[Any]) -> None:
    _tasks.discard(task)
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        log.error("background task %s failed", task.get_name(), exc_info=exc)


def pending_tasks() -> set[asyncio.Task[Any]]:
    """The spawned tasks still running (for shutdown and tests)."""
    return set(_tasks)

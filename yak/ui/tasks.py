"""TaskGroup: the coroutines one UI controller has spawned, so it can wait for or cancel them.

Every coroutine goes through :func:`yak.aio.spawn` (a reference is kept and a failure is
logged); the group also remembers its own, so ``await group.drain()`` waits until the
controller is idle (tests use it instead of sleeping) and ``cancel_all()`` stops them on quit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from yak.aio import spawn


class TaskGroup:
    """A set of fire-and-forget tasks with a way to wait for all of them."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """Run ``coro`` in the background (through :func:`yak.aio.spawn`)."""
        task = spawn(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def drain(self) -> None:
        """Wait until no task of the group is running (including ones spawned meanwhile)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def cancel_all(self) -> None:
        """Cancel every running task of the group (no waiting)."""
        for task in list(self._tasks):
            task.cancel()

    def __len__(self) -> int:
        return len(self._tasks)

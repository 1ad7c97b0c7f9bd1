"""TaskGroup: the coroutines one UI controller has spawned, so it can wait for or cancel them.

Every coroutine goes through :func:`yak.aio.spawn` (a reference is kept and a failure is
logged); the group also remembers its own, so ``await group.drain()`` waits until the
controller is idle (tests use it instead of sleeping) and ``cancel_all()`` stops them on quit.

Work whose result only matters while it is the newest of its kind (load the selected
workspace, re-read the session list) goes through :meth:`TaskGroup.replace`: starting it
cancels the one still running under the same name, so a stale result never reaches the
widgets (the idea of FeelUOwn's ``TaskManager.get_or_create(name).bind_coro(coro)``).
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
        self._latest: dict[str, asyncio.Task[Any]] = {}  # name -> the task replace() started
        self._closed = False

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """Run ``coro`` in the background (through :func:`yak.aio.spawn`); once the group is
        :meth:`closed <close>`, the task is cancelled before its first step."""
        task = spawn(coro, name=name)
        if self._closed:
            task.cancel()
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def replace(self, name: str, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``coro`` as the group's task ``name``, cancelling the one :meth:`replace` started
        under that name if it is still running: the latest wins.

        Like :meth:`spawn`, a failure is logged; a cancelled task is not.

        Returns:
            The new task.
        """
        previous = self._latest.get(name)
        if previous is not None:
            previous.cancel()
        task = self.spawn(coro, name=name)
        self._latest[name] = task
        task.add_done_callback(self._forget_latest)
        return task

    def latest(self, name: str) -> asyncio.Task[Any] | None:
        """The task :meth:`replace` started under ``name``, while it runs; else ``None``."""
        return self._latest.get(name)

    async def drain(self) -> None:
        """Wait until no task of the group is running (including ones spawned meanwhile)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def cancel_all(self) -> None:
        """Cancel every running task of the group (no waiting)."""
        for task in list(self._tasks):
            task.cancel()

    def close(self) -> None:
        """Cancel every running task and every one spawned from now on (quitting: an event
        that arrives while the core closes must not start work that outlives the loop)."""
        self._closed = True
        self.cancel_all()

    def __len__(self) -> int:
        return len(self._tasks)

    def _forget_latest(self, task: asyncio.Task[Any]) -> None:
        name = task.get_name()
        if self._latest.get(name) is task:
            del self._latest[name]


async def settled(task: asyncio.Task[Any]) -> bool:
    """Wait for ``task`` to end without being cancelled along with it (when a newer task
    :meth:`replaced <TaskGroup.replace>` it, the waiter goes on).

    Returns:
        ``True`` when the task ran to its end, ``False`` when it was cancelled.

    Raises:
        Exception: whatever the task raised (it is logged as well).
    """
    await asyncio.wait([task])
    if task.cancelled():
        return False
    task.result()
    return True

"""Fire-and-forget tasks that keep a reference and report their exceptions, and the way the
services run a blocking call (a repository's, a file's) without blocking the event loop.

``asyncio.create_task`` keeps only a weak reference to its task, so an unreferenced task can be
garbage-collected mid-flight, and an exception in it is only reported when it is collected.
Every fire-and-forget coroutine in Yak goes through :func:`spawn`.

A service runs each blocking call through its ``offload``: :func:`to_thread` (the default, on a
worker thread, so the window never waits on the disk), or :func:`in_place` for a command that
only reads and has nothing else to do meanwhile (``yak memory show``): that core then runs
without an event loop (:func:`run_in_place`), and a read needs neither ``asyncio`` nor a thread.
``asyncio`` is imported when first used, not here, for that reason.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

_tasks: set[asyncio.Task[Any]] = set()


class Offload(Protocol):
    """How a service runs a blocking call: ``await offload(func, *args, **kwargs)`` returns
    ``func(*args, **kwargs)`` (or raises what it raises)."""

    def __call__(
        self, func: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs
    ) -> Awaitable[R]: ...


async def to_thread(func: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """Run ``func`` on a worker thread (``asyncio.to_thread``): the loop goes on meanwhile."""
    import asyncio

    return await asyncio.to_thread(func, *args, **kwargs)


async def in_daemon_thread(func: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """Run ``func`` on a daemon thread of its own and wait for it, for a long call that must
    not hold up quitting: the process ends without waiting for it, where a worker of the loop's
    executor is joined when the loop closes and again at exit. The warm-up's SDK import
    (seconds, not interruptible) runs here, so Ctrl+Q in the first seconds does not linger.

    If the loop closed meanwhile (the app quit), the result is dropped.
    """
    import asyncio
    import threading

    loop = asyncio.get_running_loop()
    future: asyncio.Future[R] = loop.create_future()

    def settle(result: R | None, error: Exception | None) -> None:
        if future.done():  # the waiter was cancelled
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        result: R | None = None
        error: Exception | None = None
        try:
            result = func(*args, **kwargs)
        except Exception as exc:  # handed to the waiter, which raises it
            error = exc
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:  # the loop is closed: nobody waits any more
            log.debug("%s ended after its event loop closed", getattr(func, "__name__", func))

    threading.Thread(
        target=work, name=f"yak-{getattr(func, '__name__', 'call')}", daemon=True
    ).start()
    return await future


async def in_place(func: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """Run ``func`` here and now, never suspending: for a core driven by :func:`run_in_place`."""
    return func(*args, **kwargs)


def run_in_place(coro: Coroutine[Any, Any, R]) -> R:
    """Run ``coro`` to its end without an event loop and return its result (or raise its
    exception). For a command whose core offloads :func:`in_place`: its coroutines never wait
    on anything, so each step runs straight through (a bare ``await asyncio.sleep(0)`` is
    allowed).

    Raises:
        RuntimeError: ``coro`` waited on a future, which only an event loop can complete (a
            programming error: something on that path needs ``asyncio.run``).
    """
    try:
        while True:
            waited_on = coro.send(None)
            if waited_on is not None:
                coro.close()
                raise RuntimeError(f"{coro!r} waited on {waited_on!r}, which needs an event loop")
    except StopIteration as done:
        result: R = done.value
        return result


def spawn(coro: Coroutine[Any, Any, Any], *, name: str | None = None) -> asyncio.Task[Any]:
    """Schedule ``coro`` on the running loop; its exception (not cancellation) is logged."""
    import asyncio

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

"""TaskGroup: the coroutines one UI controller has spawned, and the one way a window action runs
a core operation.

Every coroutine goes through :func:`yak.aio.spawn` (a reference is kept and a failure is
logged); the group also remembers its own, so ``await group.drain()`` waits until the
controller is idle (tests use it instead of sleeping) and ``cancel_all()`` stops them on quit.

Work whose result only matters while it is the newest of its kind (load the selected
workspace, re-read the session list) goes through :meth:`TaskGroup.replace`: starting it
cancels the one still running under the same name, so a stale result never reaches the
widgets (the idea of FeelUOwn's ``TaskManager.get_or_create(name).bind_coro(coro)``).

A core operation started from the window goes through :meth:`TaskGroup.run` (from a slot) or
:meth:`TaskGroup.attempt` (a step of a coroutine), the window's counterpart of the command
line's ``_run_handler`` and the MCP server's ``guarded()``, and of Anki's ``CollectionOp``: the
operation runs on the event loop (the core offloads its blocking calls to worker threads), a
:class:`~yak.errors.YakError` it raises is caught here and nowhere else and its sentence is
handed to the sink the action names (a message box, the status bar, a label under an editor,
the log), a progress line shows when it takes longer than ``PROGRESS_DELAY_S``, and the success
callback gets the value. Once the group's owner widget is destroyed (the window closed mid
operation), its tasks are cancelled and no sink or callback is called.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final, Literal, Protocol, TypeVar

import shiboken6
from PySide6.QtCore import QObject

from yak.aio import spawn
from yak.errors import YakError

log = logging.getLogger(__name__)

T = TypeVar("T")

PROGRESS_DELAY_S = 0.4  # an operation still running after this long shows its progress line

ErrorSink = Callable[[str], object]
"""Where an operation's error is shown: called with the ``YakError``'s sentence."""


class ProgressView(Protocol):
    """Where a long operation's progress line shows (the window's status bar)."""

    def show_progress(self, text: str) -> None:
        """Show ``text`` until :meth:`clear_progress` is called with it."""

    def clear_progress(self, text: str) -> None:
        """Stop showing ``text`` (nothing happens when something else is shown meanwhile)."""


class Failed(enum.Enum):
    """What :meth:`TaskGroup.attempt` returns when the operation raised a ``YakError``."""

    FAILED = "failed"


FAILED: Final = Failed.FAILED


def logged(what: str) -> ErrorSink:
    """The sink of a background read nobody asked for: a warning in the log, nothing on
    screen. ``what`` names the read: "reading recent workspaces"."""

    def sink(text: str) -> None:
        log.warning("%s failed: %s", what, text)

    return sink


class TaskGroup:
    """A set of fire-and-forget tasks with a way to wait for all of them.

    Args:
        owner: the widget the tasks update; when it is destroyed they are cancelled.
        progress: where :meth:`run` and :meth:`attempt` show a long operation's progress.
    """

    def __init__(
        self, owner: QObject | None = None, *, progress: ProgressView | None = None
    ) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._latest: dict[str, asyncio.Task[Any]] = {}  # name -> the task replace() started
        self._closed = False
        self._owner = owner
        self._progress = progress
        if owner is not None:
            owner.destroyed.connect(self._on_owner_destroyed)

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

    def run(
        self,
        work: Coroutine[Any, Any, T],
        *,
        name: str,
        on_error: ErrorSink,
        on_success: Callable[[T], object] | None = None,
        progress: str | None = None,
        latest: bool = False,
    ) -> asyncio.Task[Any]:
        """Start a core operation from a slot: :meth:`attempt` as a task of the group.

        Args:
            work: the operation (a coroutine of the core, or of the controller calling it).
            name: the task's name; with ``latest``, a task still running under that name is
                cancelled (:meth:`replace`).
            on_error, on_success, progress: as for :meth:`attempt`.

        Returns:
            The task.
        """
        operation = self.attempt(work, on_error=on_error, on_success=on_success, progress=progress)
        task = self.replace(name, operation) if latest else self.spawn(operation, name=name)
        # A task cancelled before its first step never awaited ``work``: closed, not warned of.
        task.add_done_callback(lambda _task: work.close())
        return task

    async def attempt(
        self,
        work: Awaitable[T],
        *,
        on_error: ErrorSink,
        on_success: Callable[[T], object] | None = None,
        progress: str | None = None,
    ) -> T | Literal[Failed.FAILED]:
        """Await a core operation; a ``YakError`` it raises is shown, not raised.

        Args:
            work: the operation.
            on_error: called with the error's sentence (see :data:`ErrorSink`).
            on_success: called with the operation's value; awaited when it returns an
                awaitable (a next step).
            progress: a line the group's progress view shows while the operation runs, once
                it has run ``PROGRESS_DELAY_S`` seconds (``"Refreshing the memory…"``).

        Returns:
            The operation's value, or :data:`FAILED` after ``on_error`` was called.

        Raises:
            Exception: anything but a ``YakError`` (a programming error; the task logs it).
        """
        shown = self._show_progress_later(progress)
        error: YakError | None = None
        try:
            value = await work
        except YakError as exc:  # the window's one place that catches it
            error = exc
        finally:
            if shown is not None:
                self._clear_progress(shown, progress)
        if error is not None:
            if self._owner_alive():
                on_error(str(error))
            return FAILED
        if on_success is not None and self._owner_alive():
            done = on_success(value)
            if inspect.isawaitable(done):
                await done
        return value

    def _show_progress_later(self, text: str | None) -> asyncio.TimerHandle | None:
        view = self._progress
        if text is None or view is None:
            return None
        return asyncio.get_running_loop().call_later(
            PROGRESS_DELAY_S, self._show_progress, view, text
        )

    def _show_progress(self, view: ProgressView, text: str) -> None:
        if self._owner_alive():
            view.show_progress(text)

    def _clear_progress(self, shown: asyncio.TimerHandle, text: str | None) -> None:
        shown.cancel()
        if text is not None and self._progress is not None and self._owner_alive():
            self._progress.clear_progress(text)

    def _owner_alive(self) -> bool:
        return self._owner is None or shiboken6.isValid(self._owner)

    def _on_owner_destroyed(self, *_args: object) -> None:
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

"""The desktop app's lifetime, once its window is painted: the window on a qasync loop, driven
by the core.

The lifetime is one coroutine (:func:`_main`) on a qasync event loop. It gets the core from the
composition root (``yak.bootstrap.open_core``) on a worker thread (imports and migrations
included), puts the event bridge and the controllers around it, opens the folder, and starts the
background work: the watcher for writes by other processes, the refresh of every workspace with
conversations not yet folded into memory (so a quit or a crash loses nothing; while no API key
is available those automatic refreshes are paused, not attempted), and the model client's
warm-up (``ChatService.warm_up``: the SDK, which takes seconds to import, is loaded on a worker
thread then, so the first message does not wait for it). Once the workspace shows, and again
once the warm-up is done, the objects alive then are exempted from garbage collection
(``yak.ui.heap``), so a full collection never stalls a streaming reply.

Quitting (File › Quit, closing the window, the session ending, SIGINT, SIGTERM) sets an
``asyncio.Event``; the coroutine then drops pending refreshes (nothing waits on the model: the
watermarks did not move, so the work resumes on the next start), stops its tasks and closes the
core. The signals are also heard on a thread of their own (:class:`_SignalWatch`), and in the
``yak`` command's process a quit arms a deadline (:func:`arm_quit_deadline`): whatever still
runs, the process is gone ``QUIT_DEADLINE_S`` after the quit began.
"""

from __future__ import annotations

import asyncio
import faulthandler
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import qasync
import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from yak import paths
from yak.app import StartOptions
from yak.errors import YakError
from yak.ui import dialogs
from yak.ui.heap import collections_paused, freeze_long_lived
from yak.ui.main_window import MainWindow

if TYPE_CHECKING:
    from yak.core import Core

log = logging.getLogger(__name__)

QUIT_GRACE_S = 0.7  # at most this long for in-flight work to notice the cancellation
QUIT_DEADLINE_S = 1.8  # from a quit's start to the end of the process, whatever still runs


def run_event_loop(app: QApplication, window: MainWindow, options: StartOptions) -> int:
    """Run the app's lifetime on a qasync loop around the shown ``window`` until it quits, then
    delete the window and the loop; returns the exit status (as ``yak.app.run``)."""
    app.setWindowIcon(app_icon())
    window.setWindowIcon(app.windowIcon())
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(_main(app, window, options))
    except RuntimeError as exc:  # the Qt loop was ended under the coroutine (session end)
        log.info("the event loop ended before the app's coroutine: %s", exc)
        return 0
    finally:
        if options.ends_process:  # closing the loop joins its worker threads
            arm_quit_deadline()
        window.close_guard = None
        window.hide()
        window.deleteLater()
        # Delete the window and its controllers now, while their loop still exists.
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        try:
            loop.close()
        except RuntimeError as exc:
            log.info("closing the event loop: %s", exc)
        dispose_loop_timers(loop)
        asyncio.set_event_loop(None)


def arm_quit_deadline() -> None:
    """End the process ``QUIT_DEADLINE_S`` seconds from now unless it has ended by then;
    called when a quit starts, in the process of the ``yak`` command only.

    The shutdown itself is bounded (``QUIT_GRACE_S`` per step), but a worker thread inside one
    long call (a secret scan, a file read, the SDK's import) cannot be interrupted, and closing
    the loop or leaving the interpreter waits for it. ``faulthandler``'s watchdog runs in C,
    without the interpreter lock, so it fires even then: it writes every thread's stack to the
    log (what was still running) and exits with status 1. Arming it again changes nothing:
    the delay counts from the first quit request.
    """
    global _deadline_armed
    with _deadline_lock:
        if not _deadline_armed:
            faulthandler.dump_traceback_later(QUIT_DEADLINE_S, exit=True, file=_deadline_stream())
            _deadline_armed = True


def _no_deadline() -> None:
    """The quit deadline of an app whose process goes on after it (tests): none."""


_deadline_armed = False
_deadline_lock = threading.Lock()


def _deadline_stream() -> Any:
    """Where the watchdog writes the stacks: the log file, else stderr, else nowhere. The
    watchdog gets a descriptor of its own (the log's is closed before the process ends, and
    its number may be reused by then)."""
    target: int | None = None
    for handler in logging.getLogger().handlers:
        stream = getattr(handler, "stream", None)
        if isinstance(handler, logging.FileHandler) and stream is not None and not stream.closed:
            target = stream.fileno()
            break
    else:
        try:
            target = sys.stderr.fileno() if sys.stderr is not None else None
        except (OSError, ValueError):  # stderr closed or not a file
            target = None
    global _DEADLINE_STREAM
    # Kept open (and referenced) until the process ends: the watchdog writes to it then.
    _DEADLINE_STREAM = (
        open(os.devnull, "w")  # noqa: SIM115
        if target is None
        else os.fdopen(os.dup(target), "w")
    )
    return _DEADLINE_STREAM


_DEADLINE_STREAM: Any = None


def dispose_loop_timers(loop: Any) -> None:
    """Delete a closed qasync loop's timer object now, on this (its own) thread.

    ``QEventLoop.close()`` only flags its timer object as stopped; the Qt timers of pending
    ``call_later`` handles stay registered until they fire. If the loop is later garbage-collected
    on a worker thread, the object is destroyed off its thread, its timers cannot be unregistered,
    and the next one to fire crashes the process. Deleting it here unregisters them; the calls
    that worker threads posted before the loop closed are delivered first.
    """
    QCoreApplication.sendPostedEvents()
    timer = getattr(loop, "_timer", None)
    if timer is not None and shiboken6.isValid(timer):
        shiboken6.delete(timer)


def app_icon() -> QIcon:
    """The app icon from the ``yak.resources`` package (SVG, with the PNG as a fallback)."""
    icon = QIcon()
    folder = resources.files("yak.resources")
    for name in ("yak.svg", "yak.png"):
        entry = folder / name
        if entry.is_file():
            with resources.as_file(entry) as path:
                icon.addFile(str(path))
    return icon


async def _main(app: Any, window: Any, options: StartOptions) -> int:
    """The app's lifetime, once ``window`` is shown. Returns the exit status."""
    quit_requested = asyncio.Event()
    app.aboutToQuit.connect(quit_requested.set)
    window.closed.connect(quit_requested.set)
    if not window.isVisible():  # closed before the loop started
        quit_requested.set()
    previous_handlers = _install_quit_signals(quit_requested)
    # The deadline only where the process ends with the app (the ``yak`` command), never in a
    # process that runs the app and goes on.
    deadline = arm_quit_deadline if options.ends_process else _no_deadline
    watch = _SignalWatch(quit_requested, deadline) if previous_handlers else None
    try:
        try:
            folder = paths.data_dir(options.data_dir_override)
            window.set_support_paths(data_dir=str(folder))
            core = await asyncio.to_thread(_open_core, folder, options.database_url)
        except (YakError, OSError) as exc:
            message = (
                str(exc)
                if isinstance(exc, YakError)
                else (f"Yak cannot use its data directory: {exc.strerror or exc}.")
            )
            log.error("cannot start: %s", message)
            await _show_fatal(window, message, quit_requested)
            window.hide()
            return 1
        running = _RunningApp(window, core)
        # The SDK import takes seconds: start it before the workspace loads, on a worker
        # thread, so it overlaps the loading rather than following it.
        running.controller.tasks.spawn(_warm_up(core), name="warm-up-model-client")
        try:
            if not await running.controller.start(options.workspace):
                return 0  # the folder's own window came to the front: nothing to show here
            freeze_long_lived()  # what start-up built lives until quit (see yak.ui.heap)
            running.start_background(
                # Nothing can be folded into a read-only database; another window's app
                # already runs the start-up refreshes.
                refresh_unfolded=not (core.read_only or running.controller.other_window_open)
            )
            if options.choose_folder:
                window.choose_folder()
            await quit_requested.wait()
        finally:
            deadline()
            await running.shutdown()
            window.hide()
        return 0
    finally:
        if watch is not None:
            watch.close()
        for signum, handler in previous_handlers.items():
            signal.signal(signum, handler)
        app.aboutToQuit.disconnect(quit_requested.set)


async def _warm_up(core: Core) -> None:
    """The model client's warm-up, with the collector off while the SDK loads; what it loaded is
    then exempted from collections (see ``yak.ui.heap``)."""
    with collections_paused():
        await core.chat.warm_up()
    freeze_long_lived()


def _open_core(folder: Path, database_url: str | None = None) -> Core:
    """Import the core and open it on the migrated database (on a worker thread: the imports
    and the migration take a while). A database that cannot be written (a read-only or
    immutable data folder) is opened read-only, as the command line reads it; the window then
    says that changes cannot be saved (``Core.read_only``).

    Raises:
        SchemaTooNew: a newer Yak wrote the database.
        StoreError: it cannot be opened, or it is read-only and holds no Yak data yet.
    """
    from yak.bootstrap import open_core

    return open_core(folder, database_url=database_url, read_only_fallback=True, fast_reads=False)


class _RunningApp:
    """The window's controllers around the core, started and stopped together."""

    def __init__(self, window: MainWindow, core: Core) -> None:
        # The controllers import the core's services: loaded once the core is open.
        from yak.ui.bridge import EventBridge
        from yak.ui.controller import AppController

        self.core = core
        self.bridge = EventBridge(core.bus, window)
        self.controller = AppController(window=window, core=core, bridge=self.bridge, parent=window)

    def start_background(self, *, refresh_unfolded: bool = True) -> None:
        """Watch for writes by other processes, and (with ``refresh_unfolded``) enqueue
        conversations not yet folded into memory (paused until a key exists), so a quit or a
        crash loses nothing. Not when another Yak window was found at start: its app ran them.
        """
        self.core.watcher.start_watching()
        if refresh_unfolded:
            self.controller.tasks.spawn(
                self.core.refresh.enqueue_unfolded(), name="enqueue-unfolded"
            )

    async def shutdown(self) -> None:
        """Quit without waiting on the model: drop pending refreshes, store a stopped reply,
        cancel what runs, close the database."""
        self.core.refresh.queue.cancel()
        await self.controller.aclose(QUIT_GRACE_S)
        self.bridge.close()
        try:
            await asyncio.wait_for(self.core.aclose(), QUIT_GRACE_S)
        except (TimeoutError, YakError) as exc:
            log.info("quit while a refresh was still stopping: %r", exc)


async def _show_fatal(window: Any, message: str, quit_requested: asyncio.Event) -> None:
    """Show ``message`` in a critical box over the window and wait until it is dismissed."""
    closed = asyncio.Event()
    window.fatal_box = dialogs.inform(
        window,
        title="Yak cannot start",
        text=message,
        icon=QMessageBox.Icon.Critical,
        on_close=closed.set,
    )
    waiters = [asyncio.ensure_future(closed.wait()), asyncio.ensure_future(quit_requested.wait())]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


def _install_quit_signals(quit_requested: asyncio.Event) -> dict[int, Any]:
    """Make Ctrl+C in the terminal (SIGINT) and a polite kill or logout (SIGTERM) quit like
    File › Quit, so unsaved state is handled and the database closes cleanly (Qt would
    otherwise swallow SIGINT, and SIGTERM would end the process on the spot).

    Returns:
        The previous handlers by signal number, to restore (empty when none was installed).
    """
    if sys.platform == "win32":
        return {}
    loop = asyncio.get_running_loop()
    previous: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[signum] = signal.signal(
                signum, lambda *_: loop.call_soon_threadsafe(quit_requested.set)
            )
        except ValueError:  # not the main thread
            break
    return previous


class _SignalWatch:
    """Hears SIGINT and SIGTERM on a thread of its own, so a quit by signal starts (and its
    deadline is armed) even while the main thread is inside a long call.

    A Python signal handler runs only when the main thread next runs Python code; the signal
    module's wakeup file descriptor is written by the C handler at once. This thread reads it,
    arms the quit deadline (:func:`arm_quit_deadline`) and asks the loop to quit (the handlers of
    :func:`_install_quit_signals` ask too, once the main thread gets to them).
    """

    def __init__(self, quit_requested: asyncio.Event, deadline: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)
        self._previous_fd = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        quit_signals = {int(signal.SIGINT), int(signal.SIGTERM)}

        def watch() -> None:
            while data := os.read(self._read_fd, 64):
                if quit_signals.intersection(data):
                    deadline()
                    try:
                        loop.call_soon_threadsafe(quit_requested.set)
                    except RuntimeError:  # the loop closed meanwhile: quitting already
                        return

        self._thread = threading.Thread(target=watch, name="yak-quit-signals", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Give the wakeup descriptor back and end the thread."""
        signal.set_wakeup_fd(self._previous_fd)
        os.close(self._write_fd)  # the thread reads the end of the pipe and returns
        self._thread.join(timeout=1.0)
        if not self._thread.is_alive():
            os.close(self._read_fd)

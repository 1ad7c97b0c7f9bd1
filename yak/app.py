"""The desktop app's lifetime: the window on a qasync loop, driven by the core.

The app's lifetime is one coroutine (:func:`_main`) on a qasync event loop. It shows the window
first (a folder given on the command line already named in it, "loading…" for its chat and
memory), then gets the core from the composition root (``yak.bootstrap.open_core``) on a worker
thread (imports and migrations included), puts the event bridge and the controllers around it,
opens the folder, and starts the background work: the watcher for writes by other processes,
the refresh of every workspace with conversations not yet folded into memory (so a quit or a
crash loses nothing; while no API key is available those automatic refreshes are paused, not
attempted), and the model client's warm-up (``ChatService.warm_up``: the SDK, which takes
seconds to import, is loaded on a worker thread then, so the first message does not wait for
it). Once the workspace shows, and again once the warm-up is done, the objects alive then are
exempted from garbage collection (``yak.ui.heap``), so a full collection never stalls a
streaming reply.

Quitting (File › Quit, closing the window, the session ending) sets an ``asyncio.Event``; the
coroutine then drops pending refreshes (nothing waits on the model: the watermarks did not move,
so the work resumes on the next start), stops its tasks and closes the core.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yak.errors import YakError
from yak.ui.heap import collections_paused, freeze_long_lived

if TYPE_CHECKING:
    import asyncio

    from yak.core import Core
    from yak.ui.main_window import MainWindow

# asyncio, qasync, logging.handlers and importlib.resources are imported inside the functions
# that use them: ``run`` shows the window before any of them is loaded (start-up time).

log = logging.getLogger(__name__)

APP_NAME = "Yak"
ORGANIZATION_DOMAIN = "yak.github.io"  # reversed, it prefixes the app id (yak.paths.APP_ID)
QUIT_GRACE_S = 1.0  # at most this long for in-flight work to notice the cancellation
NO_DISPLAY_MESSAGE = (
    "yak: no display found; the desktop app needs a graphical session. The "
    "command line works without one: yak memory …, yak ask …"
)


def run(
    *,
    data_dir_override: str | None = None,
    database_url: str | None = None,
    workspace: str | None = None,
    choose_folder: bool = False,
) -> int:
    """Open the desktop app; returns the process exit status.

    Args:
        data_dir_override: the data directory (``--data-dir``); default ``$YAK_DATA_DIR`` or the
            platform's.
        database_url: the team database's PostgreSQL URL (``--database-url``); default
            ``$YAK_DATABASE_URL``, else the SQLite file in the data directory.
        workspace: a folder to open at start; an error opening it is shown in the window.
        choose_folder: show the Open Folder dialog once the app is ready (the desktop entry's
            "Open Folder in Yak" action).

    Returns:
        0 after a normal quit; 1 when the database cannot be used (newer schema, unreadable),
        after the user read the message; 2 when there is no display to open a window on (one
        line on stderr says so).
    """
    if not display_available():
        print(NO_DISPLAY_MESSAGE, file=sys.stderr)
        return 2
    os.environ.setdefault("QT_API", "pyside6")
    from PySide6.QtCore import QCoreApplication, QEvent, QSettings
    from PySide6.QtWidgets import QApplication

    from yak.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "yak"])
    assert isinstance(app, QApplication)
    # Before any window: a window takes its application id (Wayland app id, X11
    # _GTK_APPLICATION_ID and WM_CLASS) from these when it is created.
    set_application_identity(app)
    quit_on_last = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)  # the main coroutine decides when the app ends
    # The window first (start-up time is measured to it); asyncio, qasync, logging, the icon
    # and everything behind the database come after it is painted.
    geometry = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, APP_NAME, "window")
    window = MainWindow(geometry_store=geometry)
    if workspace:
        window.show_opening(folder_to_show(workspace))
    window.show()
    app.processEvents()
    from yak.logfile import close_log, open_log

    handler = open_log()
    log.info("window shown")
    if isinstance(handler, logging.FileHandler):
        window.set_support_paths(log_file=handler.baseFilename)
    _configure_application(app)
    window.setWindowIcon(app.windowIcon())

    import asyncio

    import qasync

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(
            _main(
                app,
                window,
                data_dir_override=data_dir_override,
                database_url=database_url,
                workspace=workspace,
                choose_folder=choose_folder,
            )
        )
    except RuntimeError as exc:  # the Qt loop was ended under the coroutine (session end)
        log.info("the event loop ended before the app's coroutine: %s", exc)
        return 0
    finally:
        window.close_guard = None
        window.hide()
        window.deleteLater()
        # Delete the window and its controllers now, while their loop still exists.
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        app.setQuitOnLastWindowClosed(quit_on_last)
        try:
            loop.close()
        except RuntimeError as exc:
            log.info("closing the event loop: %s", exc)
        dispose_loop_timers(loop)
        asyncio.set_event_loop(None)
        close_log(handler)


def folder_to_show(path: str) -> str:
    """The folder ``path`` as the window shows it while it opens: ``~`` expanded, absolute,
    symlinks resolved (text and one ``realpath``: nothing is imported and nothing is checked;
    the workspace registry validates the folder when the core opens, and says what is wrong).
    """
    try:
        return os.path.realpath(os.path.expanduser(path))
    except (OSError, ValueError):  # e.g. a NUL character: shown as given, refused later
        return path


def display_available(
    environ: Mapping[str, str] | None = None, platform: str | None = None
) -> bool:
    """Whether a window can be shown: on Linux (and the BSDs), an X11 or Wayland display, or an
    explicit ``QT_QPA_PLATFORM`` (offscreen, vnc…); elsewhere always.

    Without this check Qt aborts the process (status 134) with a message about xcb plugins.

    Args:
        environ: the environment to look at (default ``os.environ``).
        platform: ``sys.platform`` to assume (default the running one).
    """
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if platform in ("win32", "darwin", "cygwin"):
        return True
    return any(environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))


def dispose_loop_timers(loop: Any) -> None:
    """Delete a closed qasync loop's timer object now, on this (its own) thread.

    ``QEventLoop.close()`` only flags its timer object as stopped; the Qt timers of pending
    ``call_later`` handles stay registered until they fire. If the loop is later garbage-collected
    on a worker thread, the object is destroyed off its thread, its timers cannot be unregistered,
    and the next one to fire crashes the process. Deleting it here unregisters them; the calls
    that worker threads posted before the loop closed are delivered first.
    """
    import shiboken6
    from PySide6.QtCore import QCoreApplication

    QCoreApplication.sendPostedEvents()
    timer = getattr(loop, "_timer", None)
    if timer is not None and shiboken6.isValid(timer):
        shiboken6.delete(timer)


def app_icon() -> Any:
    """The app icon from the ``yak.resources`` package (SVG, with the PNG as a fallback)."""
    from importlib import resources

    from PySide6.QtGui import QIcon

    icon = QIcon()
    folder = resources.files("yak.resources")
    for name in ("yak.svg", "yak.png"):
        entry = folder / name
        if entry.is_file():
            with resources.as_file(entry) as path:
                icon.addFile(str(path))
    return icon


def set_application_identity(app: Any) -> None:
    """Name the application for the desktop: its name, organization, version and desktop file
    name (the app id ``yak.paths.APP_ID``, which the desktop matches to the installed entry
    and icon). Call it before the first window is created."""
    from yak import __version__
    from yak.paths import APP_ID

    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setOrganizationDomain(ORGANIZATION_DOMAIN)
    app.setApplicationDisplayName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(APP_ID)


def _configure_application(app: Any) -> None:
    app.setWindowIcon(app_icon())


async def _main(
    app: Any,
    window: Any,
    *,
    data_dir_override: str | None,
    workspace: str | None,
    database_url: str | None = None,
    choose_folder: bool = False,
) -> int:
    """The app's lifetime, once ``window`` is shown. Returns the exit status."""
    import asyncio

    quit_requested = asyncio.Event()
    app.aboutToQuit.connect(quit_requested.set)
    window.closed.connect(quit_requested.set)
    if not window.isVisible():  # closed before the loop started
        quit_requested.set()
    previous_handlers = _install_quit_signals(quit_requested)
    from yak import paths

    # Beside the core's opening: what a first message needs without the SDK, so one sent the
    # moment the chat can be used leaves at once (the SDK itself loads after, see _warm_up).
    preparing = asyncio.ensure_future(asyncio.to_thread(_prepare_model_transport))
    try:
        try:
            folder = paths.data_dir(data_dir_override)
            window.set_support_paths(data_dir=str(folder))
            core = await asyncio.to_thread(_open_core, folder, database_url)
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
            await running.controller.start(workspace)
            freeze_long_lived()  # what start-up built lives until quit (see yak.ui.heap)
            running.start_background()
            if choose_folder:
                window.choose_folder()
            await quit_requested.wait()
        finally:
            await running.shutdown()
            window.hide()
        return 0
    finally:
        await asyncio.wait([preparing], timeout=5)  # a fraction of a second at most
        for signum, handler in previous_handlers.items():
            signal.signal(signum, handler)
        app.aboutToQuit.disconnect(quit_requested.set)


def _prepare_model_transport() -> None:
    from yak.bootstrap import prepare_model_transport

    prepare_model_transport()


async def _warm_up(core: Core) -> None:
    """The model client's warm-up, with the collector off while the SDK loads; what it loaded is
    then exempted from collections (see ``yak.ui.heap``)."""
    with collections_paused():
        await core.chat.warm_up()
    freeze_long_lived()


def _open_core(folder: Path, database_url: str | None = None) -> Core:
    """Import the core and open it on the migrated database (on a worker thread: the imports
    and the migration take a while).

    Raises:
        SchemaTooNew: a newer Yak wrote the database.
        StoreError: it cannot be opened.
    """
    from yak.bootstrap import open_core

    return open_core(folder, database_url=database_url)


class _RunningApp:
    """The window's controllers around the core, started and stopped together."""

    def __init__(self, window: MainWindow, core: Core) -> None:
        from yak.ui.bridge import EventBridge
        from yak.ui.controller import AppController

        self.core = core
        self.bridge = EventBridge(core.bus, window)
        self.controller = AppController(window=window, core=core, bridge=self.bridge, parent=window)

    def start_background(self) -> None:
        """Watch for writes by other processes, and enqueue conversations not yet folded into
        memory (paused until a key exists), so a quit or a crash loses nothing."""
        self.core.watcher.start_watching()
        self.controller.tasks.spawn(self.core.refresh.enqueue_unfolded(), name="enqueue-unfolded")

    async def shutdown(self) -> None:
        """Quit without waiting on the model: drop pending refreshes, store a stopped reply,
        cancel what runs, close the database."""
        import asyncio

        self.core.refresh.queue.cancel()
        await self.controller.aclose(QUIT_GRACE_S)
        self.bridge.close()
        try:
            await asyncio.wait_for(self.core.aclose(), QUIT_GRACE_S)
        except (TimeoutError, YakError) as exc:
            log.info("quit while a refresh was still stopping: %r", exc)


async def _show_fatal(window: Any, message: str, quit_requested: asyncio.Event) -> None:
    """Show ``message`` in a critical box over the window and wait until it is dismissed."""
    import asyncio

    from PySide6.QtWidgets import QMessageBox

    from yak.ui import dialogs

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
    import asyncio

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

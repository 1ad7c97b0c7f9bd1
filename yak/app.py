"""The desktop app's composition root: builds the services and the main window on qasync.

The app's lifetime is one coroutine (:func:`_main`) on a qasync event loop. It shows the window
first, then opens the database on a worker thread (migrations included) and builds the services:
the event bus, the memory store, the workspace service with its external-change watcher, the
chat service, the memory refresher and its debounced queue (fed by ``TurnCompleted``; on start
every workspace with unfolded messages is enqueued, so a quit or a crash loses nothing; while no
API key is available those automatic refreshes are paused, not attempted), the
event bridge and the controllers. The ``anthropic`` SDK is only imported on the first model call,
long after the window is up.

Quitting (File › Quit, closing the window, the session ending) sets an ``asyncio.Event``; the
coroutine then drops pending refreshes (``queue.cancel()``, nothing waits on the model: the
watermarks did not move, so the work resumes on the next start), stops its tasks and closes the
database.
"""

from __future__ import annotations

import importlib
import logging
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yak.errors import YakError

if TYPE_CHECKING:
    import asyncio

# asyncio, qasync, logging.handlers and importlib.resources are imported inside the functions
# that use them: ``run`` shows the window before any of them is loaded (start-up time).

log = logging.getLogger(__name__)

APP_NAME = "Yak"
DESKTOP_FILE_NAME = "io.github.yak.Yak"
LOG_FILE = "yak.log"
LOG_BYTES = 1_000_000
LOG_BACKUPS = 3
QUIT_GRACE_S = 1.0  # at most this long for in-flight work to notice the cancellation
NO_DISPLAY_MESSAGE = ("yak: no display found; the desktop app needs a graphical session. The "
                      "command line works without one: yak memory …, yak ask …")


def run(*, data_dir_override: str | None = None, workspace: str | None = None) -> int:
    """Open the desktop app; returns the process exit status.

    Args:
        data_dir_override: the data directory (``--data-dir``); default ``$YAK_DATA_DIR`` or the
            platform's.
        workspace: a folder to open at start; an error opening it is shown in the window.

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
    quit_on_last = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)  # the main coroutine decides when the app ends
    # The window first (start-up time is measured to it); asyncio, qasync, logging, the icon
    # and everything behind the database come after it is painted.
    geometry = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, APP_NAME,
                         "window")
    window = MainWindow(geometry_store=geometry)
    window.show()
    app.processEvents()
    handler = _setup_logging()
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
        return loop.run_until_complete(_main(app, window, data_dir_override=data_dir_override,
                                             workspace=workspace))
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
        if handler is not None:
            logging.getLogger().removeHandler(handler)
            handler.close()


def display_available(environ: Mapping[str, str] | None = None,
                      platform: str | None = None) -> bool:
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


def _setup_logging() -> logging.Handler | None:
    """Log INFO and up to a rotating file in the platform log directory (never secrets)."""
    import logging.handlers

    from yak import paths

    try:
        folder = paths.log_dir()
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            folder / LOG_FILE, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8")
    except OSError as exc:
        print(f"yak: cannot write the log file: {exc}", file=sys.stderr)
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    root = logging.getLogger()
    root.addHandler(handler)
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    for handler_ in root.handlers:  # the console keeps showing warnings only
        if isinstance(handler_, logging.StreamHandler) and handler_ is not handler and \
                not isinstance(handler_, logging.FileHandler):
            handler_.setLevel(max(handler_.level, logging.WARNING))
    for noisy in ("httpx", "httpcore", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return handler


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


def _configure_application(app: Any) -> None:
    from yak import __version__

    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(DESKTOP_FILE_NAME)
    app.setWindowIcon(app_icon())


async def _main(app: Any, window: Any, *, data_dir_override: str | None,
                workspace: str | None) -> int:
    """The app's lifetime, once ``window`` is shown. Returns the exit status."""
    import asyncio

    quit_requested = asyncio.Event()
    app.aboutToQuit.connect(quit_requested.set)
    window.closed.connect(quit_requested.set)
    if not window.isVisible():  # closed before the loop started
        quit_requested.set()
    previous_handlers = _install_quit_signals(quit_requested)
    from yak import paths

    try:
        try:
            folder = paths.data_dir(data_dir_override)
            window.set_support_paths(data_dir=str(folder))
            services = await asyncio.to_thread(_open_services, folder)
        except (YakError, OSError) as exc:
            message = str(exc) if isinstance(exc, YakError) else (
                f"Yak cannot use its data directory: {exc.strerror or exc}.")
            log.error("cannot start: %s", message)
            await _show_fatal(window, message, quit_requested)
            window.hide()
            return 1
        app_parts = _build(window, services, folder)
        try:
            await app_parts.controller.start(workspace)
            app_parts.start_background()
            await quit_requested.wait()
        finally:
            await app_parts.shutdown()
            window.hide()
        return 0
    finally:
        for signum, handler in previous_handlers.items():
            signal.signal(signum, handler)
        app.aboutToQuit.disconnect(quit_requested.set)


class _Services:
    """What ``_open_services`` builds on a worker thread (imports included)."""

    def __init__(self, **parts: Any) -> None:
        self.__dict__.update(parts)


def _open_services(folder: Path) -> _Services:
    """Import the storage layer and open the migrated database (on a worker thread).

    Raises:
        SchemaTooNew: a newer Yak wrote the database.
        StoreError: it cannot be opened.
    """
    from yak.db import open_database

    database = open_database(folder)
    modules = {name: importlib.import_module(name) for name in (
        "yak.config", "yak.events", "yak.memory.store", "yak.workspace.service")}
    return _Services(db=database, modules=modules)


class _App:
    """The running app's parts, started and stopped together."""

    def __init__(self, **parts: Any) -> None:
        self.__dict__.update(parts)

    def start_background(self) -> None:
        """Start the external-change watcher and enqueue unfolded conversations."""
        self.workspace_service.start_watching()
        if self.auto_refresh is not None and self.conversations is not None:
            self.tasks.spawn(_enqueue_unfolded(self.conversations, self.auto_refresh),
                             name="enqueue-unfolded")

    async def shutdown(self) -> None:
        """Quit without waiting on the model: drop pending refreshes, cancel what runs."""
        import asyncio

        if self.queue is not None:
            self.queue.cancel()
        chat = getattr(self.controller, "chat_controller", None)
        if chat is not None:  # a stopped reply is stored before the database closes
            await chat.aclose(QUIT_GRACE_S)
        self.controller.shutdown()
        self.tasks.cancel_all()
        self.workspace_service.close()
        self.controller.settings_dialog.hide()
        if self.queue is not None:
            try:
                await asyncio.wait_for(self.queue.aclose(), QUIT_GRACE_S)
            except (TimeoutError, YakError) as exc:
                log.info("quit while a refresh was still stopping: %r", exc)
        self.db.close()


def _build(window: Any, services: _Services, folder: Path) -> _App:
    """Assemble the services, the bridge and the controllers around the shown window."""
    from yak.ui.bridge import EventBridge
    from yak.ui.controller import AppController
    from yak.ui.tasks import TaskGroup

    config = services.modules["yak.config"]
    events = services.modules["yak.events"]
    db = services.db
    bus = events.EventBus()
    store = services.modules["yak.memory.store"].MemoryStore(db)

    def settings() -> Any:
        return config.load_settings(folder)

    conversations, auto_refresh, refresher, chat_service = _optional_services(
        db, bus, store, settings)
    queue = auto_refresh.queue if auto_refresh is not None else None
    workspace_service = services.modules["yak.workspace.service"].WorkspaceService(
        store=store, db=db, bus=bus, refresher=refresher, auto_refresh=auto_refresh)
    bridge = EventBridge(bus, window)
    controller = AppController(window=window, service=workspace_service, bridge=bridge,
                               parent=window)
    if chat_service is not None:
        _attach_chat(controller, chat_service, folder, auto_refresh)
    return _App(db=db, bus=bus, queue=queue, auto_refresh=auto_refresh,
                conversations=conversations, workspace_service=workspace_service,
                controller=controller, tasks=TaskGroup())


def _optional_services(db: Any, bus: Any, store: Any, settings: Any
                       ) -> tuple[Any, Any, Any, Any]:
    """The conversation store, the automatic refresh (its gate and queue), the refresher and
    the chat service — each ``None`` when this build lacks it (the memory features work
    without them). Automatic refreshes wait while no API key is available."""
    conversations = auto_refresh = refresher = chat_service = None
    try:
        from yak.chat.service import ChatService

        chat_service = ChatService(db=db, bus=bus, settings=settings)
    except (ImportError, NotImplementedError) as exc:
        log.warning("chat unavailable in this build: %s", exc)
    try:
        from yak.db.conversations import ConversationStore
        from yak.events import TurnCompleted
        from yak.llm.credentials import has_api_key
        from yak.llm.provider import Provider
        from yak.memory.refresh import MemoryRefresher
        from yak.workspace.auto_refresh import AutoRefresh

        conversations = ConversationStore(db)
        refresher = MemoryRefresher(
            store=store, conversations=conversations,
            provider_factory=lambda: Provider(base_url=settings().base_url),
            settings=settings, bus=bus)
        auto_refresh = AutoRefresh(
            lambda workspace_id, rebuild: refresher.refresh(workspace_id, rebuild=rebuild),
            has_api_key=chat_service.has_api_key if chat_service is not None else has_api_key,
            bus=bus, debounce_s=settings().debounce_s)
        bus.subscribe(TurnCompleted, lambda event: auto_refresh.enqueue(event.workspace_id))
    except (ImportError, NotImplementedError) as exc:
        log.warning("memory refresh unavailable in this build: %s", exc)
    return conversations, auto_refresh, refresher, chat_service


def _attach_chat(controller: Any, chat_service: Any, folder: Path, auto_refresh: Any) -> None:
    """Put the chat panel in the window and the Provider page in Settings."""
    try:
        from yak.ui.chat.controller import ChatController
        from yak.ui.chat.panel import ChatPanel
        from yak.ui.settings.provider_page import ProviderPage
    except ImportError as exc:
        log.warning("chat panel unavailable in this build: %s", exc)
        return
    window = controller.window
    panel = ChatPanel()
    chat = ChatController(panel, chat_service, parent=controller)
    window.set_chat_panel(panel)
    window.workspace_changed.connect(chat.set_workspace)
    page = ProviderPage(data_dir=folder, service=chat_service)
    controller.settings_dialog.add_page(page.title, page)
    chat.provider_settings_requested.connect(
        lambda: controller.settings_dialog.show_page(page.title))
    page.key_saved.connect(chat.refresh_key_notice)
    if auto_refresh is not None:
        queue = auto_refresh.queue
        page.settings_applied.connect(lambda settings: queue.set_debounce(settings.debounce_s))
        page.key_saved.connect(lambda: controller.tasks.spawn(
            _key_changed(auto_refresh, controller), name="api-key-changed"))
    controller.chat_controller = chat


async def _key_changed(auto_refresh: Any, controller: Any) -> None:
    """An API key was stored or removed: check again (a new key enqueues the paused
    workspaces) and re-read the memory panel's status."""
    await auto_refresh.check_key()
    controller.reload_refresh_state()


async def _enqueue_unfolded(conversations: Any, auto_refresh: Any) -> None:
    """Enqueue every workspace with messages not yet folded into memory (DESIGN.md §4); without
    an API key they are paused instead, until one is added."""
    import asyncio

    try:
        workspace_ids = await asyncio.to_thread(conversations.workspaces_with_unfolded)
    except (YakError, NotImplementedError) as exc:
        log.warning("cannot list workspaces with unfolded messages: %s", exc)
        return
    if workspace_ids:
        await auto_refresh.check_key()
    for workspace_id in workspace_ids:
        auto_refresh.enqueue(workspace_id)
    if workspace_ids:
        log.info("enqueued %d workspace(s) with unfolded messages%s", len(workspace_ids),
                 "" if auto_refresh.key_available else " (paused: no API key)")


async def _show_fatal(window: Any, message: str, quit_requested: asyncio.Event) -> None:
    """Show ``message`` in a critical box over the window and wait until it is dismissed."""
    import asyncio

    from PySide6.QtWidgets import QMessageBox

    from yak.ui import dialogs

    closed = asyncio.Event()
    window.fatal_box = dialogs.inform(window, title="Yak cannot start", text=message,
                                      icon=QMessageBox.Icon.Critical, on_close=closed.set)
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
                signum, lambda *_: loop.call_soon_threadsafe(quit_requested.set))
        except ValueError:  # not the main thread
            break
    return previous

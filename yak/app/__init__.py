"""The desktop app: ``yak [FOLDER]``.

:func:`run` shows the window first (a folder given on the command line already named in it,
"loading…" for its chat and memory), then opens the log file and hands the painted window to
:mod:`yak.app.lifetime`, which gives it its icon and runs the event loop and the core behind
it. That hand-over is the one import deferred for start-up time: the event loop, the core and
its services (seconds of imports and the database migration) load once the window is on
screen. What else buys start-up time lives in :mod:`yak.app.lifetime` (the core opened on a
worker thread, the heap frozen once the workspace shows).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from yak import __version__, paths
from yak.logfile import close_log, open_log
from yak.ui.main_window import MainWindow

log = logging.getLogger(__name__)

APP_NAME = "Yak"
ORGANIZATION_DOMAIN = "yak.github.io"  # reversed, it prefixes the app id (yak.paths.APP_ID)
NO_DISPLAY_MESSAGE = (
    "yak: no display found; the desktop app needs a graphical session. The "
    "command line works without one: yak memory …, yak ask …"
)


@dataclass(frozen=True)
class StartOptions:
    """What the app opens with: :func:`run`'s arguments, as the lifetime receives them."""

    data_dir_override: str | None = None
    database_url: str | None = None
    workspace: str | None = None
    choose_folder: bool = False
    ends_process: bool = False


def run(
    *,
    data_dir_override: str | None = None,
    database_url: str | None = None,
    workspace: str | None = None,
    choose_folder: bool = False,
    ends_process: bool = False,
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
        ends_process: the process ends when this returns (the ``yak`` command): the quit
            deadline stays armed until it has, so the process is gone within
            ``lifetime.QUIT_DEADLINE_S`` of a quit (SIGTERM, Ctrl+Q) even when a worker thread
            is inside a long call; otherwise it is cancelled once the window is gone.

    Returns:
        0 after a normal quit; 1 when the database cannot be used (newer schema, unreadable),
        after the user read the message; 2 when there is no display to open a window on, or
        the one named does not answer (one line on stderr says so: :func:`display_problem`).
    """
    problem = display_problem()
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "yak"])
    assert isinstance(app, QApplication)
    # Before any window: a window takes its application id (Wayland app id, X11
    # _GTK_APPLICATION_ID and WM_CLASS) from these when it is created.
    set_application_identity(app)
    quit_on_last = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)  # the main coroutine decides when the app ends
    # The window first (start-up time is measured to it); the log, the icon, the event loop
    # and the core come after it is painted.
    geometry = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, APP_NAME, "window")
    window = MainWindow(geometry_store=geometry)
    if workspace:
        window.show_opening(folder_to_show(workspace))
    window.show()
    app.processEvents()
    handler = open_log(data_dir_override)  # beside a chosen data directory
    log.info("window shown")
    if isinstance(handler, logging.FileHandler):
        window.set_support_paths(log_file=handler.baseFilename)
    # The one import that waits for the first paint: the event loop, and the core behind it.
    from yak.app import lifetime

    try:
        return lifetime.run_event_loop(
            app,
            window,
            StartOptions(
                data_dir_override=data_dir_override,
                database_url=database_url,
                workspace=workspace,
                choose_folder=choose_folder,
                ends_process=ends_process,
            ),
        )
    finally:
        app.setQuitOnLastWindowClosed(quit_on_last)
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
    environ: Mapping[str, str] | None = None,
    platform: str | None = None,
    *,
    answers: Callable[[str | tuple[str, int]], bool] | None = None,
) -> bool:
    """Whether a window can be shown (:func:`display_problem` finds nothing wrong)."""
    return display_problem(environ, platform, answers=answers) is None


def display_problem(
    environ: Mapping[str, str] | None = None,
    platform: str | None = None,
    *,
    answers: Callable[[str | tuple[str, int]], bool] | None = None,
) -> str | None:
    """Why no window can be shown, as the one line to print, or ``None`` when one can: on
    Linux (and the BSDs) an X11 or Wayland display must be named *and answer* (a socket
    connection, no Qt: Qt aborts the process, status 134, when ``DISPLAY`` names a server that
    is gone), unless ``QT_QPA_PLATFORM`` names a platform without one (offscreen, vnc…);
    elsewhere there always is one.

    Args:
        environ: the environment to look at (default ``os.environ``).
        platform: ``sys.platform`` to assume (default the running one).
        answers: whether a socket address (a path, an abstract ``"\0…"`` name, or a
            ``(host, port)``) accepts a connection (default: try it, one second at most).
    """
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    answers = answers or _socket_answers
    if platform in ("win32", "darwin", "cygwin"):
        return None
    wanted = {entry.split(":", 1)[0] for entry in environ.get("QT_QPA_PLATFORM", "").split(";")}
    wanted.discard("")
    if wanted and not wanted <= WINDOW_SYSTEMS:  # offscreen, vnc, eglfs…: no display server
        return None
    named: list[str] = []
    if environ.get("WAYLAND_SOCKET"):  # a connection handed over by the compositor
        return None
    wayland = environ.get("WAYLAND_DISPLAY")
    if wayland and (not wanted or wanted - {"xcb"}):
        named.append(f"WAYLAND_DISPLAY={wayland}")
        runtime = environ.get("XDG_RUNTIME_DIR", "")
        path = wayland if wayland.startswith("/") else os.path.join(runtime, wayland)
        if (wayland.startswith("/") or runtime) and answers(path):
            return None
    x11 = environ.get("DISPLAY")
    if x11 and (not wanted or "xcb" in wanted):
        named.append(f"DISPLAY={x11}")
        addresses = _x11_addresses(x11)
        if addresses is None or any(answers(address) for address in addresses):
            return None  # an address this check does not know: Qt decides
    if not named:
        return NO_DISPLAY_MESSAGE
    return (
        f"yak: no display answers at {' or '.join(named)}; the desktop app needs a graphical "
        "session. The command line works without one: yak memory …, yak ask …"
    )


WINDOW_SYSTEMS = frozenset({"xcb", "wayland", "wayland-egl", "wayland-brcm"})
X11_TCP_PORT = 6000  # plus the display number


def _x11_addresses(display: str) -> list[str | tuple[str, int]] | None:
    """Where an X server for ``DISPLAY`` listens: ``:1`` → its local socket (abstract name
    and file, ``/tmp/.X11-unix/X1``), ``host:1`` → TCP port 6001 on host; ``None`` when the
    form is not one of these (checked by Qt itself then)."""
    host, colon, rest = display.rpartition(":")
    number = rest.split(".", 1)[0]
    if not colon or not number.isdigit() or "/" in host:
        return None
    if host in ("", "unix"):
        local = f"/tmp/.X11-unix/X{number}"
        return [f"\0{local}", local]
    return [(host.strip("[]"), X11_TCP_PORT + int(number))]


def _socket_answers(address: str | tuple[str, int]) -> bool:
    """Whether a connection to ``address`` is accepted within a second (then closed)."""
    import socket

    try:
        if isinstance(address, tuple):
            with socket.create_connection(address, timeout=1):
                return True
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(1)
            sock.connect(address)
            return True
    except (OSError, ValueError):
        return False


def set_application_identity(app: QApplication) -> None:
    """Name the application for the desktop: its name, organization, version and desktop file
    name (the app id ``yak.paths.APP_ID``, which the desktop matches to the installed entry
    and icon). Call it before the first window is created."""
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setOrganizationDomain(ORGANIZATION_DOMAIN)
    app.setApplicationDisplayName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(paths.APP_ID)

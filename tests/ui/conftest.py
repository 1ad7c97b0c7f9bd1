"""Fixtures for the desktop UI tests: a qasync loop per test (so the controllers' tasks run on
the Qt event loop, as in the app) and a workspace environment: the application core from
``open_core`` on a real database, its event bridge, and another process on the same database.

Test bodies run as coroutines on the qasync loop (``memory_support.run``), so the controllers'
spawned tasks run; tests wait with ``await controller.tasks.drain()`` or ``memory_support.until``
(a hang guard), never by sleeping.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from chat_support import make_chat
from memory_support import Env, make_env

from yak.app.lifetime import dispose_loop_timers


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
        dispose_loop_timers(loop)
        asyncio.set_event_loop(None)


@pytest.fixture(autouse=True)
def _private_qsettings(tmp_path):
    """Qt's per-user settings (the window's geometry, the folders the file dialogs last used)
    live in the test's own folder: one test's choices never reach another."""
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "qt"))


@pytest.fixture
def background_errors(caplog):
    """Fails the test when a spawned task died of an exception (yak.aio logs it and moves on,
    which would otherwise hide a programming error)."""
    caplog.set_level(logging.ERROR, logger="yak.aio")
    yield
    failures = [r for r in caplog.records if r.name == "yak.aio" and r.levelno >= logging.ERROR]
    assert not failures, "a background task failed:\n" + "\n".join(
        f"{r.getMessage()}: {r.exc_info[1]!r}" if r.exc_info else r.getMessage() for r in failures
    )


@pytest.fixture
def env(data_dir, tmp_path, qloop, background_errors, timers) -> Env:
    """The core on a database in ``data_dir`` (its refresh queue on ``timers``), the event
    bridge, another process on the same database, and project folders; closed after the test."""
    environment = make_env(data_dir, tmp_path, qloop, timers)
    yield environment
    environment.close()


@pytest.fixture
def page(env, qtbot):
    """Settings › Memory with its controller, shown at 1000 × 600."""
    from yak.ui.settings.memory_controller import MemoryPageController
    from yak.ui.settings.memory_page import MemoryPage

    memory_page = MemoryPage()
    qtbot.addWidget(memory_page)
    memory_page.controller = MemoryPageController(memory_page, env.core, env.bridge)
    memory_page.resize(1000, 600)
    memory_page.show()
    return memory_page


@pytest.fixture
def chat(qloop, qtbot, data_dir, fake_api, tmp_path, background_errors):
    """A shown chat panel with its controller on a workspace folder, talking to ``fake_api``
    through the core's chat service (see ``chat_support.Chat``)."""
    yield from make_chat(qloop, qtbot, data_dir, tmp_path)


@pytest.fixture
def ui(env, qtbot, qloop):
    """The main window with its controller on the core, shown; the controller is closed
    afterwards, as the app does on quit."""
    from memory_support import run

    from yak.ui.controller import AppController
    from yak.ui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    controller = AppController(window=window, core=env.core, bridge=env.bridge)
    window.show()
    yield window, controller
    run(qloop, controller.aclose())
    window.close_guard = None

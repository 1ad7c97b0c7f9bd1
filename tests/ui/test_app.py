"""The composition root: ``yak.app.run`` in-process, as ``yak [WORKSPACE]`` runs it.

Each test drives the real app from a polling QTimer (it looks for the state it expects, then
acts: closes the window, clicks a message box); the limit only stops a hung app.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest
from PySide6.QtCore import QEvent, QObject, QSettings, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from tests.support import say, workspace_with_document
from tests.support.cli import yak_command
from tests.support.widgets import shown_texts
from yak import app as yak_app
from yak.app import lifetime
from yak.bootstrap import open_core
from yak.chat.service import ChatService
from yak.core import Core
from yak.llm.provider import Provider
from yak.ui.main_window import MainWindow

LIMIT_S = 60.0
T = TypeVar("T")


def with_core(data_dir, use: Callable[[Core], Coroutine[Any, Any, T]]) -> T:
    """Run ``use(core)`` on a core of its own (another process, before or after the app), on a
    private event loop, and close the core."""

    async def main() -> T:
        core = open_core(data_dir)
        try:
            return await use(core)
        finally:
            await core.aclose()

    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(main())
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
        asyncio.set_event_loop(None)


@pytest.fixture
def app_env(qapp, data_dir, tmp_path, monkeypatch, memory_keyring):
    """Private log and geometry locations for the app under test."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    QSettings.setPath(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "config")
    )
    yield tmp_path
    qapp.setQuitOnLastWindowClosed(False)


def drive(step: Callable[[], bool]) -> list[str]:
    """Call ``step()`` every 20 ms while the app runs until it returns True; on the limit,
    close every window so the app ends (the test then fails on its assertions)."""
    started = time.monotonic()
    problems: list[str] = []

    def tick() -> None:
        try:
            if step():
                return
        except Exception as exc:  # noqa: BLE001 - report it and end the app instead of hanging
            problems.append(repr(exc))
            _close_all()
            return
        if time.monotonic() - started > LIMIT_S:
            problems.append("gave up waiting")
            _close_all()
            return
        QTimer.singleShot(20, tick)

    QTimer.singleShot(20, tick)
    return problems


def _close_all() -> None:
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, QMessageBox) and widget.isVisible():
            widget.done(0)
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, MainWindow):
            widget.close_guard = None
            widget.close()


def main_window() -> MainWindow | None:
    return next(
        (w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()),
        None,
    )


def window_showing(document: str) -> MainWindow | None:
    """The shown window once its workspace's memory panel shows ``document``, else ``None``."""
    window = main_window()
    if window is None or window.workspace is None:
        return None
    return window if window.memory_panel.document_view.toPlainText() == document else None


def visible_box(containing: str) -> QMessageBox | None:
    return next(
        (
            w
            for w in QApplication.topLevelWidgets()
            if isinstance(w, QMessageBox) and w.isVisible() and containing in w.text()
        ),
        None,
    )


def test_app_opens_the_workspace_given_and_quits_with_status_0(app_env, data_dir, tmp_path):
    """``yak DIR`` shows the window with DIR's memory in the panel; Help › About names the data
    directory and the log file; Quit ends with status 0, and the log file is written."""
    folder = tmp_path / "proj"
    folder.mkdir()
    with_core(
        data_dir, lambda core: workspace_with_document(core, folder, "- from the command line\n")
    )
    seen: dict[str, str] = {}

    def step() -> bool:
        window = main_window()
        if window is None or window.workspace is None:
            return False
        panel = window.memory_panel
        if not panel.document_view.toPlainText():
            return False
        seen.update(
            title=window.windowTitle(),
            document=panel.document_view.toPlainText(),
            lines=panel.lines_label.text(),
            icon=str(not window.windowIcon().isNull()),
        )
        window.about_action.trigger()
        seen["about"] = window.about_box.informativeText()
        window.about_box.done(0)
        window.quit_action.trigger()
        return True

    problems = drive(step)
    status = yak_app.run(data_dir_override=str(data_dir), workspace=str(folder))
    assert problems == []
    assert status == 0
    assert seen["title"].startswith("proj — ")
    assert seen["document"] == "- from the command line\n"
    assert seen["lines"] == "1 / 200 lines"
    assert seen["icon"] == "True"
    log_file = data_dir / "log" / "yak.log"  # the log follows the chosen data directory
    assert f"Data directory: {data_dir}\n" in seen["about"]
    assert f"Log file: {log_file}\n" in seen["about"]
    log_text = log_file.read_text(encoding="utf-8")
    assert "window shown" in log_text
    assert "opened workspace" in log_text


def test_app_shows_a_missing_workspace_as_a_message_not_a_crash(app_env, data_dir, tmp_path):
    """``yak MISSING`` opens the window with a message naming the folder; the app keeps
    running until quit (status 0)."""
    missing = tmp_path / "no-such-project"
    seen: list[str] = []

    def step() -> bool:
        box = visible_box("no-such-project")
        if box is None:
            return False
        seen.append(box.text())
        box.done(0)
        window = main_window()
        seen.append(str(window.workspace))
        window.close()
        return True

    problems = drive(step)
    status = yak_app.run(data_dir_override=str(data_dir), workspace=str(missing))
    assert problems == []
    assert status == 0
    assert "no-such-project" in seen[0]
    assert seen[1] == "None"


def test_app_refuses_a_database_from_a_newer_yak_with_a_message_and_status_1(app_env, data_dir):
    """A database written by a newer Yak: a message box says so, the app exits 1 after it is
    dismissed, and the database is left untouched."""
    with_core(data_dir, lambda core: asyncio.sleep(0))  # a migrated database
    path = data_dir / "yak.db"
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'zzzz'")
    before = path.read_bytes()
    seen: list[str] = []

    def step() -> bool:
        box = visible_box("newer version of Yak")
        if box is None:
            return False
        seen.append(box.text())
        box.button(QMessageBox.StandardButton.Ok).click()
        return True

    problems = drive(step)
    status = yak_app.run(data_dir_override=str(data_dir), workspace=None)
    assert problems == []
    assert status == 1
    assert "upgrade Yak" in seen[0]
    assert path.read_bytes() == before


@pytest.mark.parametrize("entry", ["run", "cli"])
def test_without_a_display_the_app_says_so_in_one_line_and_exits_2(
    monkeypatch, capsys, data_dir, entry
):
    """``yak`` on a Linux machine with no X11 or Wayland display (and no ``QT_QPA_PLATFORM``)
    prints one line pointing at the command line and exits 2, instead of Qt's abort (134)."""
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    if entry == "run":
        status = yak_app.run(data_dir_override=str(data_dir))
    else:
        from yak.cli import main

        status = main(["--data-dir", str(data_dir)])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    assert captured.err == (
        "yak: no display found; the desktop app needs a graphical session. "
        "The command line works without one: yak memory …, yak ask …\n"
    )
    assert not (data_dir / "yak.db").exists()  # nothing was opened


@pytest.mark.parametrize(
    ("environ", "platform", "available"),
    [
        ({}, "linux", False),
        ({"DISPLAY": ""}, "linux", False),
        ({"DISPLAY": ":0"}, "linux", True),
        ({"WAYLAND_DISPLAY": "wayland-0", "XDG_RUNTIME_DIR": "/run/user/1000"}, "linux", True),
        ({"QT_QPA_PLATFORM": "offscreen"}, "linux", True),
        ({}, "freebsd14", False),
        ({}, "win32", True),
        ({}, "darwin", True),
    ],
)
def test_display_detection(environ, platform, available):
    """A display is an X11 or Wayland one (that answers) or an explicit Qt platform; Windows
    and macOS always have one."""
    assert yak_app.display_available(environ, platform, answers=lambda _: True) is available


def test_a_display_that_does_not_answer_is_one_line_and_exit_2_not_a_qt_abort(tmp_path):
    """``DISPLAY`` set to a server that is gone (and a Wayland socket nobody listens on): the
    real ``yak`` prints one sentence naming them and exits 2; Qt used to abort with 134."""
    import subprocess

    env = {
        **os.environ,
        "DISPLAY": "127.0.0.1:87",  # TCP port 6087 on loopback: nothing listens there
        "WAYLAND_DISPLAY": str(tmp_path / "wayland-gone"),
        "YAK_DATA_DIR": str(tmp_path / "data"),
    }
    env.pop("QT_QPA_PLATFORM", None)  # the tests' offscreen platform needs no display
    ran = subprocess.run(yak_command(), capture_output=True, env=env, timeout=60, check=False)
    assert ran.returncode == 2
    assert ran.stderr.decode() == (
        f"yak: no display answers at WAYLAND_DISPLAY={tmp_path / 'wayland-gone'} or "
        "DISPLAY=127.0.0.1:87; the desktop app needs a graphical session. The command line "
        "works without one: yak memory …, yak ask …\n"
    )
    assert not (tmp_path / "data" / "yak.db").exists()


def test_a_display_that_answers_is_taken(tmp_path):
    """A Wayland socket that accepts a connection is a display; an X11 display number is
    looked for at its local socket, a host's at TCP 6000 + its number."""
    import socket

    path = str(tmp_path / "wayland-1")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        server.listen(1)
        assert yak_app.display_problem({"WAYLAND_DISPLAY": path}, "linux") is None
        assert (
            yak_app.display_problem(
                {"WAYLAND_DISPLAY": "wayland-1", "XDG_RUNTIME_DIR": str(tmp_path)}, "linux"
            )
            is None
        )
    assert yak_app.display_problem({"WAYLAND_DISPLAY": path}, "linux") is not None
    asked: list = []
    yak_app.display_problem({"DISPLAY": ":3.0"}, "linux", answers=asked.append)
    yak_app.display_problem({"DISPLAY": "build-box:12"}, "linux", answers=asked.append)
    assert asked == ["\0/tmp/.X11-unix/X3", "/tmp/.X11-unix/X3", ("build-box", 6012)]
    # Only the window systems Qt was told to use are looked at.
    assert yak_app.display_problem({"QT_QPA_PLATFORM": "vnc", "DISPLAY": ":3"}, "linux") is None


def test_first_start_without_a_key_pauses_memory_refresh_until_a_key_is_added(
    app_env, data_dir, tmp_path, monkeypatch, memory_keyring
):
    """``yak DIR`` with no API key and unfolded conversations: the panel says the refresh is
    paused (not a red failure) and nothing is attempted; a key saved in Settings › Provider
    enqueues the workspace (pending). Quitting before it runs loses nothing: no attempt is
    recorded and the messages are still unfolded for the next start."""
    from yak.presenters import PAUSED_TEXT
    from yak.ui.settings.dialog import SettingsDialog

    monkeypatch.setenv("YAK_REFRESH_IDLE_SECONDS", "600")  # the pending run never starts here
    folder = tmp_path / "proj"
    folder.mkdir()

    async def setup(core: Core):
        workspace = await core.workspaces.open(str(folder))
        say(core, workspace.id, "Use make.", title="Setup")
        return workspace

    workspace = with_core(data_dir, setup)
    seen: dict[str, str] = {}

    def step() -> bool:
        window = main_window()
        if window is None or window.workspace is None:
            return False
        panel = window.memory_panel
        if "paused" not in seen:
            if panel.status_label.text() != PAUSED_TEXT:
                return False
            seen.update(
                paused=panel.status_label.text(),
                style=panel.status_label.styleSheet(),
                button=panel.action_button.text(),
            )
            page = window.findChild(SettingsDialog).page("Provider")
            page.key_edit.setText("sk-ant-test-key")
            page.apply()
            return False
        if not panel.status_label.text().startswith("pending in"):
            return False
        seen["after_key"] = panel.status_label.text()
        window.quit_action.trigger()
        return True

    problems = drive(step)
    status = yak_app.run(data_dir_override=str(data_dir), workspace=str(folder))
    assert problems == []
    assert status == 0
    assert seen["paused"] == PAUSED_TEXT
    assert seen["style"] == ""
    assert seen["button"] == "Add key…"
    assert seen["after_key"].startswith("pending in ")
    assert memory_keyring.passwords == {("yak", "anthropic"): "sk-ant-test-key"}

    async def check(core: Core) -> None:
        assert await core.memory.attempts(workspace.id) == []
        assert len(core.chat.conversations.unfolded_messages(workspace.id)) == 1

    with_core(data_dir, check)


class FirstFrame(QObject):
    """Records what the main window shows when it is first painted, then lets the core open
    (``core_may_open``): the app's core waits for it, so that frame is surely before it."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, Any] = {}
        self.core_opened = threading.Event()
        self.core_may_open = threading.Event()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if (
            not self.seen
            and event.type() == QEvent.Type.Paint
            and isinstance(obj, QWidget)
            and isinstance(obj.window(), MainWindow)
        ):
            window = obj.window()
            self.seen.update(
                title=window.windowTitle(),
                texts=shown_texts(window),
                core_opened=self.core_opened.is_set(),
            )
            self.core_may_open.set()
        return False


def test_a_folder_given_at_start_is_named_from_the_first_frame_then_its_memory_shows(
    app_env, data_dir, tmp_path, monkeypatch, qapp
):
    """``yak DIR``: the first frame of the window, painted before the core is open, already
    names DIR (title, name and path) with "loading…" for the chat and the memory, never the
    open-a-folder hint; once the core is open the memory panel shows DIR's document."""
    folder = tmp_path / "proj"
    folder.mkdir()
    with_core(data_dir, lambda core: workspace_with_document(core, folder, "- first frame\n"))
    frame = FirstFrame()
    open_core_now = lifetime._open_core

    def gated_open_core(path, database_url=None):
        frame.core_may_open.wait(LIMIT_S)
        core = open_core_now(path, database_url)
        frame.core_opened.set()
        return core

    monkeypatch.setattr(lifetime, "_open_core", gated_open_core)
    qapp.installEventFilter(frame)
    seen: dict[str, Any] = {}

    def step() -> bool:
        window = window_showing("- first frame\n")
        if window is None:
            return False
        seen.update(title=window.windowTitle(), texts=shown_texts(window))
        window.quit_action.trigger()
        return True

    problems = drive(step)
    try:
        status = yak_app.run(data_dir_override=str(data_dir), workspace=str(folder))
    finally:
        qapp.removeEventFilter(frame)
    assert problems == []
    assert status == 0
    first = frame.seen
    assert first["core_opened"] is False
    assert first["title"] == f"proj — {folder} — Yak"
    assert f"proj\n{folder}\nLoading the conversations…" in first["texts"]
    assert "Memory — proj\nLoading the memory…" in first["texts"]
    assert not any("Open a project folder" in t for t in first["texts"])
    assert seen["title"] == f"proj — {folder} — Yak"
    assert "Memory — proj" in seen["texts"]
    assert not any("Loading" in t for t in seen["texts"])


def test_a_start_without_a_key_warms_the_sdk_and_shows_no_failure(
    app_env, data_dir, tmp_path, monkeypatch, caplog
):
    """``yak DIR`` with no API key anywhere: the background warm-up loads the SDK only and says
    so in the log; no message box, no failed background task, and the chat shows the folder."""
    folder = tmp_path / "proj"
    folder.mkdir()
    results: list[bool] = []
    warm_up_now = ChatService.warm_up

    async def recorded_warm_up(self: ChatService) -> bool:
        result = await warm_up_now(self)
        results.append(result)
        return result

    monkeypatch.setattr(ChatService, "warm_up", recorded_warm_up)
    seen: dict[str, Any] = {}

    def step() -> bool:
        window = main_window()
        if window is None or window.workspace is None or not results:
            return False
        boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)]
        seen.update(
            boxes=[box.text() for box in boxes if box.isVisible()],
            placeholder=window.chat_panel.transcript.placeholder.text(),
        )
        window.quit_action.trigger()
        return True

    problems = drive(step)
    status = yak_app.run(data_dir_override=str(data_dir), workspace=str(folder))
    assert problems == []
    assert status == 0
    assert results == [False]
    assert seen["boxes"] == []
    assert seen["placeholder"].startswith("Ask the agent about proj.")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    log_text = (data_dir / "log" / "yak.log").read_text(encoding="utf-8")
    assert "model client not built (no API key yet); SDK loaded in" in log_text


def test_the_warm_up_runs_while_the_window_keeps_working(app_env, data_dir, tmp_path, monkeypatch):
    """While the model client's warm-up is held inside the SDK's loading, the window keeps
    working: another folder is opened from File › Open (its memory shows) before the warm-up
    is let go; the warm-up then builds the client (a key is set). Were it run on the window's
    thread, nothing would happen until it timed out."""
    first, other = tmp_path / "proj", tmp_path / "other"
    first.mkdir()
    other.mkdir()
    with_core(data_dir, lambda core: workspace_with_document(core, other, "- other memory\n"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-warm-up-test")
    started, release = threading.Event(), threading.Event()
    events: list[str] = []
    warm_up_now = Provider.warm_up

    def held_warm_up(self: Provider, *, without_key: bool = True) -> bool:
        started.set()
        events.append("released" if release.wait(LIMIT_S / 3) else "timed out")
        return warm_up_now(self, without_key=without_key)

    monkeypatch.setattr(Provider, "warm_up", held_warm_up)
    results: list[bool] = []
    chat_warm_up_now = ChatService.warm_up

    async def recorded_warm_up(self: ChatService) -> bool:
        result = await chat_warm_up_now(self)
        results.append(result)
        return result

    monkeypatch.setattr(ChatService, "warm_up", recorded_warm_up)

    asked: list[str] = []

    def step() -> bool:
        window = main_window()
        if window is None or not started.is_set():
            return False
        if not release.is_set():  # the warm-up is held: the window must still work
            if not asked:
                asked.append(str(other))
                window.open_folder_requested.emit(str(other))  # File › Open, as chosen
                return False
            panel = window.memory_panel
            if panel.document_view.toPlainText() != "- other memory\n":
                return False
            events.append("other folder shown")
            release.set()
            return False
        if not results:
            return False
        window.quit_action.trigger()
        return True

    problems = drive(step)
    status = yak_app.run(data_dir_override=str(data_dir), workspace=str(first))
    assert problems == []
    assert status == 0
    assert events == ["other folder shown", "released"]
    assert results == [True]


def test_yak_dir_open_in_another_window_brings_it_to_the_front_and_quits(
    app_env, data_dir, tmp_path
):
    """``yak DIR`` while another Yak window shows DIR: that window is asked to come to the
    front (it hears the request once), and this app shows no "already open" box, runs no
    start-up work and quits with status 0 by itself."""
    from yak.ui.window_lock import WindowLock

    folder = tmp_path / "proj"
    folder.mkdir()
    workspace = with_core(data_dir, lambda core: core.workspaces.open(str(folder)))
    holder = WindowLock(data_dir)  # the first window's lock, in this process
    assert holder.claim(workspace.id)
    requests: list[str] = []
    holder.show_requested.connect(lambda: requests.append("show"))
    boxes: list[str] = []
    finished = threading.Event()

    def step() -> bool:
        box = visible_box("already open")
        if box is not None:
            boxes.append(box.text())
            box.done(0)
        return finished.is_set() or bool(boxes)

    problems = drive(step)
    try:
        status = yak_app.run(data_dir_override=str(data_dir), workspace=str(folder))
    finally:
        finished.set()
        holder.release()
    assert problems == []
    assert (status, requests, boxes) == (0, ["show"], [])
    assert main_window() is None


def test_a_read_only_data_folder_opens_read_only_with_a_banner(
    app_env, data_dir, tmp_path, monkeypatch
):
    """``yak DIR`` on a database nobody may write (as ``yak memory show`` reads it): the window
    opens instead of refusing, shows DIR's memory, and a banner above the chat says changes
    cannot be saved; quitting leaves the database's bytes as they were (status 0)."""
    from tests.test_cli_readonly_db import cannot_write
    from yak.presenters import read_only_words
    from yak.ui.chat.panel import READ_ONLY_TOOLTIP

    folder = tmp_path / "proj"
    folder.mkdir()
    with_core(data_dir, lambda core: workspace_with_document(core, folder, "- kept as is\n"))
    database = data_dir / "yak.db"
    before = database.read_bytes()
    cannot_write(monkeypatch, tmp_path, refused_modes=())
    seen: dict[str, str] = {}

    def step() -> bool:
        window = window_showing("- kept as is\n")
        if window is None:
            return False
        banner = window.read_only_banner
        seen.update(banner=banner.text() if banner.isVisible() else "(hidden)")
        send = window.chat_panel.input.button
        seen.update(send="enabled" if send.isEnabled() else send.toolTip())
        window.quit_action.trigger()
        return True

    problems = drive(step)
    status = yak_app.run(data_dir_override=str(data_dir), workspace=str(folder))
    assert problems == []
    assert status == 0
    assert seen["banner"] == read_only_words(str(data_dir))
    assert seen["banner"].startswith("Read-only: the Yak database in ")
    assert seen["send"] == READ_ONLY_TOOLTIP  # nothing can be stored: Send says why
    assert database.read_bytes() == before

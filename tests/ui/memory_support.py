"""Helpers for the desktop UI tests: running a test body on the qasync loop, waiting for a
condition (a hang guard, not a timing assertion), the test environment, and message boxes.

The environment (:class:`Env`) is the application core from ``open_core`` on a file-backed
database, with the event bridge the window uses, and a second core on the same database standing
for another process (the command line): test setup and the checks of what is stored go through
that one, so they neither publish on the window's bus nor wait on the window's event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QMessageBox

from tests.support import ManualTimers, ModelClients, say, until, workspace_with_document
from yak.bootstrap import open_core
from yak.core import Core
from yak.domain import (
    MemoryDocument,
    Proposal,
    RefreshAttempt,
    RefreshOutcome,
    Revision,
    Workspace,
)
from yak.ui.bridge import EventBridge
from yak.ui.settings.memory_page import MemoryPage

T = TypeVar("T")


def run(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T], *, limit_s: float = 60.0
) -> T:
    """Run a test body on ``loop``, then let every task it left behind (a controller's reload
    the body did not wait for) finish before the loop stops; ``limit_s`` only stops a hung test.

    Once the loop stops, a task still pending would be stepped by pytest-qt's
    ``processEvents()`` after the test, outside any running loop, and fail with "no running
    event loop" (on a busy machine, where the task is still pending then).

    Raises:
        AssertionError: a left-behind task still runs after ``limit_s`` (named in the message).
    """

    async def body() -> T:
        async with asyncio.timeout(limit_s):
            result = await coro
        await settle(limit_s=limit_s)
        return result

    return loop.run_until_complete(body())


async def settle(*, limit_s: float = 60.0) -> None:
    """Wait until no task but the caller's runs on the loop (tasks spawned meanwhile included).

    Raises:
        AssertionError: tasks still run after ``limit_s``; the message names them.
    """
    me = asyncio.current_task()
    try:
        async with asyncio.timeout(limit_s):
            while others := [t for t in asyncio.all_tasks() if t is not me and not t.done()]:
                await asyncio.wait(others)
    except TimeoutError:
        names = sorted(t.get_name() for t in asyncio.all_tasks() if t is not me and not t.done())
        raise AssertionError(f"tasks still running after the test body: {names}") from None


class OtherProcess:
    """Another process sharing the database, such as ``yak memory set``: a core of its own on
    its own event loop in a thread. :meth:`run` blocks until a call is done, so it can be used
    before the window's loop runs and from inside a test body alike."""

    LIMIT_S = 30.0

    def __init__(self, data_dir: Path) -> None:
        self.core = open_core(data_dir)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="other-process", daemon=True
        )
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on this process's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(self.LIMIT_S)

    def close(self) -> None:
        """Close the core, then stop the loop and its thread."""
        try:
            self.run(self.core.aclose())
            self.run(self._loop.shutdown_default_executor())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(self.LIMIT_S)
            self._loop.close()


@dataclass
class Env:
    """The window's core and event bridge on a real database, another process on the same
    database, and a folder for projects.

    Attributes:
        core: the window's core (its refresh queue on ``timers``; its model clients talk to
            the fake Messages API when the test asks for ``fake_api``).
        bridge: the event bridge on the core's bus.
        other: another process on the same database (setup and checks).
        timers: the refresh queue's clock and timers, fired by hand.
        loop: the qasync loop the window runs on.
    """

    data_dir: Path
    core: Core
    bridge: EventBridge
    other: OtherProcess
    timers: ManualTimers
    clients: ModelClients
    loop: asyncio.AbstractEventLoop
    root: Path

    def folder(self, name: str) -> Path:
        """A project folder under the test's temporary directory (created)."""
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def workspace(self, name: str, content: str | None = None) -> Workspace:
        """Open (register) the folder ``name``; save ``content`` as its memory when given. Done
        by the other process: the window hears of it only by reading."""
        folder = self.folder(name)
        return self.other.run(workspace_with_document(self.other.core, folder, content or ""))

    def stored(self, workspace_id: str) -> MemoryDocument:
        """What the database holds now (read by the other process, like the CLI)."""
        return self.other.run(self.other.core.memory.read(workspace_id))

    def write_from_another_process(self, workspace_id: str, content: str) -> MemoryDocument:
        """Save ``content`` on the current version by the other process (``yak memory set``)."""
        memory = self.other.core.memory
        return self.other.run(memory.save(workspace_id, content, expected_version=None))

    def history(self, workspace_id: str) -> list[Revision]:
        """The stored revisions, newest first."""
        return self.other.run(self.other.core.memory.history(workspace_id))

    def attempts(self, workspace_id: str) -> list[RefreshAttempt]:
        """The stored refresh attempts, newest first."""
        return self.other.run(self.other.core.memory.attempts(workspace_id))

    def record_attempt(self, outcome: RefreshOutcome, *, base_version: int) -> RefreshAttempt:
        """Store a refresh attempt as a refresh in another process would."""
        memory = self.other.core.memory
        return self.other.run(memory.record_attempt(outcome, base_version=base_version))

    def propose(self, workspace_id: str, content: str, *, base_version: int = 1) -> Proposal:
        """Store a proposal of ``content`` waiting for review, as a refresh in another process
        would (one reason, no model, no conversations)."""
        return self.other.run(
            self.other.core.review.propose(
                workspace_id,
                content,
                base_version=base_version,
                reasons=("a test reason",),
                model=None,
                session_ids=(),
                watermarks={},
            )
        )

    def find(self, path: Path | str) -> Workspace | None:
        """The stored workspace of ``path``, or ``None``."""
        return self.other.run(self.other.core.workspaces.find(str(path)))

    def get(self, workspace_id: str) -> Workspace:
        """The stored workspace."""
        return self.other.run(self.other.core.workspaces.get(workspace_id))

    def say(self, workspace_id: str, *texts: str, title: str = "Chat") -> str:
        """Store a conversation (user first) in a new session of the workspace; its messages
        are not folded into memory yet. Returns the session id."""
        return say(self.other.core, workspace_id, *texts, title=title)

    def unfolded(self, workspace_id: str) -> list[Any]:
        """The workspace's messages not folded into memory yet."""
        return self.other.core.chat.conversations.unfolded_messages(workspace_id)

    def close(self) -> None:
        self.bridge.close()
        try:
            self.loop.run_until_complete(self.core.aclose())
            self.loop.run_until_complete(self.clients.aclose())
        finally:
            self.other.close()


def make_env(
    data_dir: Path, tmp_path: Path, loop: asyncio.AbstractEventLoop, timers: ManualTimers
) -> Env:
    """Build an :class:`Env` (the watcher is not started: tests call its step directly)."""
    clients = ModelClients()
    core = open_core(  # a 10 s quiet time: the panel tests count it down
        data_dir,
        clock=timers.clock,
        timer_scheduler=timers.schedule,
        model_client=clients,
        debounce_s=10,
    )
    bridge = EventBridge(core.bus)
    root = tmp_path / "projects"
    root.mkdir()
    return Env(
        data_dir=data_dir,
        core=core,
        bridge=bridge,
        other=OtherProcess(data_dir),
        timers=timers,
        clients=clients,
        loop=loop,
        root=root,
    )


def message_boxes() -> list[QMessageBox]:
    """The message boxes open now."""
    return [
        w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()
    ]


async def answer(label: str, *, containing: str = "") -> str:
    """Click ``label`` in the open message box whose text contains ``containing``; returns the
    box's text."""
    await until(
        lambda: any(containing in b.text() for b in message_boxes()),
        what=f"a message box containing {containing!r}",
    )
    box = next(b for b in message_boxes() if containing in b.text())
    text = box.text() + "\n" + box.informativeText()
    button = next(b for b in box.buttons() if b.text().replace("&", "") == label)
    button.click()
    await until(lambda: not box.isVisible(), what="the message box to close")
    return text


def lines(count: int, prefix: str = "fact") -> str:
    """A document of ``count`` lines, ending with a newline."""
    return "".join(f"- {prefix} {i}\n" for i in range(1, count + 1))


async def show(page: MemoryPage, workspace_id: str) -> None:
    """Open the page on ``workspace_id`` and wait until the editor holds it."""
    page.controller.reload()
    page.controller.show_workspace(workspace_id)
    await page.controller.tasks.drain()
    assert page.editor.workspace is not None and page.editor.workspace.id == workspace_id


def type_at_end(page: MemoryPage, qtbot, text: str) -> None:
    """Type ``text`` at the end of the editor, key by key (Return for each newline)."""
    page.editor.text_edit.moveCursor(QTextCursor.MoveOperation.End)
    for i, line in enumerate(text.split("\n")):
        if i:
            qtbot.keyClick(page.editor.text_edit, Qt.Key.Key_Return)
        if line:
            qtbot.keyClicks(page.editor.text_edit, line)

"""Helpers for the memory UI tests: running a test body on the qasync loop, waiting for a
condition (a hang guard, not a timing assertion), the test environment, and message boxes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtWidgets import QApplication, QMessageBox

from yak.db import Database, open_database
from yak.domain import MemoryDocument, Workspace
from yak.events import EventBus
from yak.memory.store import MemoryStore
from yak.ui.bridge import EventBridge
from yak.workspace.service import WorkspaceService

T = TypeVar("T")


def run(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T], *, limit_s: float = 60.0
) -> T:
    """Run a test body on ``loop``; ``limit_s`` only stops a hung test."""
    return loop.run_until_complete(asyncio.wait_for(coro, limit_s))


async def until(
    predicate: Callable[[], object], *, what: str = "the condition", limit_s: float = 20.0
) -> None:
    """Let the loop run until ``predicate()`` is true (gives up after ``limit_s``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.005)


@dataclass
class Env:
    """A real database with the services the UI uses, and two project folders."""

    data_dir: Path
    db: Database
    store: MemoryStore
    bus: EventBus
    service: WorkspaceService
    bridge: EventBridge
    root: Path

    def folder(self, name: str) -> Path:
        """A project folder under the test's temporary directory (created)."""
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def workspace(self, name: str, content: str | None = None) -> Workspace:
        """Open (register) the folder ``name``; write ``content`` as its memory when given."""
        workspace = self.store.open_workspace(str(self.folder(name)))
        if content is not None:
            current = self.store.read(workspace.id)
            self.store.write(workspace.id, content, expected_version=current.version)
        return workspace

    def stored(self, workspace_id: str) -> MemoryDocument:
        """What the database holds now (read through a second connection, like the CLI)."""
        other = open_database(self.data_dir)
        try:
            return MemoryStore(other).read(workspace_id)
        finally:
            other.close()

    def write_from_another_process(self, workspace_id: str, content: str) -> MemoryDocument:
        """Write through a second database handle, as ``yak memory set`` would."""
        other = open_database(self.data_dir)
        try:
            store = MemoryStore(other)
            current = store.read(workspace_id)
            return store.write(workspace_id, content, expected_version=current.version)
        finally:
            other.close()

    def close(self) -> None:
        self.service.close()
        self.bridge.close()
        self.db.close()


def make_env(data_dir: Path, tmp_path: Path) -> Env:
    """Build an :class:`Env` (the watcher is not started: tests call its step directly)."""
    db = open_database(data_dir)
    store = MemoryStore(db)
    bus = EventBus()
    service = WorkspaceService(store=store, db=db, bus=bus)
    bridge = EventBridge(bus)
    root = tmp_path / "projects"
    root.mkdir()
    return Env(
        data_dir=data_dir, db=db, store=store, bus=bus, service=service, bridge=bridge, root=root
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


class FakeClock:
    """Monotonic seconds that move only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ManualScheduler:
    """A queue scheduler whose timers fire when the test calls :meth:`fire`."""

    def __init__(self) -> None:
        self.timers: list[list] = []

    def __call__(self, delay_s, callback):
        entry = [delay_s, callback, False]
        self.timers.append(entry)

        class Handle:
            def cancel(self_inner) -> None:
                entry[2] = True

        return Handle()

    def fire(self) -> None:
        for entry in [t for t in self.timers if not t[2]]:
            entry[2] = True
            entry[1]()

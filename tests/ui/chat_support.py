"""Helpers for the chat UI tests: run a test body on the qasync loop (the ``qloop`` fixture of
``tests/ui/conftest.py``), wait for what the user would see without sleeping for timing (the
memory UI tests' helpers, shared), and a chat panel on the core's chat service
(:class:`Chat`, built by the ``chat`` fixture, or by :func:`chat_on` for a second window on the
same database, as after a restart)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from memory_support import run
from PySide6.QtCore import Qt

from tests.support import ModelClients, until
from yak.bootstrap import open_core
from yak.chat.service import ChatService
from yak.core import Core
from yak.domain import Workspace
from yak.ui.chat.approval import ApprovalDialog
from yak.ui.chat.controller import ChatController
from yak.ui.chat.panel import ChatPanel

__all__ = ["Chat", "chat_on", "make_chat", "run", "sent_messages", "sent_prompts"]


@dataclass
class Chat:
    """A chat panel on the core's chat service, for one workspace folder."""

    panel: ChatPanel
    controller: ChatController
    core: Core
    service: ChatService
    workspace: Workspace
    folder: Path
    statuses: list[str]
    dialogs: list[ApprovalDialog]

    def transcript(self) -> str:
        return self.panel.transcript.plain_text()

    async def send_typed(self, qtbot, prompt: str) -> None:
        """Type ``prompt`` in the box and press Enter."""
        self.panel.input.edit.setFocus()
        qtbot.keyClicks(self.panel.input.edit, prompt)
        qtbot.keyClick(self.panel.input.edit, Qt.Key.Key_Return)
        await until(lambda: self.controller.turn_running or self.statuses, what="the turn to start")

    async def finished(self, count: int = 1) -> str:
        await until(
            lambda: len(self.statuses) >= count and not self.controller.turn_running,
            what="the turn to end",
        )
        return self.statuses[count - 1]


def make_chat(qloop, qtbot, data_dir: Path, tmp_path: Path) -> Iterator[Chat]:
    """A shown ChatPanel with its controller on a workspace folder, talking to the fake API
    through the core's chat service; closed as the app does on quit (the ``chat`` fixture)."""
    folder = tmp_path / "project"
    folder.mkdir()
    with chat_on(qloop, qtbot, data_dir, folder) as chat:
        yield chat


@contextmanager
def chat_on(qloop, qtbot, data_dir: Path, folder: Path) -> Iterator[Chat]:
    """A shown ChatPanel with its controller on ``folder``, on a core of its own over the
    database in ``data_dir`` (a second one stands for the app started again), its workspace
    opened as the window does; closed as the app does on quit."""
    clients = ModelClients()
    core = open_core(data_dir, model_client=clients)
    workspace = run(qloop, core.workspaces.open(str(folder)))
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 600)
    panel.show()
    controller = ChatController(panel, core.chat, core.settings)
    statuses: list[str] = []
    dialogs: list[ApprovalDialog] = []
    controller.turn_finished.connect(statuses.append)
    controller.approval_shown.connect(dialogs.append)
    run(qloop, _open(controller, workspace))
    try:
        yield Chat(panel, controller, core, core.chat, workspace, folder, statuses, dialogs)
    finally:
        run(qloop, controller.aclose())  # as the app does on quit
        run(qloop, core.aclose())
        run(qloop, clients.aclose())


async def _open(controller: ChatController, workspace: Workspace) -> None:
    task = controller.set_workspace(workspace)
    if task is not None:
        await task


def sent_prompts(fake_api) -> list[object]:
    """The user messages of the last request the fake received, without prompt-cache marks."""
    messages = fake_api.message_requests[-1].unmarked["messages"]
    return [m["content"] for m in messages if m["role"] == "user"]


def sent_messages(fake_api) -> list[tuple[str, list[object]]]:
    """``(role, content)`` of each message of the last request, without prompt-cache marks."""
    messages = fake_api.message_requests[-1].unmarked["messages"]
    return [(m["role"], m["content"]) for m in messages]

"""The chat panel end to end: the core's ChatService and agent loop (from ``open_core``), the
real ``anthropic`` client talking to the scripted fake Messages API on 127.0.0.1, and the widgets
driven like a user.

A gated fake reply (``text(..., gate=...)``) pauses the stream so the window can be looked at
mid-reply — and Stop pressed — without timing anything.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from chat_support import run, until
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QMessageBox

from tests.support import ModelClients
from tests.support.fake_api import error, text, tool_use
from yak.bootstrap import open_core
from yak.chat.service import ChatService
from yak.core import Core
from yak.domain import Workspace
from yak.ui.chat.approval import ApprovalDialog
from yak.ui.chat.controller import ChatController
from yak.ui.chat.panel import NO_KEY_MESSAGE, ChatPanel


@dataclass
class Chat:
    """A chat panel on a real service, for one workspace folder."""

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


@pytest.fixture
def chat(qloop, qtbot, data_dir, fake_api, tmp_path, background_errors):
    """A shown ChatPanel with its controller on a workspace folder, talking to ``fake_api``
    through the core's chat service."""
    folder = tmp_path / "project"
    folder.mkdir()
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
    yield Chat(panel, controller, core, core.chat, workspace, folder, statuses, dialogs)
    run(qloop, controller.aclose())  # as the app does on quit
    run(qloop, core.aclose())
    run(qloop, clients.aclose())


async def _open(controller: ChatController, workspace: Workspace) -> None:
    task = controller.set_workspace(workspace)
    if task is not None:
        await task


def _sent_prompts(fake_api) -> list[object]:
    """The user text messages of the last request the fake received."""
    messages = fake_api.message_requests[-1].body["messages"]
    return [m["content"] for m in messages if m["role"] == "user"]


# -- sending and streaming ------------------------------------------------------------------------


def test_enter_sends_and_the_reply_streams_into_the_transcript(chat, qloop, qtbot, fake_api):
    """Enter sends the typed prompt; the first words show while the reply is still streaming
    (the button reads Stop); the whole reply, its Markdown rendered, shows when it ends; the
    session is titled from the prompt and the footer counts the tokens."""
    gate = threading.Event()
    fake_api.script(text("Hello **brave** new world.", gate=gate, pause_after=2, usage=(42, 7)))

    async def body() -> None:
        await chat.send_typed(qtbot, "Say hello")
        assert chat.panel.input.text() == ""  # the box is cleared once the turn starts
        await until(lambda: "Hello" in chat.transcript(), what="the first words")
        assert chat.controller.turn_running
        assert chat.panel.input.button.text() == "Stop"
        assert "world" not in chat.transcript()  # paused mid-stream
        gate.set()
        assert await chat.finished() == "completed"

    run(qloop, body())
    assert not chat.panel.transcript.placeholder.isVisible()
    assert "Hello brave new world." in chat.transcript()
    assert "**" not in chat.transcript()
    assert chat.transcript().startswith("Say hello")
    assert chat.panel.input.button.text() == "Send"
    run(qloop, until(lambda: chat.panel.session_titles() == ["Say hello"], what="the title"))
    assert "Last turn: 42 in · 7 out" in chat.panel.usage_label.text()
    assert _sent_prompts(fake_api) == [[{"type": "text", "text": "Say hello"}]]


def test_an_empty_conversation_says_what_the_agent_may_do(chat):
    placeholder = chat.panel.transcript.placeholder
    assert placeholder.isVisible()
    assert chat.folder.name in placeholder.text()
    assert "ask you first" in placeholder.text()
    assert chat.transcript() == ""
    assert chat.panel.usage_label.text() == ""  # no tokens used yet: nothing to count


def test_shift_enter_makes_a_new_line_in_the_prompt_sent(chat, qloop, qtbot, fake_api):
    fake_api.script(text("Two lines received."))

    async def body() -> None:
        qtbot.keyClicks(chat.panel.input.edit, "first")
        qtbot.keyClick(chat.panel.input.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
        assert chat.statuses == [] and not chat.controller.turn_running
        await chat.send_typed(qtbot, "second")
        assert await chat.finished() == "completed"

    run(qloop, body())
    assert _sent_prompts(fake_api) == [[{"type": "text", "text": "first\nsecond"}]]
    assert "Two lines received." in chat.transcript()


# -- tool calls and approval ----------------------------------------------------------------------


def test_an_allowed_write_runs_and_the_transcript_shows_it(chat, qloop, qtbot, fake_api):
    """The approval dialog shows the tool and target; Allow once writes the file; the tool call
    shows compactly with its outcome and expands to its output."""
    fake_api.script(
        tool_use("write_file", {"path": "notes.txt", "content": "remember me\n"}),
        text("I wrote notes.txt."),
    )

    async def body() -> None:
        await chat.send_typed(qtbot, "Write a note")
        await until(lambda: chat.dialogs and chat.dialogs[0].isVisible(), what="the approval")
        dialog = chat.dialogs[0]
        assert dialog.request.tool == "write_file"
        assert dialog.target.text() == "notes.txt"
        assert "remember me" in dialog.detail.toPlainText()
        assert not (chat.folder / "notes.txt").exists()  # nothing before the answer
        assert "write_file notes.txt — waiting for your approval" in chat.transcript()
        dialog.allow_once_button.click()
        assert await chat.finished() == "completed"

    run(qloop, body())
    assert (chat.folder / "notes.txt").read_text(encoding="utf-8") == "remember me\n"
    shown = chat.transcript()
    assert "✓ write_file notes.txt" in shown
    assert "I wrote notes.txt." in shown
    block = next(iter(b for b in chat.panel.transcript.items() if hasattr(b, "summary_text")))
    block.set_expanded(True)
    assert block.output_view.toPlainText().strip()


def test_a_denied_write_is_not_run_and_the_transcript_says_denied(chat, qloop, qtbot, fake_api):
    """Deny (the default button, here by Esc) leaves the folder untouched; the transcript marks
    the call denied, and a reloaded session still does."""
    fake_api.script(
        tool_use("write_file", {"path": "notes.txt", "content": "nope\n"}),
        text("Understood, I did not write it."),
    )

    async def body() -> None:
        await chat.send_typed(qtbot, "Write a note")
        await until(lambda: chat.dialogs and chat.dialogs[0].isVisible(), what="the approval")
        qtbot.keyClick(chat.dialogs[0], Qt.Key.Key_Escape)
        assert await chat.finished() == "completed"

    run(qloop, body())
    assert not (chat.folder / "notes.txt").exists()
    assert list(chat.folder.iterdir()) == []
    assert "✗ write_file notes.txt — denied by user" in chat.transcript()
    assert "Understood, I did not write it." in chat.transcript()

    messages = run(qloop, chat.service.messages(chat.controller.session_id))
    chat.panel.transcript.show_messages(messages)  # as after a restart
    assert "✗ write_file notes.txt — Denied by the user" in chat.transcript()


# -- stop, errors, retry --------------------------------------------------------------------------


def test_stop_mid_stream_keeps_the_partial_reply(chat, qloop, qtbot, fake_api):
    """Stop while the reply streams: the words already shown stay, the transcript says it
    stopped, the stored session keeps them, and the box can send again."""
    gate = threading.Event()
    fake_api.script(text("one two three four five", gate=gate, pause_after=2))

    async def body() -> None:
        await chat.send_typed(qtbot, "Count")
        await until(lambda: "one two" in chat.transcript(), what="the first words")
        qtbot.mouseClick(chat.panel.input.button, Qt.MouseButton.LeftButton)  # Stop
        assert await chat.finished() == "stopped"

    run(qloop, body())
    gate.set()
    shown = chat.transcript()
    assert "one two" in shown and "five" not in shown
    assert shown.endswith("Stopped.")
    assert chat.panel.input.button.text() == "Send"
    messages = run(qloop, chat.service.messages(chat.controller.session_id))
    assert "one two" in messages[-1].text
    chat.panel.transcript.show_messages(messages)
    assert "one two" in chat.transcript() and chat.transcript().endswith("Stopped.")


def test_esc_in_the_prompt_box_stops_the_turn(chat, qloop, qtbot, fake_api):
    gate = threading.Event()
    fake_api.script(text("alpha beta gamma", gate=gate, pause_after=1))

    async def body() -> None:
        await chat.send_typed(qtbot, "Go")
        await until(lambda: "alpha" in chat.transcript(), what="the first word")
        qtbot.keyClick(chat.panel.input.edit, Qt.Key.Key_Escape)
        assert await chat.finished() == "stopped"

    run(qloop, body())
    gate.set()
    assert "alpha" in chat.transcript() and "gamma" not in chat.transcript()


@pytest.mark.parametrize(("status", "words"), [(500, "server"), (401, "key")])
def test_a_provider_error_shows_the_banner_and_retry_recovers(
    chat, qloop, qtbot, fake_api, status, words
):
    """A failed reply shows one sentence in the banner with Retry; Retry sends the same prompt
    once more (not stored twice, not shown twice) and the reply appears."""
    fake_api.script(error(status), text("Recovered answer."))

    async def body() -> None:
        await chat.send_typed(qtbot, "Explain the build")
        assert await chat.finished() == "failed"
        assert chat.panel.error_banner.isVisible()
        sentence = chat.panel.error_banner.text()
        assert words in sentence.lower()
        assert "Traceback" not in sentence and "\n" not in sentence
        assert chat.panel.error_banner.action_button.isVisible()
        chat.panel.error_banner.action_button.click()  # Retry
        assert await chat.finished(2) == "completed"

    run(qloop, body())
    assert not chat.panel.error_banner.isVisible()
    assert "Recovered answer." in chat.transcript()
    assert chat.transcript().count("Explain the build") == 1
    assert _sent_prompts(fake_api) == [[{"type": "text", "text": "Explain the build"}]]


# -- without a key --------------------------------------------------------------------------------


async def key_checked(controller: ChatController) -> None:
    """Check the API key again, as after a change in Settings, and wait for the answer."""
    await controller.refresh_key_notice()


def test_without_a_key_the_chat_says_how_to_add_one_and_sends_nothing(
    chat, qloop, qtbot, fake_api, monkeypatch
):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    run(qloop, key_checked(chat.controller))  # the key is checked off the UI thread
    notice = chat.panel.key_notice
    assert notice.isVisible()
    assert notice.text() == NO_KEY_MESSAGE
    assert "ANTHROPIC_API_KEY" in notice.text() and "Settings > Provider" in notice.text()
    opened: list[bool] = []
    chat.controller.provider_settings_requested.connect(lambda: opened.append(True))
    notice.action_button.click()
    assert opened == [True]

    qtbot.keyClicks(chat.panel.input.edit, "Hello?")
    qtbot.keyClick(chat.panel.input.edit, Qt.Key.Key_Return)
    assert not chat.controller.turn_running
    assert chat.panel.input.text() == "Hello?"  # kept for when a key is added
    assert fake_api.message_requests == []
    assert "Hello?" not in chat.transcript()

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # the user adds a key
    run(qloop, key_checked(chat.controller))
    assert not notice.isVisible()


# -- sessions -------------------------------------------------------------------------------------


def _editor(panel: ChatPanel) -> QLineEdit:
    editors = [w for w in panel.session_list.findChildren(QLineEdit) if w.isVisible()]
    assert editors, "no title editor open"
    return editors[0]


def test_sessions_new_switch_rename_and_delete(chat, qloop, qtbot, fake_api):
    """Ctrl+N starts a new conversation; picking a session shows its messages; F2 renames it
    in place; Delete asks first and Cancel keeps it, Delete removes it and its messages."""
    fake_api.script(text("First answer."), text("Second answer."))

    async def body() -> None:
        await chat.send_typed(qtbot, "First question")
        await chat.finished()
        qtbot.keyClick(chat.panel.input.edit, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
        await until(lambda: len(chat.panel.session_titles()) == 2, what="the new session")
        assert chat.transcript() == ""
        await chat.send_typed(qtbot, "Second question")
        await chat.finished(2)
        await until(
            lambda: chat.panel.session_titles() == ["Second question", "First question"],
            what="the titles",
        )

        chat.panel.session_list.setCurrentRow(1)  # back to the first conversation
        await until(lambda: "First answer." in chat.transcript(), what="the first session")
        assert "Second answer." not in chat.transcript()

        chat.panel.session_list.setFocus()
        qtbot.keyClick(chat.panel.session_list, Qt.Key.Key_F2)
        editor = _editor(chat.panel)
        editor.selectAll()
        qtbot.keyClicks(editor, "Build questions")
        qtbot.keyClick(editor, Qt.Key.Key_Return)
        await until(
            lambda: (
                "Build questions"
                in [s.title for s in chat.service.conversations.sessions(chat.workspace.id)]
            ),
            what="the rename to be stored",
        )
        assert "Build questions" in chat.panel.session_titles()

        def confirm(button_text: str) -> None:
            box = chat.panel.confirm_delete()
            assert box is not None and "Build questions" in box.text()
            button = next(b for b in box.buttons() if b.text().replace("&", "") == button_text)
            button.click()

        await until(
            lambda: chat.panel.current_session_id() == chat.controller.session_id,
            what="the selection",
        )
        confirm("Cancel")
        assert len(chat.service.conversations.sessions(chat.workspace.id)) == 2
        confirm("Delete")
        await until(lambda: len(chat.panel.session_titles()) == 1, what="the deletion")
        assert chat.panel.session_titles() == ["Second question"]
        await until(lambda: "Second answer." in chat.transcript(), what="the other session")

    run(qloop, body())
    sessions = chat.service.conversations.sessions(chat.workspace.id)
    assert [s.title for s in sessions] == ["Second question"]


def test_a_blank_rename_keeps_the_title(chat, qloop, qtbot, fake_api):
    fake_api.script(text("Answer."))

    async def body() -> None:
        await chat.send_typed(qtbot, "Keep my title")
        await chat.finished()
        await until(lambda: chat.panel.session_titles() == ["Keep my title"], what="the title")
        chat.panel.session_list.setCurrentRow(0)
        chat.panel.begin_rename()
        editor = _editor(chat.panel)
        editor.selectAll()
        qtbot.keyClick(editor, Qt.Key.Key_Delete)
        qtbot.keyClick(editor, Qt.Key.Key_Return)

    run(qloop, body())
    assert chat.panel.session_titles() == ["Keep my title"]
    assert [s.title for s in chat.service.conversations.sessions(chat.workspace.id)] == [
        "Keep my title"
    ]


def test_the_delete_key_asks_first_and_the_question_defaults_to_cancel(
    chat, qloop, qtbot, fake_api
):
    fake_api.script(text("Answer."))

    async def body() -> None:
        await chat.send_typed(qtbot, "Do not lose me")
        await chat.finished()
        await until(lambda: chat.panel.current_session_id() is not None, what="the selection")
        chat.panel.session_list.setFocus()
        qtbot.keyClick(chat.panel.session_list, Qt.Key.Key_Delete)
        await until(
            lambda: any(
                isinstance(w, QMessageBox) and w.isVisible() for w in QApplication.topLevelWidgets()
            ),
            what="the question",
        )
        box = next(
            w
            for w in QApplication.topLevelWidgets()
            if isinstance(w, QMessageBox) and w.isVisible()
        )
        assert "Do not lose me" in box.text()
        assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
        qtbot.keyClick(box, Qt.Key.Key_Escape)
        await until(
            lambda: (
                not any(
                    isinstance(w, QMessageBox) and w.isVisible()
                    for w in QApplication.topLevelWidgets()
                )
            ),
            what="the question to close",
        )

    run(qloop, body())
    assert len(chat.service.conversations.sessions(chat.workspace.id)) == 1


def test_a_session_list_arriving_late_keeps_the_users_choice(chat, qloop, qtbot, fake_api):
    """A list refresh asked for before the user picked another session, and answered after,
    must not move the selection back (the transcript and the list would disagree)."""
    import asyncio

    fake_api.script(text("Answer one."), text("Answer two."))
    gate = asyncio.Event()
    real_sessions = chat.service.sessions

    async def slow_sessions(workspace_id: str):
        found = await real_sessions(workspace_id)
        await gate.wait()
        return found

    async def body() -> None:
        await chat.send_typed(qtbot, "Topic one")
        await chat.finished()
        qtbot.keyClick(chat.panel.input.edit, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
        await until(lambda: len(chat.panel.session_titles()) == 2, what="the new session")
        await chat.send_typed(qtbot, "Topic two")
        await chat.finished(2)
        await until(
            lambda: chat.panel.session_titles() == ["Topic two", "Topic one"], what="the titles"
        )
        chat.service.sessions = slow_sessions  # the next refresh waits for the gate
        chat.panel.session_list.setCurrentRow(0)
        chat.panel.begin_rename()  # renaming "Topic two" refreshes the list afterwards
        editor = _editor(chat.panel)
        editor.selectAll()
        qtbot.keyClicks(editor, "Topic two, renamed")
        qtbot.keyClick(editor, Qt.Key.Key_Return)
        await until(
            lambda: (
                "Topic two, renamed"
                in [s.title for s in chat.service.conversations.sessions(chat.workspace.id)]
            ),
            what="the rename to be stored",
        )
        chat.panel.session_list.setCurrentRow(1)  # the user picks "Topic one" meanwhile
        await until(lambda: "Answer one." in chat.transcript(), what="the first session")
        gate.set()
        await until(
            lambda: not any(t.get_name() == "chat-rename-session" for t in asyncio.all_tasks()),
            what="the late refresh",
        )  # the rename's task ends with its refresh
        assert chat.panel.session_list.currentItem().text() == "Topic one"
        assert chat.panel.current_session_id() == chat.controller.session_id
        assert "Answer one." in chat.transcript()

    run(qloop, body())


def test_quitting_mid_reply_stores_what_was_said_before_the_database_closes(
    chat, qloop, qtbot, fake_api
):
    """``aclose`` (the app's quit) stops the turn and waits for the agent to keep the partial
    reply, so nothing is written to a closed database."""
    gate = threading.Event()
    fake_api.script(text("first second third fourth", gate=gate, pause_after=2))

    async def body() -> None:
        await chat.send_typed(qtbot, "Go on")
        await until(lambda: "first second" in chat.transcript(), what="the first words")
        await chat.controller.aclose()
        assert not chat.controller.turn_running

    run(qloop, body())
    gate.set()
    messages = chat.service.conversations.messages(chat.controller.session_id)
    assert [m.role for m in messages] == ["user", "assistant"]
    assert "first second" in messages[-1].text and "fourth" not in messages[-1].text


def test_work_in_flight_when_the_panel_is_deleted_is_dropped(chat, qloop, qtbot, fake_api):
    """A session list still loading when the window goes away is cancelled, not applied to
    deleted widgets (``background_errors`` fails the test if a task died)."""
    import asyncio

    from PySide6.QtCore import QCoreApplication, QEvent

    gate = asyncio.Event()
    real_sessions = chat.service.sessions

    async def slow_sessions(workspace_id: str):
        found = await real_sessions(workspace_id)
        await gate.wait()
        return found

    panel = ChatPanel()  # its own panel: the fixture's stays for qtbot to close
    controller = ChatController(panel, chat.service, chat.core.settings)

    async def body() -> None:
        chat.service.sessions = slow_sessions
        task = controller.set_workspace(chat.workspace)
        await asyncio.sleep(0)
        panel.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        gate.set()
        await asyncio.gather(task, return_exceptions=True)
        assert task.cancelled()

    run(qloop, body())

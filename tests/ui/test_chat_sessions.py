"""The chat panel's conversations (sessions) end to end: new, switch, rename and delete, and
a list arriving late, on the core's ChatService (from ``open_core``) with the real
``anthropic`` client talking to the scripted fake Messages API on 127.0.0.1, the widgets
driven like a user.
"""

from __future__ import annotations

from chat_support import run
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QMessageBox

from tests.support import until
from tests.support.fake_api import text
from yak.domain import SessionOrigin
from yak.ui.chat.panel import ChatPanel


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
        # A list read before the rename may land after the edit; the rename's own reload,
        # once stored, shows the new title (on a busy machine, a moment later).
        await until(
            lambda: "Build questions" in chat.panel.session_titles(), what="the renamed title"
        )

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


def test_a_conversation_yak_ask_started_is_marked_in_the_list(chat, qloop, qtbot, fake_api):
    """A conversation started by ``yak ask`` (stored with its origin) shows in the list with
    the terminal mark and a tooltip saying so; one started in the window has neither."""
    fake_api.script(text("An answer."))

    async def body() -> None:
        await chat.send_typed(qtbot, "Typed here")
        await chat.finished()
        await chat.service.create_session(
            chat.workspace.id, "Asked from the terminal", origin=SessionOrigin.ASK
        )
        loading = chat.controller.set_workspace(chat.workspace)  # the folder opened again
        assert loading is not None
        await loading
        await until(lambda: len(chat.panel.session_titles()) == 2, what="the asked session")

    run(qloop, body())
    items = {
        chat.panel.session_list.item(i).text(): chat.panel.session_list.item(i)
        for i in range(chat.panel.session_list.count())
    }
    asked, typed = items["Asked from the terminal"], items["Typed here"]
    assert asked.toolTip() == (
        "Asked from the terminal\nStarted with 'yak ask' on the command line"
    )
    assert not asked.icon().isNull()
    assert (typed.toolTip(), typed.icon().isNull()) == ("Typed here", True)

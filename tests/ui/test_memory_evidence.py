"""Why a memory line is there, in the window ("Evidence" in docs/memory.md): hovering a line of
the memory panel, the Settings editor's line under the cursor, and the review dialog's added
lines. The rewrite and the proposal are stored by another process, as a refresh would store
them with the passages it found."""

from __future__ import annotations

from memory_support import lines, run, show
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QHelpEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QToolTip

from yak.evidence import Evidence, Speaker
from yak.held import HeldKind, HeldLine, held_line_words

UV = "- packages are managed with uv, not Poetry"
CI = "- CI runs on every push"
SAID = "We moved from Poetry to uv last week, so use uv for everything."


def _refreshed(env, workspace) -> str:
    """A refresh's rewrite adding the uv line (the user's words behind it) and the CI line
    (nothing recorded); returns the conversation's id."""
    session = env.say(workspace.id, SAID, "Noted.", title="Packaging")
    said = env.other.core.chat.conversations.messages(session)[0].id
    env.other.run(
        env.other.core.memory.apply_rewrite(
            workspace.id,
            lines(2) + UV + "\n" + CI + "\n",
            base_version=1,
            model="m",
            session_ids=(session,),
            watermarks={},
            evidence=[Evidence(UV, session, said, Speaker.USER, SAID)],
        )
    )
    return session


def test_hovering_a_refresh_line_shows_what_was_said(env, ui, qtbot, qloop):
    """The panel's hover: a typed line says only who typed it; the uv line adds the user's
    words and the conversation's title; the CI line adds "no evidence recorded"."""
    window, controller = ui
    workspace = env.workspace("proj", lines(2))
    _refreshed(env, workspace)

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        await controller.tasks.drain()
        panel = window.memory_panel
        assert "\n" not in panel.origin_at_line(0)
        assert panel.origin_at_line(0).startswith("Line 1: typed by you, v1 · ")
        first, why = panel.origin_at_line(2).split("\n")
        assert first.startswith("Line 3: added by refresh v2 from 'Packaging' · ")
        assert why == f'why: you said in "Packaging": "{SAID}"'
        assert panel.origin_at_line(3).split("\n")[1] == "why: no evidence recorded"
        # A real hover on the viewport: the same words, wrapped.
        viewport = panel.document_view.viewport()
        rect = panel.document_view.cursorRect(
            QTextCursor(panel.document_view.document().findBlockByNumber(2))
        )
        event = QHelpEvent(QEvent.Type.ToolTip, rect.center(), viewport.mapToGlobal(rect.center()))
        QApplication.sendEvent(viewport, event)
        tip = QToolTip.text()
        assert tip.startswith("Line 3: added by refresh v2")
        assert " ".join(tip.split()).endswith(" ".join(why.split()))

    run(qloop, body())


def test_the_editors_line_status_says_why_the_line_is_there(env, page, qtbot, qloop):
    """Settings › Memory: the cursor on the uv line shows the user's words; on the CI line,
    "no evidence recorded"; on a typed line, who typed it and nothing more."""
    workspace = env.workspace("proj", lines(2))
    _refreshed(env, workspace)

    async def body():
        await show(page, workspace.id)
        editor = page.editor
        cursor = editor.text_edit.textCursor()
        cursor.movePosition(cursor.MoveOperation.Start)
        editor.text_edit.setTextCursor(cursor)
        assert editor.origin_of_cursor_line().startswith("Line 1: typed by you, v1 · ")
        assert "why" not in editor.origin_of_cursor_line()
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_Down)
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_Down)
        first, why = editor.origin_of_cursor_line().split("\n")
        assert first.startswith("Line 3: added by refresh v2 from 'Packaging' · ")
        assert why == f'why: you said in "Packaging": "{SAID}"'
        qtbot.keyClick(editor.text_edit, Qt.Key.Key_Down)
        assert editor.origin_of_cursor_line().endswith("\nwhy: no evidence recorded")

    run(qloop, body())


def test_the_review_dialog_says_why_each_added_line_is_there(env, ui, qtbot, qloop):
    """A refresh's proposal adding three lines: the uv line shows the assistant's words, the
    vault line the reason that names its path, the CI line "no evidence recorded"."""
    window, controller = ui
    workspace = env.workspace("proj", lines(2))
    session = env.say(workspace.id, "Which package manager?", SAID, title="Packaging")
    said = env.other.core.chat.conversations.messages(session)[1].id
    vault = "- notes live in ~/vaults/Dev"
    held = HeldLine(vault, HeldKind.NOT_SAID, "~/vaults/Dev")
    env.other.run(
        env.other.core.review.propose(
            workspace.id,
            lines(2) + UV + "\n" + vault + "\n" + CI + "\n",
            base_version=1,
            reasons=(held_line_words(held),),
            model="m",
            session_ids=(session,),
            watermarks={},
            evidence=[Evidence(UV, session, said, Speaker.ASSISTANT, SAID)],
            held_lines=[held],
        )
    )

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        await controller._load_state(workspace.id)
        panel = window.memory_panel
        assert panel.status_label.text() == "1 change to review"
        qtbot.mouseClick(panel.action_button, Qt.MouseButton.LeftButton)
        await controller.tasks.drain()
        dialog = controller.review_dialog
        assert dialog.isVisible() and dialog.evidence_label.isVisible()
        assert dialog.evidence_label.text() == (
            "Why these lines:\n"
            f'• "{UV}": the assistant said in "Packaging": "{SAID}"\n'
            f"• \"{vault}\": '~/vaults/Dev' was not said in the conversations\n"
            f'• "{CI}": no evidence recorded'
        )
        dialog.close()

    run(qloop, body())

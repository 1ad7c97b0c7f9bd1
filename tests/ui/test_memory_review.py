"""Reviewing memory changes in the window: the panel says "1 change to review" or
"refreshed: +1 −0"; the review dialog shows the reasons on top and the coloured diff, and
Accept, Edit then accept and Reject work from the keyboard. Driven by the app controller on the
real core, the real refresher and the fake Messages API."""

from __future__ import annotations

import pytest
from memory_support import lines, run
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QHelpEvent, QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolTip

from tests.support.fake_api import text
from yak.domain import RefreshStatus, RevisionSource


def _key(dialog, key, modifier=Qt.KeyboardModifier.ControlModifier) -> None:
    """A key press delivered where the user's focus is in the dialog."""
    QTest.keyClick(dialog.focusWidget() or dialog, key, modifier)


async def _waiting(env, fake_api, controller, window, workspace, reply):
    """Open the folder, script ``reply`` and run a forced refresh; return the panel."""
    fake_api.script(text(reply))
    await controller.open_workspace(str(env.folder("proj")))
    outcome = await env.core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.NEEDS_REVIEW
    await controller.tasks.drain()
    await controller._load_state(workspace.id)
    return window.memory_panel


async def _click_action(qtbot, panel, controller):
    """Click the panel's action button (Review…, Diff); return the review dialog it opens."""
    qtbot.mouseClick(panel.action_button, Qt.MouseButton.LeftButton)
    await controller.tasks.drain()
    return controller.review_dialog


@pytest.fixture
def dropping(env):
    """A hand-written document and a reply that drops one of its lines."""
    workspace = env.workspace("proj", lines(8))
    env.say(workspace.id, "Forget fact 3.", "Ok.")
    return workspace, lines(8).replace("- fact 3\n", "")


def test_a_dropped_hand_line_waits_and_accept_from_the_keyboard_applies_it(
    env, ui, qtbot, qloop, dropping, fake_api
):
    """A refresh that drops a line you typed: the panel reads "1 change to review"; Review…
    opens the diff with the reason on top (the removed line red); Ctrl+Return accepts it."""
    window, controller = ui
    workspace, reply = dropping

    async def body():
        panel = await _waiting(env, fake_api, controller, window, workspace, reply)
        assert panel.status_label.text() == "1 change to review"
        assert panel.action_button.text() == "Review…" and panel.action_button.isVisible()
        assert env.stored(workspace.id).content == lines(8)

        dialog = await _click_action(qtbot, panel, controller)
        assert dialog.isVisible()
        assert dialog.reasons_label.text() == '• it removes or changes 1 line you wrote: "- fact 3"'
        assert ("− - fact 3", "#ffebe9") in dialog.diff_view.rows()
        assert dialog.title_label.text().startswith("A refresh proposes +0 −1 lines on version 1")

        _key(dialog, Qt.Key.Key_Return)
        await controller.tasks.drain()
        assert not dialog.isVisible()
        assert env.stored(workspace.id).content == reply
        assert env.history(workspace.id)[0].source == RevisionSource.PROPOSAL
        assert panel.document_view.toPlainText() == reply
        assert panel.status_label.text() == "up to date"

    run(qloop, body())


def test_reject_from_the_keyboard_keeps_the_document_and_the_line(
    env, ui, qtbot, qloop, dropping, fake_api
):
    """Ctrl+Delete rejects: the document stays as it was, nothing waits any more."""
    window, controller = ui
    workspace, reply = dropping

    async def body():
        panel = await _waiting(env, fake_api, controller, window, workspace, reply)
        dialog = await _click_action(qtbot, panel, controller)
        _key(dialog, Qt.Key.Key_Delete)
        await controller.tasks.drain()
        assert not dialog.isVisible()
        assert env.stored(workspace.id).content == lines(8)
        assert panel.status_label.text() == "up to date"
        assert await env.core.review.proposals(workspace.id) == []

    run(qloop, body())


def test_edit_then_accept_from_the_keyboard_stores_the_edited_text(
    env, ui, qtbot, qloop, dropping, fake_api
):
    """Ctrl+E makes the proposed text editable; what is typed is accepted with Ctrl+Return."""
    window, controller = ui
    workspace, reply = dropping

    async def body():
        panel = await _waiting(env, fake_api, controller, window, workspace, reply)
        dialog = await _click_action(qtbot, panel, controller)
        _key(dialog, Qt.Key.Key_E)
        assert dialog.editing and dialog.editor.hasFocus()
        assert dialog.accept_button.text() == "Accept &edited"
        dialog.editor.moveCursor(dialog.editor.textCursor().MoveOperation.End)
        QTest.keyClicks(dialog.editor, "- fact 3 moved here")
        _key(dialog, Qt.Key.Key_Return)
        await controller.tasks.drain()
        assert env.stored(workspace.id).content == reply + "- fact 3 moved here"
        assert "edited" in env.history(workspace.id)[0].flags

    run(qloop, body())


def test_an_applied_refresh_reads_refreshed_with_its_counts_and_diff_shows_it(
    env, ui, qtbot, qloop, fake_api
):
    """An applied refresh adding one line: "refreshed: +1 −0"; Diff shows the added line green."""
    window, controller = ui
    workspace = env.workspace("proj", lines(4))
    env.say(workspace.id, "Use ruff.", "Ok.")
    fake_api.script(text(lines(4) + "- use ruff\n"))

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        outcome = await env.core.refresh.refresh_now(workspace.id)
        assert outcome.status is RefreshStatus.APPLIED
        await controller.tasks.drain()
        await controller._load_state(workspace.id)
        panel = window.memory_panel
        assert panel.status_label.text() == "refreshed: +1 −0"
        assert panel.action_button.text() == "Diff"
        dialog = await _click_action(qtbot, panel, controller)
        assert dialog.isVisible() and dialog.accept_button.isHidden()
        assert ("+ - use ruff", "#dafbe1") in dialog.diff_view.rows()

    run(qloop, body())


def test_hovering_a_panel_line_says_where_it_came_from(env, ui, qtbot, qloop, fake_api):
    """After a refresh adds a line, hovering the panel's lines tells a typed line from the one
    the refresh added, naming its conversation."""
    window, controller = ui
    workspace = env.workspace("proj", lines(2))
    env.say(workspace.id, "Use ruff.", "Ok.", title="Set up lint")
    fake_api.script(text(lines(2) + "- use ruff\n"))

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        await env.core.refresh.refresh_now(workspace.id)
        await controller.tasks.drain()
        panel = window.memory_panel
        assert panel.origin_at_line(0).startswith("Line 1: typed by you, v1 · ")
        assert panel.origin_at_line(2).startswith(
            "Line 3: added by refresh v2 from 'Set up lint' · "
        )
        # The same through a real hover event on the document's viewport.
        viewport = panel.document_view.viewport()
        rect = panel.document_view.cursorRect(
            QTextCursor(panel.document_view.document().findBlockByNumber(2))
        )
        event = QHelpEvent(QEvent.Type.ToolTip, rect.center(), viewport.mapToGlobal(rect.center()))
        QApplication.sendEvent(viewport, event)
        assert QToolTip.text().startswith("Line 3: added by refresh v2")

    run(qloop, body())

"""The main window and its memory panel, driven by the app controller on the core from
``open_core`` and a real database; for the refresh states, the core's real refresh queue with
its timers fired by hand and the real refresher talking to the fake Messages API."""

from __future__ import annotations

import threading

import pytest
from memory_support import answer, lines, message_boxes, run
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QKeySequence

from tests.support import until
from tests.support.fake_api import error, text
from tests.support.widgets import shown_texts
from yak.domain import RefreshOutcome, RefreshStatus, RevisionSource
from yak.ui.controller import AppController
from yak.ui.main_window import MainWindow


@pytest.fixture
def ui(ui, env):
    """The shown main window and its controller (``conftest.ui``); its panel counts down on
    the queue's clock."""
    window, _controller = ui
    window.memory_panel.clock = env.timers.clock
    return ui


def test_opening_a_folder_shows_its_memory_in_the_panel(env, ui, qloop):
    """Opening a folder puts its name in the title and its document, line count, last update and
    status in the memory panel; the neighbour folder shows none of it."""
    window, controller = ui
    workspace = env.workspace("proj", lines(150))
    env.folder("proj-neighbour")

    async def body():
        opened = await controller.open_workspace(str(env.folder("proj")) + "/")
        assert opened.id == workspace.id
        panel = window.memory_panel
        assert window.windowTitle().startswith("proj — ")
        assert panel.title_label.text() == "Memory — proj"
        assert panel.document_view.toPlainText() == lines(150)
        assert panel.document_view.isReadOnly()
        assert panel.lines_label.text() == "150 / 200 lines"
        assert panel.updated_label.text() == "updated just now"
        assert panel.status_label.text() == "up to date"
        recent = [a.text() for a in window.recent_menu.actions()]
        assert str(env.folder("proj")) in recent

        await controller.open_workspace(str(env.folder("proj-neighbour")))
        assert panel.document_view.toPlainText() == ""
        assert panel.lines_label.text() == "0 / 200 lines"
        # One message for a memory never written, not also "up to date" and "never updated".
        await controller.tasks.drain()
        assert panel.placeholder_label.text().startswith("No memory yet.")
        assert (panel.status_label.text(), panel.updated_label.text()) == ("", "")

    run(qloop, body())


def test_opening_a_missing_folder_shows_a_message_and_keeps_the_window(env, ui, qloop, tmp_path):
    """A folder that does not exist is a message in the window, not a crash; the workspace shown
    before stays."""
    window, controller = ui
    env.workspace("proj", "- fact\n")

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        result = await controller.open_workspace(str(tmp_path / "gone"))
        assert result is None
        text = await answer("OK", containing="gone")
        assert "No such folder" in text or "does not exist" in text
        assert window.workspace is not None and window.workspace.name == "proj"
        assert window.memory_panel.document_view.toPlainText() == "- fact\n"

    run(qloop, body())


def test_panel_status_follows_the_refresh_queue(env, ui, qloop, fake_api):
    """The status line reads pending in N s (counting down), refreshing… while the refresh runs,
    then refused: reason with View — driven by the real queue's events. A later hand edit
    supersedes the refusal, but the conversation is still not folded in, and the line says so
    instead of "up to date"."""
    window, controller = ui
    workspace = env.workspace("proj", lines(180))
    env.say(workspace.id, "We build with make, not cmake.", "Noted: make it is.")
    gate = threading.Event()
    reply = lines(240, prefix="rewritten")  # over the ceiling, and again after the condense
    fake_api.script(text(reply, gate=gate, pause_after=2), text(reply))
    panel = window.memory_panel

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        assert panel.status_label.text() == "new conversations not folded in yet"
        assert panel.action_button.isHidden()

        env.core.refresh.enqueue(workspace.id)  # a turn completed
        assert panel.status_label.text() == "pending in 10 s"
        env.timers.now += 3.5
        panel._on_tick_timer_timeout()  # the 1 s tick, called instead of waited for
        assert panel.status_label.text() == "pending in 7 s"

        env.timers.advance(10)
        await until(lambda: panel.status_label.text() == "refreshing… 0 s", what="refreshing…")
        assert not panel.refresh_button.isEnabled()

        gate.set()
        await env.core.refresh.queue.wait_idle()
        await until(lambda: panel.status_label.text().startswith("refused:"), what="the refusal")
        await controller.tasks.drain()
        assert panel.status_label.text().startswith("refused: the reply has 240 lines")
        assert panel.action_button.text() == "View" and panel.action_button.isVisible()
        assert env.stored(workspace.id).content == lines(180)
        assert len(fake_api.message_requests) == 2

        # A later hand edit is the newest word: the refusal no longer shows.
        await env.core.memory.save(workspace.id, lines(181), expected_version=1)
        await controller.tasks.drain()
        await controller._load_state(workspace.id)
        assert panel.status_label.text() == "new conversations not folded in yet"

    run(qloop, body())


def test_a_refresh_shows_its_elapsed_seconds_and_stop_cancels_it(env, ui, qtbot, qloop, fake_api):
    """While a refresh runs the status line counts its seconds ("refreshing… 4 s") beside a
    Stop button; Stop cancels it: the status bar says so, the document and the history are
    unchanged, no attempt is recorded, the conversation is still unfolded (the line says so),
    and the next refresh reads it and applies."""
    window, controller = ui
    workspace = env.workspace("proj", lines(10))
    env.say(workspace.id, "We build with make, not cmake.", "Noted: make it is.")
    gate = threading.Event()
    fake_api.script(
        text(lines(10) + "- build with make\n", gate=gate, pause_after=2),
        text(lines(10) + "- build with make\n"),
    )
    panel = window.memory_panel

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        env.core.refresh.enqueue(workspace.id)
        env.timers.advance(10)
        await until(lambda: panel.status_label.text() == "refreshing… 0 s", what="refreshing…")
        assert panel.action_button.text() == "Stop" and panel.action_button.isVisible()
        await until(lambda: fake_api.message_requests, what="the request to the model")
        env.timers.now += 4.2
        panel._on_tick_timer_timeout()  # the 1 s tick, called instead of waited for
        assert panel.status_label.text() == "refreshing… 4 s"

        qtbot.mouseClick(panel.action_button, Qt.MouseButton.LeftButton)
        await env.core.refresh.queue.wait_idle()
        await until(
            lambda: panel.status_label.text() == "new conversations not folded in yet",
            what="the stopped refresh's line",
        )
        assert window.statusBar().currentMessage() == (
            "Refresh stopped: nothing was written; its conversations wait for the next refresh."
        )
        assert panel.refresh_button.isEnabled() and panel.action_button.isHidden()
        stored = env.stored(workspace.id)
        assert (stored.content, stored.version) == (lines(10), 1)
        assert env.attempts(workspace.id) == []
        assert len(env.core.chat.conversations.unfolded_messages(workspace.id)) == 2
        gate.set()  # the fake server's first reply may end now; nobody reads it

        outcome = await env.core.refresh.refresh_now(workspace.id)
        assert outcome.status == RefreshStatus.APPLIED
        assert env.stored(workspace.id).content == lines(10) + "- build with make\n"
        await controller.tasks.drain()

    run(qloop, body())


def test_failed_refresh_offers_retry_which_runs_it_again(env, ui, qtbot, qloop, fake_api):
    """A failed refresh reads failed: reason with Retry; Retry runs a forced refresh, whose
    outcome then shows."""
    window, controller = ui
    workspace = env.workspace("proj", lines(10))
    env.say(workspace.id, "Anything new?", "Nothing to remember.")
    fake_api.script(error(529), text(lines(10)))  # overloaded, then the same document
    panel = window.memory_panel
    server = "The server at " + fake_api.url.partition("://")[2].rstrip("/")  # not Anthropic
    overloaded = f"{server} is overloaded right now (529); try again in a few minutes."

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        outcome = await env.core.refresh.refresh_now(workspace.id)
        assert (outcome.status, outcome.reason) == (RefreshStatus.FAILED, overloaded)
        await until(lambda: panel.status_label.text().startswith("failed"), what="the failure")
        await controller.tasks.drain()
        assert panel.status_label.text() == f"failed: {overloaded}"
        assert panel.action_button.text() == "Retry" and panel.action_button.isVisible()

        qtbot.mouseClick(panel.action_button, Qt.MouseButton.LeftButton)
        await controller.tasks.drain()
        assert len(fake_api.message_requests) == 2
        assert panel.status_label.text() == "up to date"
        assert panel.action_button.isHidden()
        assert window.statusBar().currentMessage().startswith("Up to date")

    run(qloop, body())


def test_view_shows_a_refused_reply_as_a_diff_then_trim_opens_it_in_the_editor(
    env, ui, qtbot, qloop
):
    """View on a refused refresh shows the reply as a diff against the document with the reason
    on top (the editor's text untouched); Trim and save… opens Settings with the reply as
    unsaved edits (the counter red: 240 / 200); trimmed to 200 lines it saves as a hand edit."""
    window, controller = ui
    workspace = env.workspace("proj", lines(180))
    reply = lines(240, prefix="rewritten")
    outcome = RefreshOutcome(
        status=RefreshStatus.REFUSED_CEILING,
        workspace_id=workspace.id,
        version=1,
        lines=180,
        reason="over the ceiling",
        reply=reply,
    )
    env.record_attempt(outcome, base_version=1)

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        panel = window.memory_panel
        assert panel.status_label.text() == "refused: over the ceiling"
        qtbot.mouseClick(panel.action_button, Qt.MouseButton.LeftButton)
        await controller.tasks.drain()
        dialog = controller.review_dialog
        assert dialog.isVisible() and not controller.settings_dialog.isVisible()
        assert dialog.reasons_label.text() == "• over the ceiling"
        shown = dialog.diff_view.rows()
        assert ("+ - rewritten 1", "#dafbe1") in shown and ("− - fact 1", "#ffebe9") in shown
        assert dialog.accept_button.isHidden() and dialog.trim_button.isVisible()
        # The button sits in the button row, below the diff, not painted over the heading.
        trim = dialog.trim_button.geometry()
        assert not trim.intersects(dialog.title_label.geometry())
        assert trim.top() >= dialog.stack.geometry().bottom()
        assert trim.center().y() == dialog.close_button.geometry().center().y()
        qtbot.mouseClick(dialog.trim_button, Qt.MouseButton.LeftButton)
        await controller.memory_controller.tasks.drain()
        assert not dialog.isVisible()

        assert controller.settings_dialog.isVisible()
        editor = controller.memory_page.editor
        assert editor.workspace.id == workspace.id
        assert editor.text == reply
        assert editor.is_dirty()
        assert editor.counter_label.text().startswith("240 / 200 lines")
        assert "refused refresh reply" in editor.message_label.text()
        assert env.stored(workspace.id).content == lines(180)

        editor.text_edit.setPlainText(lines(200, prefix="rewritten"))
        editor.request_save()
        await controller.memory_controller.tasks.drain()
        assert env.stored(workspace.id).content == lines(200, prefix="rewritten")
        assert env.history(workspace.id)[0].source == RevisionSource.HAND
        # The panel, another view, shows what Settings saved.
        await controller.tasks.drain()
        assert panel.document_view.toPlainText() == lines(200, prefix="rewritten")
        assert panel.status_label.text() == "up to date"

    run(qloop, body())


def test_a_write_by_another_program_reaches_the_panel(env, ui, qloop):
    """The watcher's step notices a write by another process and the panel shows it."""
    window, controller = ui
    workspace = env.workspace("proj", "- old\n")

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        env.write_from_another_process(workspace.id, "- new from the CLI\n")
        assert await env.core.watcher.check_external_changes() == [workspace.id]
        await controller.tasks.drain()
        assert window.memory_panel.document_view.toPlainText() == "- new from the CLI\n"
        # Nothing new: the next step reports nothing (no duplicate event).
        assert await env.core.watcher.check_external_changes() == []
        await env.core.refresh.settle()  # the status line's reload of the new write
        assert window.memory_panel.status_label.text() == "up to date"

    run(qloop, body())


def test_edit_opens_settings_on_the_workspace_and_menus_show_shortcuts(env, ui, qtbot, qloop):
    """Edit… opens Settings › Memory on the current workspace; the menus show Ctrl+O, Ctrl+,
    and Ctrl+Q."""
    window, controller = ui
    workspace = env.workspace("proj", "- fact\n")

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        qtbot.mouseClick(window.memory_panel.edit_button, Qt.MouseButton.LeftButton)
        await controller.memory_controller.tasks.drain()
        dialog = controller.settings_dialog
        assert dialog.isVisible()
        assert dialog.stack.currentWidget() is controller.memory_page
        assert controller.memory_page.editor.workspace.id == workspace.id
        assert controller.memory_page.selected_workspace_id() == workspace.id
        shortcuts = {
            a.text().replace("&", ""): a.shortcut().toString()
            for a in (window.open_action, window.settings_action, window.quit_action)
        }
        assert shortcuts == {"Open Folder…": "Ctrl+O", "Settings…": "Ctrl+,", "Quit": "Ctrl+Q"}

    run(qloop, body())


def test_quit_with_unsaved_settings_edits_asks_first(env, ui, qloop):
    """Quitting with unsaved memory edits asks: Cancel keeps the window and the edits; Discard
    closes the window and stores nothing."""
    window, controller = ui
    workspace = env.workspace("proj", "- fact\n")
    closed = []
    window.closed.connect(lambda: closed.append(True))

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        controller.open_settings(workspace.id)
        await controller.memory_controller.tasks.drain()
        controller.memory_page.editor.text_edit.setPlainText("- unsaved\n")

        window.quit_action.trigger()
        await answer("Cancel", containing="unsaved edits")
        assert window.isVisible() and not closed
        assert controller.memory_page.editor.text == "- unsaved\n"

        window.quit_action.trigger()
        await answer("Discard", containing="unsaved edits")
        await until(lambda: closed, what="the window to close")
        assert not window.isVisible()
        assert env.stored(workspace.id).content == "- fact\n"

    run(qloop, body())


def test_dropping_a_folder_opens_it_and_a_file_is_ignored(env, ui, qloop, tmp_path):
    """A folder dropped on the window opens as the workspace; a dropped file does nothing."""
    window, controller = ui
    folder = env.folder("dropped")
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")

    def drop(path) -> QDropEvent:
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(str(path))])
        event = QDropEvent(
            QPointF(10, 10),
            Qt.DropAction.CopyAction,
            mime,
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
        )
        window.dropEvent(event)
        return event

    async def body():
        assert not drop(a_file).isAccepted()
        await controller.tasks.drain()
        assert window.workspace is None
        assert drop(folder).isAccepted()
        await controller.tasks.drain()
        assert window.workspace is not None and window.workspace.name == "dropped"
        assert not message_boxes()

    run(qloop, body())


def test_with_no_workspace_the_panel_wraps_its_hint_and_disables_refresh_and_edit(
    env, ui, qtbot, qloop
):
    """Before a folder is open the panel says how to open one, wrapped to the panel's width
    (all of it visible), and Refresh and Edit… are disabled; once a folder with an empty memory
    is open they are enabled and the hint says there is no memory yet; a document replaces it."""
    window, controller = ui
    env.folder("proj")
    panel = window.memory_panel
    window.resizeDocks([window.memory_dock], [260], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: panel.width() <= 300)

    def hint_fits() -> bool:
        label = panel.placeholder_label
        return (
            label.isVisible()
            and label.wordWrap()
            and label.geometry().right() <= panel.contentsRect().right()
            and label.heightForWidth(label.width()) <= label.height()
        )

    async def body():
        assert panel.title_label.text() == "No workspace"
        assert "File › Open Folder…" in panel.placeholder_label.text()
        assert hint_fits()
        assert not panel.document_view.isVisible()
        assert not panel.refresh_button.isEnabled()
        assert not panel.edit_button.isEnabled()

        workspace = await controller.open_workspace(str(env.folder("proj")))
        assert panel.placeholder_label.text().startswith("No memory yet.")
        assert hint_fits()
        assert panel.refresh_button.isEnabled() and panel.edit_button.isEnabled()

        await env.core.memory.save(workspace.id, "- a fact\n", expected_version=0)
        await controller.tasks.drain()
        assert panel.document_view.isVisible()
        assert not panel.placeholder_label.isVisible()
        assert panel.document_view.toPlainText() == "- a fact\n"

    run(qloop, body())


def test_help_about_names_the_version_licence_and_where_data_and_log_are(env, ui, qloop):
    """Help › About Yak shows the version, the Apache-2.0 licence, the data directory and the
    log file (what support asks for), selectable; Help › Keyboard Shortcuts lists the keys with
    what they do."""
    from yak import __version__

    window, _controller = ui
    window.set_support_paths(data_dir="/srv/yak-data", log_file="/var/log/yak/yak.log")
    menus = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert menus == ["File", "Edit", "Conversation", "Memory", "View", "Help"]

    async def body():
        window.about_action.trigger()
        text = await answer("OK", containing=f"Yak {__version__}")
        assert "Licence: Apache-2.0" in text
        assert "Data directory: /srv/yak-data" in text
        assert "Log file: /var/log/yak/yak.log" in text

        window.shortcuts_action.trigger()
        await until(
            lambda: window.shortcuts_box is not None and window.shortcuts_box.isVisible(),
            what="the shortcuts box",
        )
        box = window.shortcuts_box
        assert box.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
        shown = box.text()
        for keys, what in [
            ("Ctrl+O", "Open a project folder"),
            ("Ctrl+,", "Settings"),
            ("Ctrl+Shift+M", "Show or hide the memory panel"),
            ("Ctrl+S", "Save the memory in Settings › Memory"),
            ("Ctrl+Q", "Quit"),
        ]:
            assert f"<b>{keys}</b></td><td>{what}</td>" in shown
        box.done(0)

    run(qloop, body())


def test_a_new_version_replaces_a_stale_refresh_verdict_in_the_status_bar(env, ui, qloop):
    """After a refused refresh said so in the status bar, a hand save makes that sentence
    stale: the status bar now names the new version instead."""
    window, controller = ui
    workspace = env.workspace("proj", lines(20))

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        window.show_status("refused_ceiling: the reply has 240 lines", timeout_ms=30000)
        document = await env.core.memory.read(workspace.id)
        await env.core.memory.save(workspace.id, lines(21), expected_version=document.version)
        await controller.tasks.drain()
        assert window.statusBar().currentMessage() == (
            f"Memory updated to version {document.version + 1} (hand edit)."
        )

    run(qloop, body())


def test_a_folder_opening_is_named_from_the_first_paint_then_its_memory_fills_in(env, qtbot, qloop):
    """A folder given on the command line: before the core has opened it, the shown window
    already names it (title, name and path in the chat area) and says the conversations and the
    memory are loading, never "Open a project folder"; the controller built around it keeps
    those until the workspace is set, then the chat and the memory panel show it."""
    workspace = env.workspace("proj", "- from the first paint\n")
    window = MainWindow()
    qtbot.addWidget(window)
    window.show_opening(workspace.path)
    window.show()
    qtbot.waitExposed(window)

    def assert_opening() -> None:
        texts = shown_texts(window)
        assert window.windowTitle() == f"proj — {workspace.path} — Yak"
        assert f"proj\n{workspace.path}\nLoading the conversations…" in texts
        assert "Memory — proj\nLoading the memory…" in texts
        assert not any("Open a project folder" in t or "No folder is open" in t for t in texts)

    assert_opening()
    controller = AppController(window=window, core=env.core, bridge=env.bridge)
    assert_opening()  # the panels are built, still behind the loading labels

    async def body():
        await controller.start(workspace.path)
        panel = window.memory_panel
        assert window.opening is None
        assert panel.isVisible() and window.chat_panel.isVisible()
        assert panel.title_label.text() == "Memory — proj"
        assert panel.document_view.toPlainText() == "- from the first paint\n"
        assert not any("Loading" in t for t in shown_texts(window))
        await controller.aclose()

    run(qloop, body())
    window.close_guard = None


def test_a_folder_that_cannot_be_opened_goes_back_to_the_open_a_folder_hint(
    env, qtbot, qloop, tmp_path
):
    """A folder given on the command line that does not exist is named while the core opens,
    then a message says what is wrong and the window shows how to open a folder (title "Yak",
    the memory panel's hint), not "loading…" forever."""
    missing = str(tmp_path / "gone")
    window = MainWindow()
    qtbot.addWidget(window)
    window.show_opening(missing)
    window.show()
    controller = AppController(window=window, core=env.core, bridge=env.bridge)

    async def body():
        await controller.start(missing)
        text = await answer("OK", containing="gone")
        assert "gone" in text
        texts = shown_texts(window)
        assert window.opening is None and window.workspace is None
        assert window.windowTitle() == "Yak"
        assert not any("Loading" in t for t in texts)
        assert window.memory_panel.isVisible()
        assert any(t.startswith("No folder is open.") for t in texts)
        await controller.aclose()

    run(qloop, body())
    window.close_guard = None


def test_the_edit_menu_acts_on_the_focused_text_field(qtbot, tmp_path):
    """Edit › Select All, Cut, Paste, Undo and Copy work on the field that has the focus (here
    a text box in the window), with the platform's keys shown; on a read-only field the
    commands that change text are disabled when the menu opens."""
    from datetime import UTC, datetime

    from PySide6.QtWidgets import QApplication, QPlainTextEdit

    from yak.domain import Workspace

    window = MainWindow()
    qtbot.addWidget(window)
    box = QPlainTextEdit()
    window.set_chat_panel(box)
    # The chat area shows while a workspace is shown.
    window.set_workspace(Workspace(id="w", path=str(tmp_path), created_at=datetime.now(UTC)))
    window.show()
    qtbot.waitExposed(window)
    box.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is box)
    qtbot.keyClicks(box, "a note to move")
    titles = [a.text() for a in window.edit_menu.actions() if not a.isSeparator()]
    assert titles == ["&Undo", "&Redo", "Cu&t", "&Copy", "&Paste", "Select &All"]
    assert window.edit_actions["copy"].shortcut() == QKeySequence(QKeySequence.StandardKey.Copy)

    window.edit_actions["selectAll"].trigger()
    window.edit_actions["cut"].trigger()
    assert box.toPlainText() == ""
    assert QApplication.clipboard().text() == "a note to move"
    window.edit_actions["paste"].trigger()
    window.edit_actions["paste"].trigger()
    assert box.toPlainText() == "a note to movea note to move"
    window.edit_actions["undo"].trigger()
    assert box.toPlainText() == "a note to move"
    window.edit_actions["redo"].trigger()
    assert box.toPlainText() == "a note to movea note to move"

    box.setReadOnly(True)
    window.edit_menu.aboutToShow.emit()
    enabled = {name: action.isEnabled() for name, action in window.edit_actions.items()}
    assert enabled == {
        "undo": False,
        "redo": False,
        "cut": False,
        "copy": True,
        "paste": False,
        "selectAll": True,
    }


def test_leaving_a_conversation_lets_its_waiting_refresh_run_soon(env, ui, qloop):
    """A refresh waiting for the conversation to go quiet (two minutes) runs a few seconds
    after the person starts a new conversation (Conversation › New): they have left the one
    it folds ("Idle and cost" in docs/refresh.md)."""
    window, controller = ui
    workspace = env.workspace("proj", "- fact\n")
    env.say(workspace.id, "Use ninja.", "Ok.")
    queue = env.core.refresh.queue
    queue.set_debounce(120)

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        await until(lambda: controller.chat_controller.session_id is not None, what="a session")
        await controller.chat_controller.tasks.drain()
        queue.enqueue(workspace.id)
        assert queue.state(workspace.id).due_in == pytest.approx(120)
        controller.chat_panel.new_action.trigger()
        await until(
            lambda: (queue.state(workspace.id).due_in or 999) <= 10,
            what="the refresh brought forward",
        )
        await controller.chat_controller.tasks.drain()

    run(qloop, body())


def test_open_recent_says_which_folders_have_changes_waiting_for_you(env, ui, qloop):
    """File › Open Recent, the window's way to switch workspaces, names the changes waiting for
    review in a folder other than the open one ("— 1 change waiting for you"), not in a
    folder without any, and follows when the change is decided."""
    window, controller = ui
    waiting = env.workspace("waiting", "- a\n")
    env.workspace("plain", "- b\n")
    proposal = env.propose(waiting.id, "- a\n- a2\n")

    def recent() -> list[str]:
        return [a.text() for a in window.recent_menu.actions()]

    async def body():
        await controller.open_workspace(str(env.folder("waiting")))
        await controller.open_workspace(str(env.folder("plain")))
        assert recent() == [
            str(env.folder("plain")),
            f"{env.folder('waiting')} — 1 change waiting for you",
        ]
        await env.core.review.reject(waiting.id, proposal.id)
        await until(lambda: str(env.folder("waiting")) in recent(), what="the menu to follow")
        await controller.tasks.drain()

    run(qloop, body())

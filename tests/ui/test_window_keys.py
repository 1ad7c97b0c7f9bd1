"""The window as a newcomer first uses it: where the cursor is after a folder opens, what
happens to text typed while it loads, the keys of the conversation (F2, Ctrl+L, Esc), the
Conversation and Memory menus, a start without a folder (the last workspace reopens, or the
recent ones are offered) and a workspace already open in another window. Widget texts, the
focus widget and what is stored."""

from __future__ import annotations

from memory_support import run
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit

from tests.support import until
from tests.support.fake_api import hang, text
from tests.support.widgets import shown_texts
from yak.ui.chat.controller import STOPPED_SENTENCE
from yak.ui.controller import AppController
from yak.ui.main_window import MainWindow


async def focused(widget, what: str) -> None:
    await until(lambda: QApplication.focusWidget() is widget, what=what)


def activate(qtbot, window: MainWindow) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)


def test_opening_a_folder_puts_the_cursor_in_the_chat_box(env, ui, qloop, qtbot):
    """After File › Open Folder… the first thing typed lands in the chat's prompt box."""
    window, controller = ui
    env.workspace("proj")
    activate(qtbot, window)
    window.menuBar().setFocus()  # the focus is elsewhere before the folder opens

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        edit = window.chat_panel.input.edit
        await focused(edit, "the prompt box to get the focus")
        qtbot.keyClicks(QApplication.focusWidget(), "How do we build?")
        assert edit.toPlainText() == "How do we build?"
        await controller.tasks.drain()

    run(qloop, body())


def test_text_typed_while_the_folder_opens_is_kept_in_the_prompt_box(env, qtbot, qloop):
    """While "Loading the conversations…" shows, a prompt box already takes the keys (Enter
    sends nothing yet); once the workspace shows, the chat's prompt box holds the text, with
    the cursor in it."""
    workspace = env.workspace("proj", "- a fact\n")
    window = MainWindow()
    qtbot.addWidget(window)
    window.show_opening(workspace.path)
    window.show()
    activate(qtbot, window)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.early_prompt)
    assert window.early_prompt.placeholderText().startswith("Type your question")
    qtbot.keyClicks(window.early_prompt, "How do we")
    qtbot.keyClick(window.early_prompt, Qt.Key.Key_Return)  # nothing to send to yet
    qtbot.keyClicks(window.early_prompt, " build?")
    controller = AppController(window=window, core=env.core, bridge=env.bridge)

    async def body():
        await controller.start(workspace.path)
        edit = window.chat_panel.input.edit
        assert edit.toPlainText() == "How do we build?"
        assert not window.early_prompt.isVisible()
        await focused(edit, "the prompt box to get the focus")
        assert edit.textCursor().position() == len("How do we build?")
        await controller.aclose()

    run(qloop, body())
    window.close_guard = None


def test_f2_in_the_prompt_box_renames_and_the_title_is_not_sent(env, ui, qloop, qtbot):
    """F2 typed in the prompt box opens the conversation's title for editing; the title typed
    then renames it, and the prompt box keeps its draft (no message is sent)."""
    window, controller = ui
    workspace = env.workspace("proj")
    session_id = env.say(workspace.id, "How do we build?", "With make.", title="Chat")
    activate(qtbot, window)

    async def body():
        await controller.open_workspace(workspace.path)
        await controller.chat_controller.tasks.drain()
        panel = window.chat_panel
        edit = panel.input.edit
        await focused(edit, "the prompt box")
        qtbot.keyClicks(edit, "draft")
        qtbot.keyClick(edit, Qt.Key.Key_F2)
        editors = [w for w in panel.session_list.findChildren(QLineEdit) if w.isVisible()]
        assert len(editors) == 1, "F2 opened no title editor"
        editors[0].selectAll()
        qtbot.keyClicks(editors[0], "Build notes")
        qtbot.keyClick(editors[0], Qt.Key.Key_Return)
        await until(
            lambda: (
                [s.title for s in env.other.core.chat.conversations.sessions(workspace.id)]
                == ["Build notes"]
            ),
            what="the rename to be stored",
        )
        await controller.chat_controller.tasks.drain()
        assert panel.session_titles() == ["Build notes"]
        assert edit.toPlainText() == "draft"
        stored = env.other.run(env.other.core.chat.messages(session_id))
        assert [m.text for m in stored] == ["How do we build?", "With make."]

    run(qloop, body())


def test_ctrl_l_puts_the_cursor_in_the_prompt_box_and_is_listed(env, ui, qloop, qtbot):
    """Ctrl+L from the conversations list goes back to the prompt box; Help › Keyboard
    Shortcuts lists it."""
    window, controller = ui
    env.workspace("proj")
    activate(qtbot, window)

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        panel = window.chat_panel
        panel.session_list.setFocus()
        await focused(panel.session_list, "the conversations list")
        qtbot.keyClick(panel.session_list, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
        await focused(panel.input.edit, "the prompt box")
        await controller.tasks.drain()

    run(qloop, body())
    assert ("Ctrl+L", "Go to the message box") in window.shortcuts()


def test_the_conversation_and_memory_menus_hold_their_commands_with_keys(env, ui, qloop):
    """New, Rename, Delete… and Go to the message box are in Conversation; Refresh, Review…,
    History… and Edit in Settings… in Memory, disabled until a workspace is open."""
    window, controller = ui

    def entries(menu):
        return [
            (a.text().replace("&", ""), a.shortcut().toString())
            for a in menu.actions()
            if not a.isSeparator()
        ]

    assert entries(window.conversation_menu) == [
        ("New Conversation", "Ctrl+N"),
        ("Rename Conversation", "F2"),
        ("Delete Conversation…", "Del"),
        ("Go to the Message Box", "Ctrl+L"),
    ]
    assert entries(window.memory_menu) == [
        ("Refresh Now", "Ctrl+R"),
        ("Review Waiting Change…", "Ctrl+Shift+R"),
        ("History…", "Ctrl+H"),
        ("Edit in Settings…", ""),
    ]
    assert not any(a.isEnabled() for a in window.memory_menu.actions())
    env.workspace("proj", "- one\n")

    async def body():
        await controller.open_workspace(str(env.folder("proj")))
        assert all(a.isEnabled() for a in window.memory_menu.actions())
        window.review_action.trigger()
        await controller.tasks.drain()
        assert window.statusBar().currentMessage() == "No change waits for review."
        window.history_action.trigger()
        await until(
            lambda: (
                controller.memory_controller.history_dialog is not None
                and controller.memory_controller.history_dialog.isVisible()
            ),
            what="the history dialog",
        )
        assert controller.settings_dialog.isVisible()
        await controller.memory_controller.tasks.drain()
        controller.memory_controller.history_dialog.close()

    run(qloop, body())


def test_esc_puts_the_question_back_and_retry_sends_it(chat, qloop, qtbot, fake_api):
    """Esc stops a reply that never comes: the question is back in the prompt box, the banner
    says so with Retry, and Retry sends it again (the box empties, the answer shows)."""
    fake_api.script(hang(), text("Here it is."))

    async def body() -> None:
        await chat.send_typed(qtbot, "Anyone there?")
        await until(lambda: fake_api.message_requests, what="the request")
        assert chat.panel.input.text() == ""
        qtbot.keyClick(chat.panel.input.edit, Qt.Key.Key_Escape)
        assert await chat.finished() == "stopped"
        assert chat.panel.input.text() == "Anyone there?"
        assert chat.panel.error_banner.isVisible()
        assert chat.panel.error_banner.text() == STOPPED_SENTENCE
        assert chat.panel.error_banner.action_button.text() == "Retry"
        assert chat.panel.error_banner.action_button.isVisible()
        chat.panel.error_banner.action_button.click()
        assert await chat.finished(2) == "completed"
        assert chat.panel.input.text() == ""
        assert chat.transcript().endswith("Here it is.")
        assert not chat.panel.error_banner.isVisible()

    run(qloop, body())


def test_a_start_without_a_folder_reopens_the_last_workspace(env, qtbot, qloop):
    """``yak`` alone opens the most recently opened workspace, not an empty window saying
    "Ask about this workspace…"."""
    env.workspace("older")
    last = env.workspace("last", "- the last one\n")
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    controller = AppController(window=window, core=env.core, bridge=env.bridge)

    async def body():
        await controller.start(None)
        assert window.workspace is not None and window.workspace.id == last.id
        assert window.windowTitle() == f"last — {last.path} — Yak"
        assert window.memory_panel.document_view.toPlainText() == "- the last one\n"
        await controller.aclose()

    run(qloop, body())
    window.close_guard = None


def test_without_a_workspace_the_window_offers_the_recent_folders(env, qtbot, qloop):
    """When the last workspace cannot be reopened (here: open in another window), the chat
    area says how to open a folder and lists the recent ones as links; no prompt box says
    "Ask about this workspace…"; a link opens its folder."""
    proj = env.workspace("proj")
    first_window = MainWindow()
    qtbot.addWidget(first_window)
    first = AppController(window=first_window, core=env.core, bridge=env.bridge)
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    second = AppController(window=window, core=env.core, bridge=env.bridge)

    async def body():
        assert await first.open_workspace(proj.path) is not None
        await second.start(None)
        assert window.workspace is None
        assert not window.chat_panel.isVisible()
        texts = shown_texts(window)
        assert any(
            t.startswith("Open a project folder to start")
            and f"Recent folders\nproj — {proj.path}" in t
            for t in texts
        ), texts
        await first.aclose()  # the first window quits: the folder is free
        window.placeholder.linkActivated.emit(window.placeholder.text().split('"')[1])
        await until(lambda: window.workspace is not None, what="the recent folder to open")
        assert window.workspace.id == proj.id
        assert window.chat_panel.isVisible()
        await second.aclose()

    run(qloop, body())
    window.close_guard = first_window.close_guard = None


def test_a_workspace_open_in_another_window_brings_that_window_to_the_front(env, qtbot, qloop):
    """Two windows do not show the same workspace side by side: opening it in the second
    brings the first to the front (it becomes the active window), the second's status bar says
    so and it keeps what it showed; once the first lets go, it opens."""
    proj = env.workspace("proj")
    other = env.workspace("other")
    windows, controllers = [], []
    for _ in range(2):
        window = MainWindow()
        qtbot.addWidget(window)
        windows.append(window)
        controllers.append(AppController(window=window, core=env.core, bridge=env.bridge))
    first, second = controllers

    async def body():
        for window in windows:
            window.show()
        await first.open_workspace(proj.path)
        await second.open_workspace(other.path)
        windows[1].activateWindow()
        await until(windows[1].isActiveWindow, what="the second window to be active")
        assert await second.open_workspace(proj.path) is None
        await until(windows[0].isActiveWindow, what="the first window to come to the front")
        assert windows[1].error_box is None
        assert windows[1].statusBar().currentMessage() == (
            f"{proj.path} is open in another Yak window, now in front."
        )
        assert windows[1].workspace.id == other.id
        assert await first.open_workspace(other.path) is None  # the second holds it
        await until(windows[1].isActiveWindow, what="the second window to come to the front")
        await second.aclose()  # the second window quits and lets go
        opened = await first.open_workspace(other.path)
        assert opened is not None and opened.id == other.id
        await first.aclose()

    run(qloop, body())
    for window in windows:
        window.close_guard = None


def test_a_workspace_held_by_a_window_that_does_not_answer_is_said_in_a_sentence(
    env, data_dir, qtbot, qloop
):
    """A workspace whose lock is held by a window that cannot be reached (an older Yak, a
    window stuck): the second window says where it is open and keeps what it showed."""
    from PySide6.QtCore import QLockFile

    proj = env.workspace("proj")
    (data_dir / "windows").mkdir(exist_ok=True)
    held = QLockFile(str(data_dir / "windows" / f"{proj.id}.lock"))
    assert held.tryLock(0)
    window = MainWindow()
    qtbot.addWidget(window)
    controller = AppController(window=window, core=env.core, bridge=env.bridge)

    async def body():
        assert await controller.open_workspace(proj.path) is None
        assert window.error_box is not None
        assert window.error_box.text() == (
            f"{proj.path} is already open in another Yak window. Switch to that window, or "
            "close it and open the folder here."
        )
        assert window.workspace is None
        window.error_box.close()
        await controller.aclose()

    try:
        run(qloop, body())
    finally:
        held.unlock()
        window.close_guard = None

"""The main window's layout across restarts: the saved geometry and dock state are restored
in-process from a sandboxed QSettings file, and the widths the user would see are asserted."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLabel, QTextEdit

from tests.support.widgets import deliver_posted_events
from yak.domain import Workspace
from yak.ui.chat.panel import ChatPanel
from yak.ui.main_window import (
    DOCK_SHARE,
    MAX_DOCK_SHARE,
    MIN_CHAT_WIDTH,
    MIN_DOCK_WIDTH,
    MainWindow,
)
from yak.ui.memory_panel import MemoryPanel


@pytest.fixture
def ini(tmp_path):
    """Where the window state is remembered (a file of the test's own)."""
    return str(tmp_path / "window.ini")


def start(ini: str, qtbot) -> MainWindow:
    """What the app does on start: the window, shown, then the memory panel and the chat."""
    window = MainWindow(geometry_store=QSettings(ini, QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    deliver_posted_events()
    window.set_memory_panel(MemoryPanel(window.memory_dock))  # as the controller does
    window.set_chat_panel(QTextEdit())
    # The chat takes the central area while a workspace is shown.
    window.set_workspace(Workspace(id="w", path=ini, created_at=datetime.now(UTC)))
    deliver_posted_events()
    return window


def quit_window(window: MainWindow) -> None:
    window.close()
    deliver_posted_events()


def widths(window: MainWindow) -> tuple[int, int, int]:
    return window.width(), window.memory_dock.width(), window.central_stack.width()


def assert_sane(window: MainWindow) -> None:
    total, dock, chat = widths(window)
    assert dock <= MAX_DOCK_SHARE * total, widths(window)
    assert chat >= MIN_CHAT_WIDTH, widths(window)
    assert window.chat_panel.width() == chat  # the chat panel is what the user sees there


def test_first_run_then_restarts_keep_the_chat_column_wide(ini, qtbot):
    """Start from a clean state, quit, start again (twice): the chat keeps most of the width
    and the dock the width it had on the first run."""
    first = start(ini, qtbot)
    assert_sane(first)
    first_dock = first.memory_dock.width()
    quit_window(first)

    for _ in range(2):
        again = start(ini, qtbot)
        assert_sane(again)
        if again.width() == first.width():  # the platform restored the same window size
            assert abs(again.memory_dock.width() - first_dock) <= 2
        quit_window(again)


def test_a_saved_layout_where_the_dock_crowds_the_chat_is_put_back_to_its_share(ini, qtbot):
    """A remembered dock over 45% of the window is resized to its first-run share (30%)."""
    first = start(ini, qtbot)
    first.resizeDocks([first.memory_dock], [first.width() - 150], Qt.Orientation.Horizontal)
    deliver_posted_events()
    assert first.central_stack.width() < MIN_CHAT_WIDTH  # the state saved is the broken one
    quit_window(first)

    again = start(ini, qtbot)
    assert_sane(again)
    share = min(
        max(MIN_DOCK_WIDTH, int(again.width() * DOCK_SHARE)), int(again.width() * MAX_DOCK_SHARE)
    )
    assert abs(again.memory_dock.width() - share) <= 2


def test_a_saved_layout_with_a_sane_dock_is_kept(ini, qtbot):
    """The negative beside the positive: a dock the user made wider, but within 45%, stays."""
    first = start(ini, qtbot)
    first.resize(1200, 780)
    deliver_posted_events()
    first.resizeDocks([first.memory_dock], [480], Qt.Orientation.Horizontal)
    deliver_posted_events()
    total, dock, _chat = widths(first)
    assert 470 <= dock <= 490 and dock <= MAX_DOCK_SHARE * total
    quit_window(first)

    again = start(ini, qtbot)
    if again.width() == total:
        assert abs(again.memory_dock.width() - dock) <= 2
    assert_sane(again)


def test_narrow_then_wide_gives_the_growth_to_the_chat_not_the_dock(ini, qtbot):
    """Resizing the window narrow and wide again: the dock keeps its width (it neither stays
    squeezed nor takes the growth); the chat takes the stretch."""
    window = start(ini, qtbot)
    window.resize(1200, 780)
    deliver_posted_events()
    dock = window.memory_dock.width()
    window.resize(800, 780)
    deliver_posted_events()
    window.resize(1300, 780)
    deliver_posted_events()
    total, dock_after, chat = widths(window)
    assert total == 1300
    assert abs(dock_after - dock) <= 2
    assert chat >= total - dock_after - 20


def test_at_1000_by_650_the_chat_column_is_wider_than_the_memory_panel(ini, qtbot):
    """On a 1000 × 650 window with the real chat panel, the chat's own column (beside its
    conversations list) is wider than the memory panel, and a code block in a reply is as wide
    as that column and scrolls sideways instead of being cut."""
    window = MainWindow(geometry_store=QSettings(ini, QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.resize(1000, 650)
    window.show()
    deliver_posted_events()
    window.set_memory_panel(MemoryPanel(window.memory_dock))  # as the controller does
    chat = ChatPanel()
    window.set_chat_panel(chat)
    window.set_workspace(Workspace(id="w", path=ini, created_at=datetime.now(UTC)))
    deliver_posted_events()
    assert window.width() == 1000
    assert window.memory_dock.width() < chat.transcript.width(), (
        window.memory_dock.width(),
        chat.transcript.width(),
    )
    long_line = "x = " + " + ".join(f"value_{i}" for i in range(60))
    chat.transcript.append_text(f"Here:\n\n```python\n{long_line}\n```\n\nDone.")
    chat.transcript.end_turn()
    deliver_posted_events()
    block = next(b for b in chat.transcript.items() if "value_59" in b.toPlainText())
    assert block.width() <= chat.transcript.viewport().width()
    bar = block.horizontalScrollBar()
    assert block.scrolls_sideways() and bar.isVisible() and bar.maximum() > 0
    # The bar sits under the text: the block is tall enough for both.
    assert block.viewport().height() >= block.document().size().height() - 1


def test_the_memory_dock_comes_back_where_the_user_left_it(ini, qtbot):
    """Moved to the left, then closed: the next start shows it on the left, closed; opened
    again from View › Memory Panel it is there, beside the chat."""
    first = start(ini, qtbot)
    assert first.dockWidgetArea(first.memory_dock) == Qt.DockWidgetArea.RightDockWidgetArea
    first.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, first.memory_dock)
    deliver_posted_events()
    first.memory_dock.close()
    quit_window(first)

    again = start(ini, qtbot)
    assert again.dockWidgetArea(again.memory_dock) == Qt.DockWidgetArea.LeftDockWidgetArea
    assert not again.memory_dock.isVisible()
    again.memory_dock.toggleViewAction().trigger()
    deliver_posted_events()
    assert again.memory_dock.isVisible()
    assert again.memory_dock.geometry().right() < again.centralWidget().x()
    assert_sane(again)


def test_a_saved_state_without_the_dock_docks_it_on_the_right(ini, tmp_path, qtbot):
    """A state saved by a window that had no memory dock (an older layout): the dock is put on
    the right, as on a first run."""
    from PySide6.QtWidgets import QMainWindow

    other = QMainWindow()
    qtbot.addWidget(other)
    store = QSettings(ini, QSettings.Format.IniFormat)
    store.setValue("main_window/state", other.saveState())
    store.sync()

    window = start(ini, qtbot)
    assert window.dockWidgetArea(window.memory_dock) == Qt.DockWidgetArea.RightDockWidgetArea
    assert window.memory_dock.isVisible()
    assert_sane(window)


def test_a_dock_above_the_chat_never_counts_as_crowding_it(ini, qtbot):
    """Docked at the top, the panel spans the chat's columns: however wide, it leaves the chat
    its width, so it is not resized (only a dock beside the chat can crowd it)."""
    window = start(ini, qtbot)
    window.addDockWidget(Qt.DockWidgetArea.TopDockWidgetArea, window.memory_dock)
    deliver_posted_events()
    assert window.memory_dock.width() > MAX_DOCK_SHARE * window.width()
    assert not window.memory_dock_crowds_chat()
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, window.memory_dock)
    window.resizeDocks([window.memory_dock], [window.width() - 150], Qt.Orientation.Horizontal)
    deliver_posted_events()
    assert window.memory_dock_crowds_chat()  # the positive beside the negative


def test_a_returning_user_first_sees_the_folder_loading_beside_the_memory_dock(
    ini, tmp_path, qtbot
):
    """``yak DIR`` after an earlier session: the window, as first shown, names the folder and
    says its memory is loading, in the memory dock beside the chat (where the user left it),
    never the open-a-folder hint."""
    quit_window(start(ini, qtbot))
    folder = str(tmp_path / "proj")

    window = MainWindow(geometry_store=QSettings(ini, QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show_opening(folder)
    window.show()
    qtbot.waitExposed(window)

    labels = [label.text() for label in window.findChildren(QLabel) if label.isVisible()]
    assert window.windowTitle() == f"proj — {folder} — Yak"
    assert any("Loading the memory…" in text for text in labels)
    assert not any("Open a project folder" in text for text in labels)
    dock = window.memory_dock
    assert dock.isVisible()
    assert dock.geometry().left() > window.centralWidget().geometry().right()

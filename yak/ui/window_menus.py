"""The main window's menus: File, Edit (whose commands act on whichever text field has the
focus), Memory, View and Help, and the boxes of the Help menu (Keyboard Shortcuts, About Yak).
Each menu emits the window's intent signals or calls the slots it is given."""

from __future__ import annotations

import functools
import html
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, QUrl, SignalInstance, qVersion
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QMainWindow,
    QMenu,
    QMessageBox,
    QWidget,
)

from yak import __version__
from yak.ui import dialogs
from yak.ui.chat.input import FOCUS_INPUT_SHORTCUT
from yak.ui.layout import create_action

if TYPE_CHECKING:
    from yak.domain import Workspace

SETTINGS_SHORTCUT = "Ctrl+,"
REFRESH_SHORTCUT = "Ctrl+R"
REVIEW_SHORTCUT = "Ctrl+Shift+R"
HISTORY_SHORTCUT = "Ctrl+H"
NO_WORKSPACE_TEXT = (
    "Open a project folder to start: File › Open Folder… (Ctrl+O), or drop a folder here.\n\n"
    "The chat with the agent appears here."
)

LICENCE = "Apache-2.0"

# The Edit menu: (the text widgets' method, the label, the key), None for a separator.
EDIT_ACTIONS: tuple[tuple[str, str, QKeySequence.StandardKey] | None, ...] = (
    ("undo", "&Undo", QKeySequence.StandardKey.Undo),
    ("redo", "&Redo", QKeySequence.StandardKey.Redo),
    None,
    ("cut", "Cu&t", QKeySequence.StandardKey.Cut),
    ("copy", "&Copy", QKeySequence.StandardKey.Copy),
    ("paste", "&Paste", QKeySequence.StandardKey.Paste),
    None,
    ("selectAll", "Select &All", QKeySequence.StandardKey.SelectAll),
)
_CHANGES_TEXT = frozenset({"undo", "redo", "cut", "paste"})


def add_file_menu(
    window: QMainWindow,
    *,
    open_folder: Callable[[], object],
    settings: SignalInstance,
    quit_window: Callable[[], object],
) -> tuple[QAction, QMenu, QAction, QAction]:
    """File › Open Folder… (Ctrl+O), Open Recent (filled by the window), Settings… (Ctrl+,),
    Quit (Ctrl+Q).

    Returns:
        ``(open_action, recent_menu, settings_action, quit_action)``.
    """
    file_menu = window.menuBar().addMenu("&File")
    open_action = create_action(
        "&Open Folder…", window, shortcut=QKeySequence.StandardKey.Open, triggered=open_folder
    )
    file_menu.addAction(open_action)
    recent_menu = QMenu("Open &Recent", window)
    file_menu.addMenu(recent_menu)
    file_menu.addSeparator()
    settings_action = create_action(
        "&Settings…",
        window,
        shortcut=QKeySequence(SETTINGS_SHORTCUT),
        role=QAction.MenuRole.PreferencesRole,
        triggered=settings,
    )
    file_menu.addAction(settings_action)
    file_menu.addSeparator()
    quit_action = create_action(
        "&Quit",
        window,
        shortcut=QKeySequence("Ctrl+Q"),
        role=QAction.MenuRole.QuitRole,
        triggered=quit_window,
    )
    file_menu.addAction(quit_action)
    return open_action, recent_menu, settings_action, quit_action


def add_view_and_help_menus(
    window: QMainWindow,
    dock: QDockWidget,
    *,
    shortcuts: Callable[[], object],
    about: Callable[[], object],
) -> tuple[QAction, QAction]:
    """View › Memory Panel (shows or hides ``dock``, Ctrl+Shift+M); Help › Keyboard Shortcuts,
    About Yak.

    Returns:
        ``(shortcuts_action, about_action)``.
    """
    view_menu = window.menuBar().addMenu("&View")
    toggle = dock.toggleViewAction()
    toggle.setText("&Memory Panel")
    toggle.setShortcut(QKeySequence("Ctrl+Shift+M"))
    view_menu.addAction(toggle)
    help_menu = window.menuBar().addMenu("&Help")
    shortcuts_action = create_action("&Keyboard Shortcuts", window, triggered=shortcuts)
    help_menu.addAction(shortcuts_action)
    help_menu.addSeparator()
    about_action = create_action(
        "&About Yak", window, role=QAction.MenuRole.AboutRole, triggered=about
    )
    help_menu.addAction(about_action)
    return shortcuts_action, about_action


def add_edit_menu(window: QMainWindow) -> tuple[QMenu, dict[str, QAction]]:
    """Add Edit › Undo, Redo, Cut, Copy, Paste and Select All to ``window``'s menu bar, acting
    on the focused text field (the prompt, the memory editor, a settings field, a message's
    text); an action the focused widget cannot do is disabled when the menu opens.

    Returns:
        The menu, and its actions by the text widgets' method (``"undo"``, ``"selectAll"``…).
    """
    menu = window.menuBar().addMenu("&Edit")
    actions: dict[str, QAction] = {}
    for entry in EDIT_ACTIONS:
        if entry is None:
            menu.addSeparator()
            continue
        method, text, key = entry
        action = create_action(
            text, window, shortcut=key, triggered=functools.partial(edit_focused, method)
        )
        actions[method] = action
        menu.addAction(action)
    menu.aboutToShow.connect(functools.partial(_update_edit_actions, actions))
    return menu, actions


def edit_focused(method: str) -> bool:
    """Do an Edit menu command (``"undo"``, ``"copy"``, ``"selectAll"``…) on the focused
    widget; returns whether it could."""
    widget = QApplication.focusWidget()
    if widget is None or not _can_edit(widget, method):
        return False
    getattr(widget, method)()
    return True


def _update_edit_actions(actions: dict[str, QAction]) -> None:
    widget = QApplication.focusWidget()
    for method, action in actions.items():
        action.setEnabled(widget is not None and _can_edit(widget, method))


def _can_edit(widget: QWidget, method: str) -> bool:
    """Whether ``widget`` has the Edit command ``method`` and may do it now (a read-only
    field copies and selects, but does not change)."""
    if not callable(getattr(widget, method, None)):
        return False
    read_only = getattr(widget, "isReadOnly", None)
    return not (method in _CHANGES_TEXT and callable(read_only) and read_only())


def about_box(parent: QWidget, *, data_dir: str | None, log_file: str | None) -> QMessageBox:
    """Help › About Yak: the version, the licence, and where the data and the log are
    (``None``: not opened or not written yet)."""
    details = "\n".join(
        [
            (
                "A desktop app for working with an AI agent inside a project folder, with one "
                "memory document per workspace."
            ),
            "",
            f"Licence: {LICENCE}",
            f"Data directory: {data_dir or 'not opened yet'}",
            f"Log file: {log_file or 'not written'}",
            f"Python {sys.version.split()[0]}, Qt {qVersion()}, PySide6 {pyside_version}",
        ]
    )
    return dialogs.inform(
        parent,
        title="About Yak",
        text=f"Yak {__version__}",
        informative=details,
        selectable=True,
        icon=QMessageBox.Icon.Information,
    )


def shortcuts_box(parent: QWidget, shortcuts: Sequence[tuple[str, str]]) -> QMessageBox:
    """Help › Keyboard Shortcuts: ``(keys, what they do)`` rows as a small table."""
    rows = "".join(
        f"<tr><td style='padding-right: 18px'><b>{html.escape(keys, quote=False)}</b></td>"
        f"<td>{html.escape(what, quote=False)}</td></tr>"
        for keys, what in shortcuts
    )
    box = dialogs.inform(
        parent,
        title="Keyboard Shortcuts",
        text=f"<table>{rows}</table>",
        icon=QMessageBox.Icon.NoIcon,
        selectable=True,
    )
    box.setTextFormat(Qt.TextFormat.RichText)
    return box


class ShortcutActions(Protocol):
    """The main window's actions and dock whose keys Help › Keyboard Shortcuts lists."""

    memory_dock: QDockWidget
    open_action: QAction
    settings_action: QAction
    refresh_memory_action: QAction
    review_action: QAction
    history_action: QAction
    quit_action: QAction


def add_memory_menu(
    window: QMainWindow,
    *,
    refresh: SignalInstance,
    review: SignalInstance,
    history: SignalInstance,
    edit: SignalInstance,
) -> tuple[QMenu, list[QAction]]:
    """Memory › Refresh Now, Review Waiting Change…, History…, Edit in Settings…: the memory
    panel's commands for the open workspace, each emitting the window's intent signal given
    (the controller disables them while no workspace is open)."""
    menu = window.menuBar().addMenu("&Memory")
    actions = [
        create_action(
            "&Refresh Now", window, shortcut=QKeySequence(REFRESH_SHORTCUT), triggered=refresh
        ),
        create_action(
            "Re&view Waiting Change…",
            window,
            shortcut=QKeySequence(REVIEW_SHORTCUT),
            triggered=review,
        ),
        create_action(
            "&History…", window, shortcut=QKeySequence(HISTORY_SHORTCUT), triggered=history
        ),
        create_action("&Edit in Settings…", window, triggered=edit),
    ]
    menu.addActions(actions)
    return menu, actions


def no_workspace_text(recent: Sequence[Workspace]) -> str:
    """The central area without a workspace: how to open a folder (plain text) or, with
    ``recent`` folders, the same words and those folders as links (rich text)."""
    if not recent:
        return NO_WORKSPACE_TEXT
    links = "".join(
        f'<p><a href="{html.escape(QUrl.fromLocalFile(w.path).toString())}">'
        f"{html.escape(w.name, quote=False)}</a> — {html.escape(w.path, quote=False)}</p>"
        for w in recent
    )
    first, _blank, rest = NO_WORKSPACE_TEXT.partition("\n\n")
    return (
        f"<p>{html.escape(first, quote=False)}</p><p><b>Recent folders</b></p>{links}"
        f"<p>{html.escape(rest, quote=False)}</p>"
    )


def window_shortcuts(window: ShortcutActions) -> list[tuple[str, str]]:
    """The window's keyboard shortcuts as ``(keys, what they do)``, in this platform's
    notation (Help › Keyboard Shortcuts)."""

    def keys(sequence: QKeySequence) -> str:
        return sequence.toString(QKeySequence.SequenceFormat.NativeText)

    toggle = window.memory_dock.toggleViewAction()
    return [
        (keys(window.open_action.shortcut()), "Open a project folder"),
        (keys(window.settings_action.shortcut()), "Settings"),
        (keys(toggle.shortcut()), "Show or hide the memory panel"),
        (keys(QKeySequence(QKeySequence.StandardKey.New)), "New conversation"),
        (keys(QKeySequence(FOCUS_INPUT_SHORTCUT)), "Go to the message box"),
        ("Enter", "Send the message"),
        ("Shift+Enter", "New line in the message"),
        ("Esc", "Stop the reply (the question goes back in the box)"),
        ("F2", "Rename the selected conversation"),
        (
            keys(QKeySequence(QKeySequence.StandardKey.Delete)),
            "Delete the selected conversation",
        ),
        (keys(window.refresh_memory_action.shortcut()), "Refresh the memory now"),
        (keys(window.review_action.shortcut()), "Review the change waiting for you"),
        (keys(window.history_action.shortcut()), "The memory's history"),
        (
            keys(QKeySequence(QKeySequence.StandardKey.Save)),
            "Save the memory in Settings › Memory",
        ),
        (keys(window.quit_action.shortcut()), "Quit"),
    ]

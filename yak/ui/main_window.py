"""MainWindow: the workspace's window — chat in the middle, the memory panel docked beside it.

File menu: Open Folder… (Ctrl+O), Open Recent, Settings… (Ctrl+,), Quit (Ctrl+Q); Edit › Undo,
Redo, Cut, Copy, Paste, Select All on the focused text; Conversation › the chat panel's actions
(:meth:`MainWindow.set_conversation_actions`); Memory › Refresh Now (Ctrl+R), Review Waiting
Change… (Ctrl+Shift+R), History… (Ctrl+H), Edit in Settings…; View › Memory Panel; Help ›
Keyboard Shortcuts and About Yak (version, licence, data and log paths). Without a workspace the
central area says how to open a folder and lists the recent ones as links.
A folder dropped on the window opens it. The title names the workspace. The central area holds a
placeholder until the chat panel is set with :meth:`MainWindow.set_chat_panel`; the memory dock
holds a label until the memory panel is set (:meth:`MainWindow.set_memory_panel`). The app's
controller builds both panels.

A folder given on the command line is shown from the first paint (:meth:`MainWindow.show_opening`:
its name and path, and "loading…" for the chat and the memory) while the core opens behind the
window; the chat and memory panels take its place once the workspace is set, and the
no-workspace placeholder comes back only if it cannot be opened (:meth:`cancel_opening`).

The window's geometry and state (where the memory dock is, its width, whether it is closed) are
remembered through ``QSettings`` (Yak's own settings live in its data directory); a restored
layout whose memory dock crowds out the chat is put back to the first-run split.

The window never awaits: it emits intents (``open_folder_requested``, ``settings_requested``)
and the app controller drives it (``set_workspace``, ``set_recent``, ``show_error``).
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QIcon,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSizePolicy,
    QStackedWidget,
    QWidget,
)

from yak.presenters import waiting_for_you
from yak.ui import dialogs
from yak.ui.chat.input import PromptEdit
from yak.ui.layout import vbox
from yak.ui.scope_notice import ScopeNotice
from yak.ui.window_menus import (
    about_box,
    add_edit_menu,
    add_file_menu,
    add_memory_menu,
    add_view_and_help_menus,
    no_workspace_text,
    shortcuts_box,
    window_shortcuts,
)

if TYPE_CHECKING:
    from yak.domain import Workspace
    from yak.ui.memory_panel import MemoryPanel

# A restored memory dock wider than this share of the window, or a chat column narrower than
# MIN_CHAT_WIDTH (pixels), is put back to DOCK_SHARE of the width, as on the first run.
MAX_DOCK_SHARE = 0.45
MIN_CHAT_WIDTH = 420
# The dock starts at 30% of the width, at least MIN_DOCK_WIDTH: on a 1000-pixel window the
# chat's column (beside its conversations list) stays wider than the memory panel.
DOCK_SHARE = 0.3
MIN_DOCK_WIDTH = 300
RECENT_ON_PAGE = 5  # recent folders listed on the no-workspace page
LOADING_CHAT_TEXT = "Loading the conversations…"
LOADING_MEMORY_TEXT = "Loading the memory…"
EARLY_PROMPT_TEXT = "Type your question; it waits here until the conversations are loaded."


class MainWindow(QMainWindow):
    """Yak's main window.

    Args:
        geometry_store: where the window geometry is remembered (``None``: not remembered).
        icon: the window icon.
    """

    open_folder_requested = Signal(str)  # a folder the user chose, dropped or picked from Recent
    settings_requested = Signal()
    # Memory menu intents, for the workspace shown (the controller knows which it is).
    memory_refresh_requested = Signal()
    memory_review_requested = Signal()
    memory_history_requested = Signal()
    memory_edit_requested = Signal()
    workspace_changed = Signal(object)  # the Workspace now shown, or None
    closed = Signal()  # the window closed for good (the app quits)

    def __init__(
        self, *, geometry_store: QSettings | None = None, icon: QIcon | None = None
    ) -> None:
        super().__init__()
        self._geometry_store = geometry_store
        self._workspace: Workspace | None = None
        self._opening: str | None = None  # the folder shown while it opens (show_opening)
        self._chat_panel: QWidget | None = None
        self._recent: list[Workspace] = []  # the recent folders that exist (set_recent)
        self.close_guard: Callable[[], bool] | None = None
        self.folder_dialog: QFileDialog | None = None
        self.error_box: QMessageBox | None = None
        self.about_box: QMessageBox | None = None
        self.shortcuts_box: QMessageBox | None = None
        self._data_dir: str | None = None
        self._log_file: str | None = None
        self._sized = False
        self._geometry_restored = False
        if icon is not None:
            self.setWindowIcon(icon)
        self._setup_ui()
        self._restore_geometry()
        self.set_workspace(None)

    def _setup_ui(self) -> None:
        self.setObjectName("mainWindow")
        self.setAcceptDrops(True)
        self.resize(1200, 780)
        self._setup_central()
        self._setup_dock()
        self._setup_menus()
        self.set_recent([])
        self.statusBar().showMessage("Ready")

    def _setup_central(self) -> None:
        """The central stack, holding the placeholder until the chat panel is set, under the
        scope notice."""
        self.placeholder = QLabel(no_workspace_text(()), self)
        self.placeholder.setObjectName("chatPlaceholder")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setMargin(24)
        self.placeholder.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.placeholder.linkActivated.connect(self._on_placeholder_link_activated)
        # The central widget never changes (the chat panel goes into this stack): replacing it
        # after restoreState() hands the restored dock all the width. It expands, so a window
        # made wider gives the growth to the chat while the dock keeps its width.
        self.central_stack = QStackedWidget(self)
        self.central_stack.setObjectName("centralStack")
        self.central_stack.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.central_stack.addWidget(self.placeholder)
        # While a folder opens, a prompt box already takes what is typed; the chat panel's
        # takes it over once the workspace shows (take_early_prompt), so nothing is dropped.
        self.early_prompt = PromptEdit(self)
        self.early_prompt.setObjectName("earlyPrompt")
        self.early_prompt.send_blocked = True  # Enter sends nothing until the chat is there
        self.early_prompt.setPlaceholderText(EARLY_PROMPT_TEXT)
        self.early_prompt.setFixedHeight(self.early_prompt.fontMetrics().lineSpacing() * 4)
        self.early_prompt.hide()
        # The offer of a memory found elsewhere (the enclosing workspace's, a renamed
        # folder's) sits above the chat, hidden until there is one.
        self.scope_notice = ScopeNotice(self)
        # A database opened read-only says so for as long as the window runs.
        self.read_only_banner = QLabel(self)
        self.read_only_banner.setObjectName("readOnlyBanner")
        self.read_only_banner.setWordWrap(True)
        self.read_only_banner.setTextFormat(Qt.TextFormat.PlainText)
        self.read_only_banner.setMargin(8)
        self.read_only_banner.setStyleSheet(
            "#readOnlyBanner { background: #fff4ce; color: #3d3000;"
            " border-bottom: 1px solid #c9a400; }"
        )
        self.read_only_banner.hide()
        self.central = QWidget(self)
        self.central.setObjectName("central")
        vbox(
            self.read_only_banner,
            self.scope_notice,
            (self.central_stack, 1),
            self.early_prompt,
            margins=0,
            spacing=0,
            parent=self.central,
        )
        self.setCentralWidget(self.central)

    def _setup_dock(self) -> None:
        """The memory dock, holding a plain label until the panel is set
        (:meth:`set_memory_panel`) and while a workspace opens. It is placed by the saved
        window state, or on the right (:meth:`_place_memory_dock`)."""
        self._memory_panel: MemoryPanel | None = None
        self.memory_dock = QDockWidget("Memory", self)
        self.memory_dock.setObjectName("memoryDock")
        self.dock_placeholder = QLabel(self.memory_dock)
        self.dock_placeholder.setObjectName("memoryLoading")
        self.dock_placeholder.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.dock_placeholder.setWordWrap(True)
        self.dock_placeholder.setMargin(6)
        self.memory_dock.setWidget(self.dock_placeholder)
        self.memory_dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )

    def _setup_menus(self) -> None:
        """File, Edit, Conversation, Memory, View and Help (``yak.ui.window_menus``)."""
        (
            self.open_action,
            self.recent_menu,
            self.settings_action,
            self.quit_action,
        ) = add_file_menu(
            self,
            open_folder=self._on_open_action_triggered,
            settings=self.settings_requested,
            quit_window=self.close,
        )
        self.edit_menu, self.edit_actions = add_edit_menu(self)
        # Filled by set_conversation_actions (the chat panel's actions, once it exists).
        self.conversation_menu = self.menuBar().addMenu("&Conversation")
        self.conversation_menu.menuAction().setVisible(False)
        self.memory_menu, self.memory_actions = add_memory_menu(
            self,
            refresh=self.memory_refresh_requested,
            review=self.memory_review_requested,
            history=self.memory_history_requested,
            edit=self.memory_edit_requested,
        )
        (
            self.refresh_memory_action,
            self.review_action,
            self.history_action,
            self.edit_memory_action,
        ) = self.memory_actions
        self.shortcuts_action, self.about_action = add_view_and_help_menus(
            self, self.memory_dock, shortcuts=self.show_shortcuts, about=self.show_about
        )

    def set_conversation_actions(self, actions: list[QAction]) -> None:
        """Show Conversation › ``actions`` (the chat panel's New, Rename, Delete…, Go to the
        message box) in the menu bar."""
        self.conversation_menu.clear()
        self.conversation_menu.addActions(actions)
        self.conversation_menu.menuAction().setVisible(bool(actions))

    # --- driven by the controller ------------------------------------------------------------
    @property
    def memory_panel(self) -> MemoryPanel:
        """The memory panel in the dock (while a workspace opens it waits behind the dock's
        "loading…" label).

        Raises:
            RuntimeError: none was set with :meth:`set_memory_panel`.
        """
        if self._memory_panel is None:
            raise RuntimeError("the window has no memory panel yet")
        return self._memory_panel

    def set_memory_panel(self, panel: MemoryPanel) -> None:
        """Put ``panel`` in the memory dock, showing the workspace shown now (behind the
        "loading…" label while a folder opens)."""
        self._memory_panel = panel
        panel.show_workspace(self._workspace)
        if self._opening is None:
            self.memory_dock.setWidget(panel)
        else:
            panel.hide()

    @property
    def workspace(self) -> Workspace | None:
        """The workspace shown, or ``None``."""
        return self._workspace

    @property
    def opening(self) -> str | None:
        """The folder shown as opening (:meth:`show_opening`) until a workspace is set, or
        ``None``."""
        return self._opening

    def show_opening(self, path: str) -> None:
        """Show that the folder ``path`` is opening, before the core can open it: its name and
        path in the title and the central area, "loading…" for the chat and the memory. Cheap
        (no import, no disk): the app calls it before the window's first paint. The chat and
        memory panels take over at :meth:`set_workspace`; :meth:`cancel_opening` goes back to
        the no-workspace look.

        Args:
            path: the folder as resolved for display (absolute; the registry validates it
                later).
        """
        self._opening = path
        name = _folder_name(path)
        self.setWindowTitle(_title(name, path))
        name_html, path_html = html.escape(name, quote=False), html.escape(path, quote=False)
        self.placeholder.setTextFormat(Qt.TextFormat.RichText)
        self.placeholder.setText(
            f"<p><b>{name_html}</b><br>{path_html}</p><p>{LOADING_CHAT_TEXT}</p>"
        )
        self.central_stack.setCurrentWidget(self.placeholder)
        self.dock_placeholder.setTextFormat(Qt.TextFormat.RichText)
        self.dock_placeholder.setText(
            f"<p><b>Memory — {name_html}</b></p><p>{LOADING_MEMORY_TEXT}</p>"
        )
        self.dock_placeholder.setToolTip(path)
        self.memory_dock.setWidget(self.dock_placeholder)
        if self._memory_panel is not None:
            self._memory_panel.hide()
        self.early_prompt.show()
        self.early_prompt.setFocus(Qt.FocusReason.OtherFocusReason)
        self.statusBar().showMessage(f"Opening {path}…")

    def cancel_opening(self) -> None:
        """The folder shown as opening could not be opened: show the window as it is without
        it (no workspace, or the one open before). Nothing happens when none is opening."""
        if self._opening is None:
            return
        self._end_opening()
        workspace = self._workspace
        self.setWindowTitle(_title(workspace.name, workspace.path) if workspace else "Yak")
        self.statusBar().clearMessage()

    def _end_opening(self) -> None:
        """Put the chat and memory panels (when set) back in place of the "loading…" labels."""
        self._opening = None
        self.early_prompt.hide()
        self.dock_placeholder.clear()
        self.dock_placeholder.setToolTip("")
        self._show_no_workspace_text()
        self._show_central()
        if self._memory_panel is not None:
            self.memory_dock.setWidget(self._memory_panel)
            self._memory_panel.show()

    def take_early_prompt(self) -> str:
        """What was typed in the prompt box shown while the folder opened (emptied now), for
        the chat panel's prompt box."""
        text = self.early_prompt.toPlainText()
        self.early_prompt.clear()
        return text

    def _show_central(self) -> None:
        """The chat panel while a workspace is shown, else the placeholder (the folder
        opening, or how to open one)."""
        chat = self._chat_panel
        if chat is not None and self._opening is None and self._workspace is not None:
            self.central_stack.setCurrentWidget(chat)
        else:
            self.central_stack.setCurrentWidget(self.placeholder)

    def set_workspace(self, workspace: Workspace | None) -> None:
        """Show ``workspace`` (title, memory panel) and emit ``workspace_changed``; a folder
        shown as opening gives way to it."""
        if workspace is not None and self._opening is not None:
            self._end_opening()
        self._workspace = workspace
        self._show_central()
        self.scope_notice.clear()  # an offer was for the folder shown before
        if workspace is None:
            self.setWindowTitle("Yak")
        else:
            self.setWindowTitle(_title(workspace.name, workspace.path))
            self.statusBar().showMessage(f"Opened {workspace.path}", 5000)
        if self._memory_panel is not None:
            self._memory_panel.show_workspace(workspace)
        for action in self.memory_actions:
            action.setEnabled(workspace is not None)
        self.workspace_changed.emit(workspace)

    def set_chat_panel(self, widget: QWidget) -> None:
        """Put the chat panel in the central area (replacing the placeholder once a workspace
        is shown: without one, the placeholder says how to open a folder and lists the recent
        ones)."""
        if self._chat_panel is not None:
            self.central_stack.removeWidget(self._chat_panel)
        self._chat_panel = widget
        self.central_stack.addWidget(widget)
        self._show_central()
        if self._sized:
            QTimer.singleShot(0, self._fit_memory_dock)

    @property
    def chat_panel(self) -> QWidget | None:
        """The chat panel set with :meth:`set_chat_panel`, or ``None``."""
        return self._chat_panel

    def set_recent(
        self, workspaces: list[Workspace], *, waiting: Mapping[str, int] | None = None
    ) -> None:
        """Fill File › Open Recent (most recent first; missing folders are shown disabled) and
        the no-workspace page's list of the recent folders that exist (links that open
        them).

        Args:
            waiting: how many changes wait for review, by workspace id: a folder with some
                says so after its path (``~/src/app — 2 changes waiting for you``).
        """
        self._recent = [w for w in workspaces if os.path.isdir(w.path)]
        if self._opening is None:
            self._show_no_workspace_text()
        self.recent_menu.clear()
        for workspace in workspaces:
            count = (waiting or {}).get(workspace.id, 0)
            label = workspace.path + (f" — {waiting_for_you(count)}" if count else "")
            action = self.recent_menu.addAction(label)
            exists = os.path.isdir(workspace.path)
            action.setEnabled(exists)
            if not exists:
                action.setToolTip("This folder no longer exists.")
            action.triggered.connect(
                lambda _checked=False, path=workspace.path: self.open_folder_requested.emit(path)
            )
        if not workspaces:
            empty = self.recent_menu.addAction("No recent folders")
            empty.setEnabled(False)

    def _show_no_workspace_text(self) -> None:
        """How to open a folder, and the recent folders to pick from (as links)."""
        rich = bool(self._recent)
        self.placeholder.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
        self.placeholder.setText(no_workspace_text(self._recent[:RECENT_ON_PAGE]))

    def _on_placeholder_link_activated(self, link: str) -> None:
        self.open_folder_requested.emit(QUrl(link).toLocalFile())

    def show_error(self, text: str, *, title: str = "Yak") -> None:
        """Tell the user what went wrong: a message box (non-blocking) and the status bar. The
        core's sentences are shared with the command line, which starts them in lower case
        after ``yak:``; here they start with a capital."""
        text = text[:1].upper() + text[1:]
        self.statusBar().showMessage(text, 15000)
        self.error_box = dialogs.inform(self, title=title, text=text)

    def show_read_only(self, text: str) -> None:
        """Show ``text`` in a banner above the chat for as long as the window runs: the
        database was opened read-only and nothing can be saved."""
        self.read_only_banner.setText(text)
        self.read_only_banner.show()

    def show_status(self, text: str, *, timeout_ms: int = 5000) -> None:
        """A transient message in the status bar."""
        self.statusBar().showMessage(text, timeout_ms)

    def show_progress(self, text: str) -> None:
        """``text`` in the status bar while a long operation runs (``yak.ui.tasks``)."""
        self.statusBar().showMessage(text)

    def clear_progress(self, text: str) -> None:
        """Clear the status bar if it still shows the progress line ``text``."""
        if self.statusBar().currentMessage() == text:
            self.statusBar().clearMessage()

    def set_support_paths(
        self, *, data_dir: str | None = None, log_file: str | None = None
    ) -> None:
        """Where the database and the log file are, for Help › About Yak (support asks)."""
        if data_dir is not None:
            self._data_dir = data_dir
        if log_file is not None:
            self._log_file = log_file

    def show_about(self) -> None:
        """Help › About Yak: the version, the licence, and where the data and the log are."""
        self.about_box = about_box(self, data_dir=self._data_dir, log_file=self._log_file)

    def show_shortcuts(self) -> None:
        """Help › Keyboard Shortcuts: the keys that work in the window, as a small table."""
        self.shortcuts_box = shortcuts_box(self, self.shortcuts())

    def shortcuts(self) -> list[tuple[str, str]]:
        """The keyboard shortcuts as ``(keys, what they do)``, in this platform's notation."""
        return window_shortcuts(self)

    def choose_folder(self) -> None:
        """Open the folder dialog (Ctrl+O); the choice arrives as ``open_folder_requested``."""
        start = self._workspace.path if self._workspace else os.path.expanduser("~")
        self.folder_dialog = dialogs.choose_directory(
            self,
            title="Open a project folder",
            start=start,
            on_chosen=self.open_folder_requested.emit,
        )

    # --- internals ---------------------------------------------------------------------------
    def _on_open_action_triggered(self) -> None:
        self.choose_folder()

    def _restore_geometry(self) -> None:
        if self._geometry_store is not None:
            geometry = self._geometry_store.value("main_window/geometry")
            state = self._geometry_store.value("main_window/state")
            if isinstance(geometry, QByteArray):
                self.restoreGeometry(geometry)
            if isinstance(state, QByteArray):
                self._geometry_restored = self.restoreState(state)
        self._place_memory_dock()

    def _place_memory_dock(self) -> None:
        """Dock the memory panel on the right unless the restored window state placed it where
        the user left it (side, width, floating or closed): a first run, or a state saved
        without the dock."""
        layout = self.layout()  # QMainWindow's own: it holds every docked or floating dock
        if layout is None or layout.indexOf(self.memory_dock) < 0:
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.memory_dock)

    def _save_geometry(self) -> None:
        if self._geometry_store is None:
            return
        self._geometry_store.setValue("main_window/geometry", self.saveGeometry())
        self._geometry_store.setValue("main_window/state", self.saveState())
        self._geometry_store.sync()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            QTimer.singleShot(0, self._fit_memory_dock)

    def _fit_memory_dock(self) -> None:
        """On the first run the chat gets most of the width; a restored layout is kept unless
        the dock crowds out the chat (see :meth:`memory_dock_crowds_chat`)."""
        if not self._geometry_restored or self.memory_dock_crowds_chat():
            self._size_memory_dock()

    def memory_dock_crowds_chat(self) -> bool:
        """Whether the memory panel, shown and docked beside the chat (left or right), takes
        over 45% of the window's width or leaves the chat under 420 pixels ("beside": no
        column in common with the central area)."""
        dock = self.memory_dock
        if dock.isHidden() or dock.isFloating():
            return False
        central = self.central.geometry()
        beside = dock.geometry()
        if beside.right() >= central.left() and beside.left() <= central.right():
            return False  # above or below the chat
        return (
            dock.width() > MAX_DOCK_SHARE * self.width()
            or self.central_stack.width() < MIN_CHAT_WIDTH
        )

    def _size_memory_dock(self) -> None:
        """``DOCK_SHARE`` of the window's width for the dock: at least ``MIN_DOCK_WIDTH``
        pixels, but never over ``MAX_DOCK_SHARE`` of the window (a small screen)."""
        total = self.width()
        width = min(max(MIN_DOCK_WIDTH, int(total * DOCK_SHARE)), int(total * MAX_DOCK_SHARE))
        self.resizeDocks([self.memory_dock], [width], Qt.Orientation.Horizontal)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.close_guard is not None and not self.close_guard():
            event.ignore()
            return
        self._save_geometry()
        super().closeEvent(event)
        self.closed.emit()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _dropped_folder(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        folder = _dropped_folder(event)
        if folder is None:
            event.ignore()
            return
        event.acceptProposedAction()
        self.open_folder_requested.emit(folder)


def _title(name: str, path: str) -> str:
    return f"{name} — {path} — Yak"


def _folder_name(path: str) -> str:
    """The last component of ``path``, as ``Workspace.name`` gives it (no ``Workspace`` exists
    while the folder opens)."""
    stripped = path.rstrip("/\\")
    return stripped.replace("\\", "/").rsplit("/", 1)[-1] or path


def _dropped_folder(event: QDragEnterEvent | QDropEvent) -> str | None:
    """The one local folder being dragged, or ``None``."""
    mime = event.mimeData()
    if not mime.hasUrls():
        return None
    urls = [u for u in mime.urls() if u.isLocalFile()]
    if len(urls) != 1:
        return None
    path = urls[0].toLocalFile()
    return path if os.path.isdir(path) else None

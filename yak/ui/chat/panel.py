"""The chat panel: the workspace's sessions beside the transcript, the prompt box and Stop.

A plain widget: it emits intent signals upward and is driven by method calls from
``ChatController``; it never awaits and never talks to a service.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QIcon, QKeySequence, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QSplitter,
    QStyle,
    QToolButton,
    QWidget,
)

from yak.domain import ChatSession, SessionOrigin, TokenUsage
from yak.presenters import session_tooltip, token_count
from yak.ui.chat.input import FOCUS_INPUT_SHORTCUT, ChatInput
from yak.ui.chat.transcript import TranscriptView
from yak.ui.layout import create_action, create_button, create_label, hbox, vbox

_SESSION_ID_ROLE = Qt.ItemDataRole.UserRole

NO_KEY_MESSAGE = (
    "No Anthropic API key is set, so the agent cannot answer yet. Set the ANTHROPIC_API_KEY "
    "environment variable before starting Yak, or add a key in Settings › Provider. "
    "Memory features keep working without one."
)
NO_KEY_TOOLTIP = "No API key yet: add one in Settings › Provider (Ctrl+,) to send"
READ_ONLY_TOOLTIP = "Read-only: Yak's database cannot be written, so no message can be sent"


def usage_text(usage: TokenUsage) -> str:
    """``"12.4k in, 91% cached · 300 out"``: every input token (uncached, written to and read
    from the prompt cache), the share read from the cache (rounded down; left out when the
    calls used no cache), then the output."""
    text = f"{token_count(usage.total_input_tokens)} in"
    if usage.cache_read_input_tokens or usage.cache_creation_input_tokens:
        text += f", {100 * usage.cache_read_input_tokens // usage.total_input_tokens}% cached"
    return f"{text} · {token_count(usage.output_tokens)} out"


class Banner(QFrame):
    """A one-sentence message across the top of the transcript, with optional buttons.

    Signals:
        action_clicked(): the action button (e.g. Retry, Open Provider settings) was clicked.
        dismissed(): the close button was clicked (the banner hides itself).
    """

    action_clicked = Signal()
    dismissed = Signal()

    def __init__(
        self,
        *,
        object_name: str,
        action_text: str,
        closable: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        self.label = QLabel(self)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.action_button = QPushButton(action_text, self)
        self.action_button.setAutoDefault(False)
        self.action_button.clicked.connect(self.action_clicked)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.action_button)
        self.close_button = QToolButton(self)
        self.close_button.setText("×")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self._on_close_button_clicked)
        self.close_button.setVisible(closable)
        layout.addWidget(self.close_button)
        self.setVisible(False)

    def show_message(self, text: str, *, action: bool = True) -> None:
        """Show ``text`` (one sentence); ``action`` shows the action button."""
        self.label.setText(text)
        self.action_button.setVisible(action)
        self.setVisible(True)

    def text(self) -> str:
        """The sentence shown."""
        return self.label.text()

    def _on_close_button_clicked(self) -> None:
        self.setVisible(False)
        self.dismissed.emit()


class ChatPanel(QWidget):
    """Sessions list, transcript, error banner, no-key notice, prompt box and token usage.

    Signals (intents; the controller acts on them):
        session_selected(str): the user picked a session (its id).
        new_session_requested(): New or Ctrl+N.
        rename_requested(str, str): session id, new title (already non-blank and changed).
        delete_requested(str): session id, after the user confirmed.
        send_requested(str): the prompt text.
        stop_requested(): Stop or Esc.
        retry_requested(): Retry in the error banner.
        provider_settings_requested(): the no-key notice's button.
    """

    session_selected = Signal(str)
    new_session_requested = Signal()
    rename_requested = Signal(str, str)
    delete_requested = Signal(str)
    send_requested = Signal(str)
    stop_requested = Signal()
    retry_requested = Signal()
    provider_settings_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._updating_sessions = False
        self._busy = False
        self._workspace_open = True
        self._key_missing = False
        self._read_only = False
        self._pending_sessions: tuple[list[ChatSession], str | None] | None = None
        self._setup_ui()

    def _setup_ui(self) -> None:
        self.setObjectName("chat_panel")
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        hbox(self.splitter, margins=0, parent=self)
        self._setup_sessions_box(self.splitter)
        self._setup_chat_box(self.splitter)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([200, 600])
        self._setup_shortcuts()
        self.set_usage(None, None)

    def _setup_sessions_box(self, parent: QWidget) -> None:
        """The left column: New conversation above the list of sessions."""
        sessions_box = QWidget(parent)
        self.new_button = create_button(
            "New conversation",
            sessions_box,
            tooltip="Start a new conversation (Ctrl+N)",
            auto_default=False,
            clicked=self.new_session_requested,
        )
        # The mark of a conversation ``yak ask`` started: the theme's terminal icon where the
        # desktop has one, else Qt's own computer icon.
        self._ask_icon = QIcon.fromTheme(
            "utilities-terminal", self.style().standardIcon(QStyle.StandardPixmap.SP_ComputerIcon)
        )
        self.session_list = QListWidget(sessions_box)
        self.session_list.setObjectName("sessions")
        # Long titles are elided (full title in the tooltip), never scrolled sideways.
        self.session_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.session_list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.session_list.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.session_list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.session_list.customContextMenuRequested.connect(self._on_session_list_menu)
        self.session_list.currentItemChanged.connect(self._on_session_list_current_changed)
        self.session_list.itemChanged.connect(self._on_session_list_item_changed)
        self.session_list.itemDelegate().closeEditor.connect(self._on_title_editor_closed)
        vbox(self.new_button, (self.session_list, 1), margins=(4, 4, 0, 4), parent=sessions_box)

    def _setup_chat_box(self, parent: QWidget) -> None:
        """The right column: the notices, the transcript, the prompt box and the token usage."""
        chat_box = QWidget(parent)
        self.key_notice = Banner(
            object_name="no_key_notice",
            action_text="Open Provider settings",
            closable=False,
            parent=chat_box,
        )
        self.key_notice.action_clicked.connect(self.provider_settings_requested)
        self.error_banner = Banner(object_name="error_banner", action_text="Retry", parent=chat_box)
        self.error_banner.action_clicked.connect(self.retry_requested)
        self.transcript = TranscriptView(chat_box)
        self.input = ChatInput(chat_box)
        self.input.send_requested.connect(self.send_requested)
        self.input.stop_requested.connect(self.stop_requested)
        self.input.paste_refused.connect(self._on_input_paste_refused)
        self.usage_label = create_label(chat_box, object_name="token_usage")
        vbox(
            self.key_notice,
            self.error_banner,
            (self.transcript, 1),
            self.input,
            self.usage_label,
            margins=(0, 4, 4, 4),
            parent=chat_box,
        )

    def _setup_shortcuts(self) -> None:
        """The conversation's actions, which the window also puts in its Conversation menu:
        New conversation (Ctrl+N), Rename (F2, from anywhere in the panel: the prompt box
        too), Delete… (Delete, in the session list) and Go to the message box (Ctrl+L)."""
        self.new_action = create_action(
            "&New Conversation",
            self,
            shortcut=QKeySequence.StandardKey.New,
            triggered=self._on_new_shortcut_activated,
        )
        self.rename_action = create_action(
            "&Rename Conversation",
            self,
            shortcut=QKeySequence(Qt.Key.Key_F2),
            triggered=self.begin_rename,
        )
        # From the prompt box too: F2 there renames, and the title typed goes to the list's
        # editor, never into the message.
        self.rename_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.delete_action = create_action(
            "&Delete Conversation…",
            self,
            shortcut=QKeySequence(QKeySequence.StandardKey.Delete),
            triggered=self.confirm_delete,
        )
        # Only in the list: Delete in the prompt box deletes a character.
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.session_list.addAction(self.delete_action)
        self.focus_input_action = create_action(
            "Go to the &Message Box",
            self,
            shortcut=QKeySequence(FOCUS_INPUT_SHORTCUT),
            triggered=self.focus_input,
        )
        self.addActions([self.new_action, self.rename_action, self.focus_input_action])

    def conversation_actions(self) -> list[QAction]:
        """New, Rename, Delete… and Go to the message box, for the window's menu."""
        return [self.new_action, self.rename_action, self.delete_action, self.focus_input_action]

    def focus_input(self) -> None:
        """Put the cursor in the prompt box, at the end of what is typed (Ctrl+L; the window
        does it whenever a workspace is shown)."""
        edit = self.input.edit
        edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        edit.moveCursor(QTextCursor.MoveOperation.End)

    # -- sessions ------------------------------------------------------------------------------

    def set_sessions(self, sessions: Sequence[ChatSession], current_id: str | None) -> None:
        """Show ``sessions`` (most recent first) and select ``current_id`` without re-emitting
        ``session_selected``.

        While the user is editing a title the list is not rebuilt (that would drop the edit):
        the refresh waits until the editor closes, and is dropped if the edit renamed a session
        (the rename refreshes the list again).
        """
        if self.session_list.state() == QAbstractItemView.State.EditingState:
            self._pending_sessions = (list(sessions), current_id)
            return
        self._pending_sessions = None
        self._updating_sessions = True
        try:
            self.session_list.clear()
            for session in sessions:
                item = QListWidgetItem(session.title)
                item.setData(_SESSION_ID_ROLE, session.id)
                item.setToolTip(session_tooltip(session))
                if session.origin is SessionOrigin.ASK:  # started by ``yak ask``: a terminal icon
                    item.setIcon(self._ask_icon)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                self.session_list.addItem(item)
                if session.id == current_id:
                    self.session_list.setCurrentItem(item)
        finally:
            self._updating_sessions = False

    def current_session_id(self) -> str | None:
        """The selected session's id, if any."""
        item = self.session_list.currentItem()
        return None if item is None else item.data(_SESSION_ID_ROLE)

    def session_titles(self) -> list[str]:
        """The titles shown, top to bottom."""
        return [self.session_list.item(i).text() for i in range(self.session_list.count())]

    def begin_rename(self) -> None:
        """Edit the selected session's title in place (F2, double-click, context menu)."""
        item = self.session_list.currentItem()
        if item is not None and not self._busy:
            self.session_list.editItem(item)

    def confirm_delete(self) -> QMessageBox | None:
        """Ask before deleting the selected session; emits ``delete_requested`` on Delete.

        Returns:
            The (non-blocking) question box, or ``None`` when nothing is selected.
        """
        item = self.session_list.currentItem()
        if item is None or self._busy:
            return None
        session_id, title = item.data(_SESSION_ID_ROLE), item.text()
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Delete conversation",
            f"Delete the conversation “{title}” and all its messages? "
            "What memory already learned from it stays in the memory document.",
            parent=self,
        )
        box.setObjectName("confirm_delete")
        delete_button = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        cancel_button = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel_button)
        box.setEscapeButton(cancel_button)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def on_finished(_result: int) -> None:
            if box.clickedButton() is delete_button:
                self.delete_requested.emit(session_id)

        box.finished.connect(on_finished)
        box.open()
        return box

    # -- turn state ----------------------------------------------------------------------------

    def set_busy(self, busy: bool) -> None:
        """A turn runs: the button becomes Stop and sessions cannot be switched or changed."""
        self._busy = busy
        self.input.set_busy(busy)
        self._update_enabled()

    def set_workspace_open(self, workspace_open: bool) -> None:
        """Without a workspace there is nothing to chat in: sessions and the prompt box are
        disabled (the no-key notice stays usable)."""
        self._workspace_open = workspace_open
        self._update_enabled()

    def _update_enabled(self) -> None:
        sessions_usable = self._workspace_open and not self._busy
        self.session_list.setEnabled(sessions_usable)
        self.new_button.setEnabled(sessions_usable)
        self.new_action.setEnabled(sessions_usable)
        self.rename_action.setEnabled(sessions_usable)
        self.delete_action.setEnabled(sessions_usable)
        self.input.setEnabled(self._workspace_open)

    @property
    def busy(self) -> bool:
        """A turn is running."""
        return self._busy

    def show_error(self, message: str, *, retry: bool = True) -> None:
        """Show the error banner with ``message`` (one sentence) and, if ``retry``, Retry."""
        self.error_banner.show_message(message, action=retry)

    def _on_input_paste_refused(self, sentence: str) -> None:
        self.show_error(sentence, retry=False)

    def clear_error(self) -> None:
        """Hide the error banner."""
        self.error_banner.setVisible(False)

    def set_key_missing(self, missing: bool) -> None:
        """Show or hide the sentence explaining how to add an API key; Send is disabled while
        no key exists, its tooltip saying why."""
        if missing:
            self.key_notice.show_message(NO_KEY_MESSAGE)
        else:
            self.key_notice.setVisible(False)
        self._key_missing = missing
        self._update_send_blocked()

    def set_read_only(self, read_only: bool) -> None:
        """A database that cannot be written stores no message: Send is disabled, its tooltip
        saying why (the window's banner says the rest)."""
        self._read_only = read_only
        self._update_send_blocked()

    def _update_send_blocked(self) -> None:
        if self._read_only:
            self.input.set_send_blocked(READ_ONLY_TOOLTIP)
        else:
            self.input.set_send_blocked(NO_KEY_TOOLTIP if self._key_missing else None)

    def set_usage(self, turn: TokenUsage | None, session: TokenUsage | None) -> None:
        """Show token usage of the last turn and of the whole session (nothing while none was
        used): "Last turn: 12.4k in, 91% cached · 300 out   Conversation: … tokens" (see
        :func:`usage_text`)."""
        parts = []
        if turn is not None:
            parts.append(f"Last turn: {usage_text(turn)}")
        if session is not None and (session.total_input_tokens or session.output_tokens):
            parts.append(f"Conversation: {usage_text(session)} tokens")
        self.usage_label.setText("   ".join(parts))

    # -- slots ---------------------------------------------------------------------------------

    def _on_new_shortcut_activated(self) -> None:
        if self._workspace_open and not self._busy:
            self.new_session_requested.emit()

    def _on_session_list_current_changed(
        self, current: QListWidgetItem | None, _previous: QListWidgetItem | None
    ) -> None:
        if current is not None and not self._updating_sessions:
            self.session_selected.emit(current.data(_SESSION_ID_ROLE))

    def _on_session_list_item_changed(self, item: QListWidgetItem) -> None:
        if self._updating_sessions:
            return
        title = " ".join(item.text().split())
        previous = item.toolTip()
        self._updating_sessions = True
        try:
            if not title or title == previous:
                item.setText(previous)  # a blank title is not a title: keep the old one
                return
            item.setText(title)
            item.setToolTip(title)
        finally:
            self._updating_sessions = False
        self._pending_sessions = None  # stale now: the rename refreshes the list
        self.rename_requested.emit(item.data(_SESSION_ID_ROLE), title)

    def _on_title_editor_closed(self, *_args: object) -> None:
        if self._pending_sessions is not None:
            # After the view has left its editing state (it does so after this signal).
            QTimer.singleShot(0, self._apply_pending_sessions)

    def _apply_pending_sessions(self) -> None:
        if self._pending_sessions is not None:
            self.set_sessions(*self._pending_sessions)

    def _on_session_list_menu(self, position: QPoint) -> None:
        if self.session_list.itemAt(position) is None or self._busy:
            return
        menu = QMenu(self)
        menu.addAction(self.rename_action)
        menu.addAction(self.delete_action)
        menu.popup(self.session_list.viewport().mapToGlobal(position))

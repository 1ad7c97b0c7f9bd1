"""The prompt box: Enter sends, Shift+Enter starts a new line, Esc stops a running turn.

While a turn runs the box stays editable (the next prompt can be typed) but Enter does not send,
and the Send button becomes Stop.
"""

from __future__ import annotations

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QWidget

from yak.limits import CHAT_MESSAGE_CHARS, paste_too_long_sentence

FOCUS_INPUT_SHORTCUT = "Ctrl+L"  # puts the cursor in the prompt box (ChatPanel.focus_input)
_ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)


class PromptEdit(QPlainTextEdit):
    """A plain-text prompt editor with chat keys.

    Signals:
        submitted(str): Enter (or keypad Enter) without Shift, with non-blank text.
        stop_requested(): Esc.
        paste_refused(str): a paste or drop was not inserted: the message would be over
            ``yak.limits.CHAT_MESSAGE_CHARS`` (the sentence says so).
    """

    submitted = Signal(str)
    stop_requested = Signal()
    paste_refused = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("prompt")
        self.setPlaceholderText("Ask about this workspace… (Enter sends, Shift+Enter new line)")
        self.setTabChangesFocus(True)
        self.busy = False
        self.send_blocked = False  # Enter does not send (ChatInput.set_send_blocked)

    def insertFromMimeData(self, source: QMimeData) -> None:  # Qt override
        # A paste or drop over the message limit is refused whole: laying out tens of
        # megabytes would freeze the window, and the message could not be sent anyway.
        if source.hasText():
            pasted = len(source.text())
            kept = len(self.toPlainText()) - len(self.textCursor().selectedText())
            if kept + pasted > CHAT_MESSAGE_CHARS:
                self.paste_refused.emit(paste_too_long_sentence(pasted, kept + pasted))
                return
        super().insertFromMimeData(source)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # Qt override
        modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if event.key() in _ENTER_KEYS:
            if modifiers & Qt.KeyboardModifier.ShiftModifier:
                self.textCursor().insertText("\n")  # a new paragraph, not U+2028
                self.ensureCursorVisible()
            elif modifiers == Qt.KeyboardModifier.NoModifier:
                text = self.toPlainText()
                if text.strip() and not self.busy and not self.send_blocked:
                    self.submitted.emit(text)
            else:
                super().keyPressEvent(event)
            return
        if event.key() == Qt.Key.Key_Escape and modifiers == Qt.KeyboardModifier.NoModifier:
            self.stop_requested.emit()
            return
        super().keyPressEvent(event)


class ChatInput(QWidget):
    """The prompt box with its Send/Stop button.

    Signals:
        send_requested(str): the user sent the prompt text (the box is not cleared here; the
            controller clears it once the turn starts, so a refused send keeps the text).
        stop_requested(): Stop clicked or Esc pressed while a turn runs.
        paste_refused(str): a paste over the message limit was not inserted (the sentence).
    """

    send_requested = Signal(str)
    stop_requested = Signal()
    paste_refused = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._busy = False
        self._blocked_because: str | None = None
        self._setup_ui()

    def _setup_ui(self) -> None:
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.edit = PromptEdit(self)
        lines = 4  # tall enough for a short paragraph; longer prompts scroll
        margins = self.edit.contentsMargins()
        self.edit.setFixedHeight(
            int(
                self.edit.fontMetrics().lineSpacing() * lines
                + 2 * self.edit.document().documentMargin()
                + margins.top()
                + margins.bottom()
            )
        )
        self.edit.submitted.connect(self.send_requested)
        self.edit.stop_requested.connect(self._on_edit_stop_requested)
        self.edit.paste_refused.connect(self.paste_refused)
        self.button = QPushButton("Send", self)
        self.button.setObjectName("send_stop")
        self.button.setAutoDefault(False)
        self.button.clicked.connect(self._on_button_clicked)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignBottom)
        self._update_button()
        self.edit.textChanged.connect(self._update_button)

    @property
    def busy(self) -> bool:
        """A turn is running: Enter does not send and the button stops it."""
        return self._busy

    def set_busy(self, busy: bool) -> None:
        """Switch between Send (idle) and Stop (a turn runs)."""
        self._busy = busy
        self.edit.busy = busy
        self._update_button()

    def set_send_blocked(self, reason: str | None) -> None:
        """Disable Send (the button and Enter) with ``reason`` as the button's tooltip, e.g.
        while no API key exists; ``None`` enables it again. Typing stays possible."""
        self._blocked_because = reason
        self.edit.send_blocked = reason is not None
        self._update_button()

    def text(self) -> str:
        """The prompt as typed."""
        return self.edit.toPlainText()

    def clear(self) -> None:
        """Empty the prompt box."""
        self.edit.clear()

    def _update_button(self) -> None:
        if self._busy:
            self.button.setText("Stop")
            self.button.setToolTip("Stop the reply (Esc); what was said is kept")
            self.button.setEnabled(True)
        else:
            self.button.setText("Send")
            self.button.setToolTip(self._blocked_because or "Send (Enter)")
            self.button.setEnabled(
                self._blocked_because is None and bool(self.edit.toPlainText().strip())
            )

    def _on_button_clicked(self) -> None:
        if self._busy:
            self.stop_requested.emit()
        elif self.text().strip() and self._blocked_because is None:
            self.send_requested.emit(self.text())

    def _on_edit_stop_requested(self) -> None:
        if self._busy:
            self.stop_requested.emit()

"""The transcript's rows: a message, a compact tool call, a short note.

:class:`MessageBlock` shows one message (the assistant's as rendered Markdown), as tall as its
text; :class:`ToolCallBlock` shows a tool call on one line that expands to its output;
:class:`NoteLabel` is an italic line such as "Stopped."; :class:`ThinkingRow` is the "thinking…
3 s" line shown while the model has not started answering; :class:`IncompleteNote` follows a
reply that was cut off. The view that stacks them is
:class:`yak.ui.chat.transcript.TranscriptView`.
"""

from __future__ import annotations

import math
import time

from PySide6.QtCore import QSize, QSizeF, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from yak.limits import CHAT_MESSAGE_CHARS, DISPLAY_MESSAGE_CHARS
from yak.ui.chat.render import render_markdown, shorten

# A reply that was cut off: the bar beside its text, and the colour of that bar and of its note
# (a dark amber: readable as text on light and dark palettes alike).
INCOMPLETE_COLOR = "#b36b00"
INCOMPLETE_BAR_PX = 3


class MessageBlock(QTextBrowser):
    """One message's text, as tall as its content (the transcript scrolls, not the block).

    Args:
        role: ``"user"`` (plain text on a tinted background) or ``"assistant"`` (Markdown).
    """

    def __init__(self, role: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.role = role
        self.setObjectName(f"{role}_message")
        self.setOpenExternalLinks(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Text wraps; a code block's long lines do not, and scroll sideways in their block.
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        document = self.document()
        document.setDocumentMargin(8)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()
        shade = self.palette().color(QPalette.ColorRole.AlternateBase).name()
        document.setDefaultStyleSheet(
            f"pre {{ background-color: {shade}; font-family: '{mono}'; }}"
            f" code {{ font-family: '{mono}'; }}"
            " table { border-collapse: collapse; } th, td { padding: 2px 6px; }"
        )
        if role == "user":
            palette = self.palette()
            palette.setColor(
                QPalette.ColorRole.Base, palette.color(QPalette.ColorRole.AlternateBase)
            )
            self.setPalette(palette)
        document.documentLayout().documentSizeChanged.connect(self._on_document_size_changed)
        self.setFixedHeight(self._height_for(document.size().height()))

    def set_markdown(self, text: str) -> None:
        """Show ``text`` rendered as Markdown."""
        self.setHtml(render_markdown(text).rstrip())

    @property
    def incomplete(self) -> bool:
        """The text is part of a reply that was cut off (see :meth:`set_incomplete`)."""
        return bool(self.property("incomplete"))

    def set_incomplete(self) -> None:
        """Style the block as part of a reply that was cut off: an amber bar down its left edge
        (the text stays as received), with a tooltip saying why."""
        self.setProperty("incomplete", True)
        self.setToolTip("This reply was cut off: nothing after this was received.")
        self.setStyleSheet(
            f"MessageBlock {{ border: none; border-left: {INCOMPLETE_BAR_PX}px solid "
            f"{INCOMPLETE_COLOR}; padding-left: 2px; }}"
        )
        self.setFixedHeight(self._height_for(self.document().size().height()))

    def sizeHint(self) -> QSize:  # Qt override
        return QSize(super().sizeHint().width(), self.height())

    def scrolls_sideways(self) -> bool:
        """Whether the text is wider than the block (a code block's long line), so the block
        shows a horizontal scroll bar."""
        return self.document().size().width() > self.viewport().width() + 1

    def _height_for(self, document_height: float) -> int:
        bar = self.horizontalScrollBar().sizeHint().height() if self.scrolls_sideways() else 0
        return math.ceil(document_height) + 2 * self.frameWidth() + bar

    def _on_document_size_changed(self, size: QSizeF) -> None:
        self.setFixedHeight(self._height_for(size.height()))

    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt override
        super().resizeEvent(event)
        # A new width may add or remove the scroll bar under a code block.
        self.setFixedHeight(self._height_for(self.document().size().height()))


class LongMessageBar(QWidget):
    """The row under a message too long to render at once (one stored before the size limits,
    ``yak.limits``): "Showing the first 20,000 of 20,000,000 characters.", Show more (the next
    ``DISPLAY_MESSAGE_CHARS``, up to ``CHAT_MESSAGE_CHARS`` in all) and Copy whole message.

    Rendering is what freezes a window on a huge text (a block lays out all of it at once), so
    the block only ever holds what was asked for; the whole text is one click away on the
    clipboard.

    Args:
        block: the message's block, showing the first ``DISPLAY_MESSAGE_CHARS`` characters.
        text: the whole message.
    """

    def __init__(self, block: MessageBlock, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("long_message_bar")
        self.block = block
        self.full_text = text
        self.shown = min(len(text), DISPLAY_MESSAGE_CHARS)
        self._setup_ui()
        self._show_part()

    def _setup_ui(self) -> None:
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 0, 8, 0)
        self.label = QLabel(self)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.more_button = QToolButton(self)
        self.more_button.setText("Show more")
        self.more_button.clicked.connect(self._on_more_button_clicked)
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy whole message")
        self.copy_button.clicked.connect(self._on_copy_button_clicked)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.more_button)
        layout.addWidget(self.copy_button)

    def _show_part(self) -> None:
        part = self.full_text[: self.shown]
        if self.block.role == "user":
            self.block.setPlainText(part)
        else:
            self.block.set_markdown(part)
        self.label.setText(
            f"Showing the first {self.shown:,} of {len(self.full_text):,} characters."
        )
        self.more_button.setVisible(self.shown < min(len(self.full_text), CHAT_MESSAGE_CHARS))

    def _on_more_button_clicked(self) -> None:
        self.shown = min(
            self.shown + DISPLAY_MESSAGE_CHARS, len(self.full_text), CHAT_MESSAGE_CHARS
        )
        self._show_part()

    def _on_copy_button_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.full_text)
        self.label.setText(f"Copied all {len(self.full_text):,} characters.")


class ElidedLabel(QLabel):
    """A one-line label that shortens its text with "…" to the width it gets, instead of
    widening its parent (the full text is in the tooltip)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full_text = ""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def set_full_text(self, text: str) -> None:
        """Show ``text``, elided to the label's width."""
        self._full_text = text
        self.setToolTip(text)
        self._elide()

    def full_text(self) -> str:
        """The text before eliding."""
        return self._full_text

    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt override
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        self.setText(
            self.fontMetrics().elidedText(
                self._full_text, Qt.TextElideMode.ElideRight, max(self.width(), 40)
            )
        )


class ToolCallBlock(QFrame):
    """A tool call on one line — name, target, outcome — that expands to show its output.

    Args:
        tool_use_id: the call's id (matches its result).
        tool: the tool's name.
        target: what it acts on (path, pattern, command).
    """

    expanded_changed = Signal(bool)

    def __init__(
        self, *, tool_use_id: str, tool: str, target: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.tool_use_id = tool_use_id
        self.tool = tool
        self.target = target
        self.ok: bool | None = None  # None while running
        self.summary = "running…"
        self.output = ""
        self._setup_ui()
        self._refresh()

    def _setup_ui(self) -> None:
        self.setObjectName("tool_call")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.setSpacing(2)
        header = QHBoxLayout()
        header.setSpacing(6)
        self.toggle = QToolButton(self)
        self.toggle.setCheckable(True)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolTip("Show the tool's output")
        self.toggle.toggled.connect(self._on_toggle_toggled)
        self.label = ElidedLabel(self)
        header.addWidget(self.toggle)
        header.addWidget(self.label, 1)
        layout.addLayout(header)
        self.output_view = QPlainTextEdit(self)
        self.output_view.setReadOnly(True)
        self.output_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.output_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.output_view.setVisible(False)
        layout.addWidget(self.output_view)

    @property
    def expanded(self) -> bool:
        """Whether the output is shown."""
        return self.toggle.isChecked()

    def set_expanded(self, expanded: bool) -> None:
        """Show or hide the output."""
        self.toggle.setChecked(expanded)

    def set_outcome(self, *, ok: bool, summary: str, output: str) -> None:
        """Record how the call ended.

        Args:
            ok: it succeeded (False: failed, refused or denied).
            summary: one line, e.g. ``"wrote 3 lines"`` or ``"denied by user"``.
            output: what the model was told (shown when expanded).
        """
        self.ok = ok
        self.summary = summary
        self.output = output
        self._refresh()

    def summary_text(self) -> str:
        """The compact line as shown: ``"✓ write_file notes.txt — wrote 3 lines"``."""
        mark = "…" if self.ok is None else ("✓" if self.ok else "✗")
        target = f" {shorten(self.target)}" if self.target else ""
        return f"{mark} {self.tool}{target} — {self.summary}"

    def set_waiting(self, summary: str) -> None:
        """Say what the running call waits for (e.g. the user's approval)."""
        if self.ok is None:
            self.summary = summary
            self._refresh()

    def _refresh(self) -> None:
        self.label.set_full_text(self.summary_text())
        self.output_view.setPlainText(self.output or "(no output)")
        # As tall as the output, up to a dozen lines (it scrolls beyond).
        lines = min(max(self.output_view.blockCount(), 1), 12)
        margins = self.output_view.contentsMargins()
        self.output_view.setFixedHeight(
            int(
                lines * self.output_view.fontMetrics().lineSpacing()
                + 2 * self.output_view.document().documentMargin()
                + margins.top()
                + margins.bottom()
                + self.output_view.horizontalScrollBar().sizeHint().height()
            )
        )

    def _on_toggle_toggled(self, checked: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if checked else Qt.ArrowType.RightArrow)
        self.output_view.setVisible(checked)
        self.expanded_changed.emit(checked)


class NoteLabel(QLabel):
    """A short italic line in the transcript: "Stopped.", "Tool round limit reached."."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript_note")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(text)
        self.setWordWrap(True)
        font = self.font()
        font.setItalic(True)
        self.setFont(font)
        self.setContentsMargins(8, 0, 8, 0)
        self.setForegroundRole(QPalette.ColorRole.PlaceholderText)


class ThinkingRow(NoteLabel):
    """The "thinking… 3 s" line: the model was asked and has not started answering yet.

    The seconds since it was shown tick once a second (``timer``, a ``QTimer`` that stops with
    the row).

    Attributes:
        started: when the row was shown, in ``time.monotonic()`` seconds.
        timer: the one-second ticker.
    """

    TICK_MS = 1000

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        self.setObjectName("thinking")
        self.started = time.monotonic()
        self.timer = QTimer(self)
        self.timer.setInterval(self.TICK_MS)
        self.timer.timeout.connect(self.tick)
        self.timer.start()
        self.tick()

    @property
    def seconds(self) -> int:
        """Whole seconds since the row was shown."""
        return int(time.monotonic() - self.started)

    def tick(self) -> None:
        """Show the seconds waited so far (the timer's slot)."""
        self.setText(f"thinking… {self.seconds} s")

    def stop(self) -> None:
        """Stop ticking (the row is being removed)."""
        self.timer.stop()


class IncompleteNote(NoteLabel):
    """The line after a reply that was cut off: "— reply cut off: the connection closed;
    nothing after this was received", in the incomplete colour.

    Args:
        cause: why it stopped, a short clause (``TurnFinished.cut_off``, or read back from the
            stored mark).
    """

    def __init__(self, cause: str, parent: QWidget | None = None) -> None:
        super().__init__(f"— reply cut off: {cause}; nothing after this was received", parent)
        self.setObjectName("incomplete_note")
        self.cause = cause
        # The text role, not the placeholder's: a style sheet colour makes the placeholder
        # colour half transparent.
        self.setForegroundRole(QPalette.ColorRole.WindowText)
        self.setStyleSheet(f"color: {INCOMPLETE_COLOR};")


class NoReplyNote(NoteLabel):
    """The line after a question that got no reply at all: "— no reply: <why>", in the
    incomplete colour.

    Args:
        reason: the error sentence (``TurnFinished.no_reply``, or read back from the stored
            mark, ``yak.agent.types.no_reply_mark``).
    """

    def __init__(self, reason: str, parent: QWidget | None = None) -> None:
        super().__init__(f"— no reply: {reason}", parent)
        self.setObjectName("no_reply_note")
        self.reason = reason
        self.setForegroundRole(QPalette.ColorRole.WindowText)
        self.setStyleSheet(f"color: {INCOMPLETE_COLOR};")

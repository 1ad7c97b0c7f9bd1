"""The transcript: the user's prompts, the assistant's Markdown, compact tool calls.

Markdown goes through ``markdown-it-py`` to HTML shown in a ``QTextBrowser``, rather than Qt's own
``QTextDocument.setMarkdown``: markdown-it escapes raw HTML in a reply (``html=False``), so a model
cannot inject markup, images or styles into the window; it refuses unsafe link schemes
(``javascript:``); and it is a pure function of the text, tested without a display.

Streaming text never freezes the window: deltas are appended to a buffer and the open assistant
block is re-rendered by a single-shot ``QTimer`` at most every ``RENDER_INTERVAL_MS`` (50 ms), not
once per delta. A render costs time proportional to the text rendered, so two things bound it:
once the open block passes ``SEGMENT_CHARS`` its settled part (up to the last paragraph break
outside a code fence) is rendered a final time and the reply continues in a new block, so one
render never covers more than a few thousand characters (about 10 ms here, where re-rendering a
60,000-character reply took 120 ms); and the interval grows to four times the last render's cost
(capped at ``MAX_RENDER_INTERVAL_MS``), so rendering takes at most about a fifth of the event
loop. The view stays scrolled to the bottom while text arrives unless the user has scrolled up;
scrolling back down re-attaches it.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Sequence

from markdown_it import MarkdownIt
from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from yak.domain import ChatMessage

log = logging.getLogger(__name__)

RENDER_INTERVAL_MS = 50
MAX_RENDER_INTERVAL_MS = 500
# A streaming block longer than this (characters) is split at a paragraph break (see flush()).
SEGMENT_CHARS = 3000
# Near enough to the bottom (pixels) to count as "at the bottom" when the user scrolls back.
_BOTTOM_SLACK_PX = 8
# Display caps: a target longer than this is shortened in the header (full text in the tooltip).
_TARGET_DISPLAY_CHARS = 120

_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])

# The agent ends a reply cut short by Stop with a text block holding just this.
STOPPED_MARK = "[stopped]"
# Keys under which the agent's tools carry what they act on, most specific first.
_TARGET_KEYS = ("path", "file_path", "directory", "dir", "query")


def render_markdown(text: str) -> str:
    """Render the assistant's Markdown to HTML for a ``QTextBrowser``.

    Raw HTML in ``text`` is shown as text, not interpreted; links with unsafe schemes stay text.

    Args:
        text: CommonMark with tables and strikethrough.

    Returns:
        An HTML fragment.
    """
    # A fenced block's last line ends with a newline, which Qt draws as an empty last line.
    return _MARKDOWN.render(text).replace("\n</code></pre>", "</code></pre>")


def settled_length(text: str) -> int:
    """How much of a streaming Markdown text can be rendered on its own for good.

    The cut goes after the last blank line that is outside a fenced code block and not followed
    by an indented line (an indented line may continue a list item or an indented code block).

    Args:
        text: the Markdown received so far.

    Returns:
        A length in characters; 0 when there is no such paragraph break.
    """
    best = 0
    fence: str | None = None  # the opening fence's marker while inside a fenced block
    position = 0
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        position += len(line)
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if indent <= 3 and stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            run = len(stripped) - len(stripped.lstrip(marker[0]))
            if fence is None:
                fence = marker[0] * run
            elif stripped.startswith(fence) and not stripped.strip().lstrip(fence[0]):
                fence = None
            continue
        if fence is not None or line.strip() or index + 1 >= len(lines):
            continue
        following = lines[index + 1]
        if following.strip() and not following.startswith((" ", "\t")):
            best = position
    return best


def tool_target(tool_input: object) -> str:
    """What a stored tool call acted on, for its compact line: the command, the pattern (and
    where it searched), or the path — as the agent shows it while the call runs.

    Args:
        tool_input: the ``input`` of a ``tool_use`` block (normally a dict).

    Returns:
        One line; the compact JSON of the input when no known key is present.
    """
    if not isinstance(tool_input, dict):
        return _shorten(json.dumps(tool_input, ensure_ascii=False))
    if not tool_input:
        return ""
    command = tool_input.get("command")
    if isinstance(command, str) and command.strip():
        return _first_line(command, _TARGET_DISPLAY_CHARS)
    pattern = tool_input.get("pattern")
    path = tool_input.get("path")
    if isinstance(pattern, str) and pattern:
        return f"{pattern} in {path}" if isinstance(path, str) and path else pattern
    for key in _TARGET_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return _first_line(value, _TARGET_DISPLAY_CHARS)
    return _shorten(json.dumps(tool_input, ensure_ascii=False, separators=(",", ":")))


def tool_result_text(block: dict) -> str:
    """The text of a stored ``tool_result`` block (its content is a string or a list of blocks)."""
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def _first_line(text: str, limit: int = 100) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def result_summary(text: str) -> str:
    """A stored tool result's outcome in a few words: its first line up to the first ": " or
    ". " ("Denied by the user: this call was not run…" → "Denied by the user")."""
    line = _first_line(text, 200)
    for separator in (": ", ". "):
        head = line.split(separator, 1)[0]
        if len(head) >= 8:
            line = head
    return _first_line(line)


def _shorten(text: str, limit: int = _TARGET_DISPLAY_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
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

    def sizeHint(self) -> QSize:  # Qt override
        return QSize(super().sizeHint().width(), self.height())

    def _height_for(self, document_height: float) -> int:
        return math.ceil(document_height) + 2 * self.frameWidth()

    def _on_document_size_changed(self, size: object) -> None:
        self.setFixedHeight(self._height_for(size.height()))  # type: ignore[attr-defined]


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
        target = f" {_shorten(self.target)}" if self.target else ""
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


class TranscriptView(QScrollArea):
    """The messages of one session, top to bottom, with the streaming reply at the end.

    Driven by calls: ``show_messages`` for a stored session, then during a turn
    ``add_user_message``, ``append_text`` (buffered), ``start_tool_call`` / ``finish_tool_call``
    and ``end_turn``.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._stream_block: MessageBlock | None = None
        self._stream_text = ""
        self._stream_dirty = False
        self._tool_blocks: dict[str, ToolCallBlock] = {}
        self._follow_bottom = True
        self.render_count = 0  # renders of streaming text (for benchmarks)
        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(RENDER_INTERVAL_MS)
        self._render_timer.timeout.connect(self.flush)
        self._setup_ui()

    def _setup_ui(self) -> None:
        self.setObjectName("transcript")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        body = QWidget(self)
        body.setBackgroundRole(QPalette.ColorRole.Base)
        body.setAutoFillBackground(True)
        self._layout = QVBoxLayout(body)
        self._layout.setContentsMargins(8, 8, 8, 8)
        self._layout.setSpacing(6)
        # Index 0: what an empty transcript says; then the blocks; last, a stretch.
        self.placeholder = QLabel(body)
        self.placeholder.setObjectName("transcript_placeholder")
        self.placeholder.setWordWrap(True)
        self.placeholder.setTextFormat(Qt.TextFormat.PlainText)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.placeholder.setContentsMargins(24, 48, 24, 0)
        self._layout.addWidget(self.placeholder)
        self._layout.addStretch(1)
        self.setWidget(body)
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scroll_value_changed)
        bar.rangeChanged.connect(self._on_scroll_range_changed)

    # -- reading -------------------------------------------------------------------------------

    @property
    def streaming(self) -> bool:
        """An assistant block is open and receiving text."""
        return self._stream_block is not None

    @property
    def following_bottom(self) -> bool:
        """New text scrolls the view down (the user has not scrolled up)."""
        return self._follow_bottom

    def items(self) -> list[QWidget]:
        """The transcript's blocks, top to bottom."""
        return [self._layout.itemAt(i).widget() for i in range(1, self._layout.count() - 1)]

    def set_placeholder(self, text: str) -> None:
        """What the transcript says while it has no messages (not part of ``plain_text()``)."""
        self.placeholder.setText(text)
        self.placeholder.setVisible(not self.items() and bool(text))

    def tool_call(self, tool_use_id: str) -> ToolCallBlock | None:
        """The block of a tool call shown in this transcript, if any."""
        return self._tool_blocks.get(tool_use_id)

    def plain_text(self) -> str:
        """Everything the transcript shows as text, blocks separated by blank lines.

        Buffered streaming text that has not been rendered yet is not included: this is what the
        user sees.
        """
        parts: list[str] = []
        for item in self.items():
            if isinstance(item, MessageBlock):
                parts.append(item.toPlainText())
            elif isinstance(item, ToolCallBlock):
                parts.append(item.summary_text())
            elif isinstance(item, QLabel):
                parts.append(item.text())
        return "\n\n".join(parts)

    # -- driving -------------------------------------------------------------------------------

    def clear(self) -> None:
        """Remove every block (e.g. before showing another session)."""
        self._render_timer.stop()
        self._stream_block = None
        self._stream_text = ""
        self._stream_dirty = False
        self._tool_blocks.clear()
        while self._layout.count() > 2:
            widget = self._layout.takeAt(1).widget()
            if widget is not None:
                widget.deleteLater()
        self._follow_bottom = True
        self.placeholder.setVisible(bool(self.placeholder.text()))

    def show_messages(self, messages: Sequence[ChatMessage]) -> None:
        """Show a stored session: prompts, replies, and each tool call with its result.

        Args:
            messages: the session's messages, oldest first.
        """
        self.clear()
        results = {
            block.get("tool_use_id"): block
            for message in messages
            for block in message.content
            if block.get("type") == "tool_result"
        }
        for message in messages:
            for block in message.content:
                kind = block.get("type")
                if kind == "text" and block.get("text"):
                    if message.role == "assistant" and block["text"] == STOPPED_MARK:
                        self.add_note("Stopped.")
                    elif message.role == "user":
                        self.add_user_message(block["text"])
                    else:
                        self._add(self._new_block("assistant", block["text"]))
                elif kind == "tool_use":
                    tool_block = self.start_tool_call(
                        block.get("id", ""),
                        block.get("name", "tool"),
                        tool_target(block.get("input")),
                    )
                    result = results.get(block.get("id"))
                    if result is None:
                        tool_block.set_outcome(ok=False, summary="no result recorded", output="")
                    else:
                        output = tool_result_text(result)
                        failed = bool(result.get("is_error"))
                        tool_block.set_outcome(
                            ok=not failed,
                            summary=result_summary(output) or ("failed" if failed else "done"),
                            output=output,
                        )
        self._scroll_to_bottom()

    def add_user_message(self, text: str) -> MessageBlock:
        """Append the user's prompt (shown as typed, not as Markdown)."""
        self.close_stream()
        block = MessageBlock("user")
        block.setPlainText(text)
        self._add(block)
        return block

    def append_text(self, delta: str) -> None:
        """Add streamed assistant text; it is rendered within ``RENDER_INTERVAL_MS``.

        Opens a new assistant block after a prompt or a tool call.
        """
        if not delta:
            return
        if self._stream_block is None:
            self._stream_block = MessageBlock("assistant")
            self._stream_text = ""
            self._add(self._stream_block)
        self._stream_text += delta
        self._stream_dirty = True
        if not self._render_timer.isActive():
            self._render_timer.start()

    def flush(self) -> None:
        """Render buffered streaming text now (the render timer's slot).

        When the open block's text passes ``SEGMENT_CHARS``, the part up to the last paragraph
        break outside a code fence is rendered one final time and left as it is; the rest goes on
        in a new block. A render then costs at most a few thousand characters, however long the
        reply grows.
        """
        self._render_timer.stop()
        if self._stream_block is None or not self._stream_dirty:
            return
        started = time.perf_counter()
        split = settled_length(self._stream_text) if len(self._stream_text) > SEGMENT_CHARS else 0
        if split:
            self._stream_block.set_markdown(self._stream_text[:split])
            self._stream_text = self._stream_text[split:]
            self._stream_block = MessageBlock("assistant")
            self._add(self._stream_block)
        self._stream_block.set_markdown(self._stream_text)
        self._stream_dirty = False
        self.render_count += 1
        cost_ms = (time.perf_counter() - started) * 1000
        interval = min(max(RENDER_INTERVAL_MS, math.ceil(cost_ms * 4)), MAX_RENDER_INTERVAL_MS)
        self._render_timer.setInterval(interval)

    def close_stream(self) -> None:
        """Render what was buffered and close the open assistant block, if any."""
        self.flush()
        self._stream_block = None
        self._stream_text = ""
        self._render_timer.setInterval(RENDER_INTERVAL_MS)

    def start_tool_call(self, tool_use_id: str, tool: str, target: str) -> ToolCallBlock:
        """Append a running tool call (closes the open assistant text block)."""
        self.close_stream()
        block = ToolCallBlock(tool_use_id=tool_use_id, tool=tool, target=target)
        self._tool_blocks[tool_use_id] = block
        self._add(block)
        return block

    def finish_tool_call(
        self, tool_use_id: str, *, tool: str, target: str, ok: bool, summary: str, output: str
    ) -> ToolCallBlock:
        """Record a tool call's outcome (appending it if its start was not shown)."""
        block = self._tool_blocks.get(tool_use_id)
        if block is None:
            block = self.start_tool_call(tool_use_id, tool, target)
        block.set_outcome(ok=ok, summary=summary, output=output)
        return block

    def add_note(self, text: str) -> NoteLabel:
        """Append a short italic line (closes the open assistant text block)."""
        self.close_stream()
        note = NoteLabel(text)
        self._add(note)
        return note

    def end_turn(self, note: str | None = None) -> None:
        """Finish the turn: render everything buffered, close the block, add ``note`` if any."""
        self.close_stream()
        if note:
            self.add_note(note)

    # -- internals -----------------------------------------------------------------------------

    def _new_block(self, role: str, text: str) -> MessageBlock:
        block = MessageBlock(role)
        block.set_markdown(text)
        return block

    def _add(self, widget: QWidget) -> None:
        self.placeholder.setVisible(False)
        self._layout.insertWidget(self._layout.count() - 1, widget)

    def _scroll_to_bottom(self) -> None:
        self._follow_bottom = True
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _on_scroll_value_changed(self, value: int) -> None:
        self._follow_bottom = value >= self.verticalScrollBar().maximum() - _BOTTOM_SLACK_PX

    def _on_scroll_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow_bottom:
            self.verticalScrollBar().setValue(maximum)
